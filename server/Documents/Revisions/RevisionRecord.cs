using System.Buffers.Binary;
using System.Text;

namespace Jackdaw.Server.Documents;

/// <summary>Why a revision was stored (kept in its record; RavenDB shows none of it but the delete flag).</summary>
public enum RevisionOrigin : byte
{
    /// <summary>A put of a document that existed: the new version.</summary>
    Put = 0,

    /// <summary>The put that created the document: nothing of it is older (a revert to a time before it deletes the document).</summary>
    Created = 1,

    /// <summary>The version a document had before its first revision (it existed before revisions were configured).</summary>
    PreviousVersion = 2,

    /// <summary>ForceRevisionCreation.</summary>
    Forced = 3,

    /// <summary>The delete of the document (flag <c>DeleteRevision</c>; no body).</summary>
    Delete = 4,
}

/// <summary>
/// A view of one stored revision: the value in the <c>Revisions</c> tree.
/// <code>
/// offset  size  field
///  0      8     revision etag (int64 LE; the revisions' own counter, also in the key)
///  8      8     last modified, UTC ticks (int64 LE): the version's own @last-modified
/// 16      4     DocumentFlags of the revision as RavenDB shows them (Revision, DeleteRevision, HasRevisions, ...)
/// 20      1     RevisionOrigin
/// 21      1     bit 0: the revision holds one reference on the content of each attachment its
///               document lists (AttachmentContents); other bits 0. Clear for a revision that lists
///               none, one of schema version 3 (which held none), an imported one whose contents
///               were not all stored
/// 22      2     id length in UTF-8 bytes (uint16), the casing first written
/// 24      2     collection length in UTF-8 bytes (uint16), 0 = no collection
/// 26      2     change vector length (uint16, ASCII)
/// 28      4     document length (int32); 0 for a delete revision
/// 32      ...   id, collection, change vector, then the document (Disk-mode blittable)
/// </code>
/// The document is stored exactly as the version was stored (its own <c>@metadata</c>, with
/// <c>@flags</c> <c>HasRevisions</c>), so storing a revision copies bytes and builds nothing;
/// readers show it as RavenDB shows a revision (<c>@flags: "HasRevisions, Revision"</c>, the
/// record's change vector and time) when they write it out.
/// </summary>
public readonly ref struct RevisionRecord
{
    public const int HeaderSize = 32;

    private const byte HoldsReferencesBit = 1;

    public RevisionRecord(ReadOnlySpan<byte> value)
    {
        if (value.Length < HeaderSize)
        {
            ThrowCorrupt(value.Length);
        }
        var idLength = BinaryPrimitives.ReadUInt16LittleEndian(value[22..]);
        var collectionLength = BinaryPrimitives.ReadUInt16LittleEndian(value[24..]);
        var changeVectorLength = BinaryPrimitives.ReadUInt16LittleEndian(value[26..]);
        var documentLength = BinaryPrimitives.ReadInt32LittleEndian(value[28..]);
        if (documentLength < 0 || (long)HeaderSize + idLength + collectionLength + changeVectorLength + documentLength != value.Length)
        {
            ThrowCorrupt(value.Length);
        }
        Etag = BinaryPrimitives.ReadInt64LittleEndian(value);
        LastModifiedTicks = BinaryPrimitives.ReadInt64LittleEndian(value[8..]);
        Flags = (DocumentFlags)BinaryPrimitives.ReadInt32LittleEndian(value[16..]);
        Origin = (RevisionOrigin)value[20];
        HoldsAttachmentReferences = (value[21] & HoldsReferencesBit) != 0;
        var position = HeaderSize;
        IdUtf8 = value.Slice(position, idLength);
        position += idLength;
        CollectionUtf8 = value.Slice(position, collectionLength);
        position += collectionLength;
        ChangeVectorUtf8 = value.Slice(position, changeVectorLength);
        position += changeVectorLength;
        Document = value.Slice(position, documentLength);
    }

    /// <summary>The revision's etag (the revisions' own counter: not a document etag).</summary>
    public long Etag { get; }

    public long LastModifiedTicks { get; }

    public DateTime LastModified => new(LastModifiedTicks, DateTimeKind.Utc);

    public DocumentFlags Flags { get; }

    public RevisionOrigin Origin { get; }

    public bool IsDeleteRevision => (Flags & DocumentFlags.DeleteRevision) != 0;

    /// <summary>
    /// Whether the revision holds a reference on the content of each attachment its document's
    /// <c>@metadata.@attachments</c> lists: those contents are stored while it exists, and its
    /// removal releases them.
    /// </summary>
    public bool HoldsAttachmentReferences { get; }

    public ReadOnlySpan<byte> IdUtf8 { get; }

    public ReadOnlySpan<byte> CollectionUtf8 { get; }

    public ReadOnlySpan<byte> ChangeVectorUtf8 { get; }

    /// <summary>The version's document as it was stored (empty for a delete revision).</summary>
    public ReadOnlySpan<byte> Document { get; }

    public string Id => Encoding.UTF8.GetString(IdUtf8);

    public string? Collection => CollectionUtf8.IsEmpty ? null : Encoding.UTF8.GetString(CollectionUtf8);

    public string ChangeVector => Encoding.UTF8.GetString(ChangeVectorUtf8);

    public static int SizeOf(int id, int collection, int changeVector, int document) => HeaderSize + id + collection + changeVector + document;

    /// <summary>Writes a record into <paramref name="destination"/>, exactly <see cref="SizeOf"/> long.</summary>
    public static void Write(Span<byte> destination, long etag, long lastModifiedTicks, DocumentFlags flags, RevisionOrigin origin, bool holdsAttachmentReferences,
        ReadOnlySpan<byte> id, ReadOnlySpan<byte> collection, ReadOnlySpan<byte> changeVector, ReadOnlySpan<byte> document)
    {
        BinaryPrimitives.WriteInt64LittleEndian(destination, etag);
        BinaryPrimitives.WriteInt64LittleEndian(destination[8..], lastModifiedTicks);
        BinaryPrimitives.WriteInt32LittleEndian(destination[16..], (int)flags);
        destination[20] = (byte)origin;
        destination[21] = holdsAttachmentReferences ? HoldsReferencesBit : (byte)0;
        BinaryPrimitives.WriteUInt16LittleEndian(destination[22..], checked((ushort)id.Length));
        BinaryPrimitives.WriteUInt16LittleEndian(destination[24..], checked((ushort)collection.Length));
        BinaryPrimitives.WriteUInt16LittleEndian(destination[26..], checked((ushort)changeVector.Length));
        BinaryPrimitives.WriteInt32LittleEndian(destination[28..], document.Length);
        var position = HeaderSize;
        id.CopyTo(destination[position..]);
        position += id.Length;
        collection.CopyTo(destination[position..]);
        position += collection.Length;
        changeVector.CopyTo(destination[position..]);
        position += changeVector.Length;
        document.CopyTo(destination[position..]);
    }

    private static void ThrowCorrupt(int length) =>
        throw new InvalidDataException($"A stored revision record of {length} bytes is corrupt: its header does not match its length.");
}
