using System.Buffers.Binary;
using System.Runtime.InteropServices;
using System.Text;
using Jackdaw.Storage.Engine;

namespace Jackdaw.Server.Documents;

/// <summary>
/// The value stored for a document in the <c>Docs</c> tree, keyed by the lowercased id.
/// <code>
/// offset  size  field
///  0      8     etag (int64, little endian)
///  8      8     last modified, UTC ticks (int64, little endian)
/// 16      2     id length in UTF-8 bytes (uint16), the casing first written
/// 18      2     collection length in UTF-8 bytes (uint16), 0 = no collection
/// 20      4     blittable length (int32)
/// 24      ...   id bytes, collection bytes, then the blittable document
/// </code>
/// The blittable already carries the stamped <c>@metadata</c>, so a GET writes it as it is.
/// </summary>
[StructLayout(LayoutKind.Explicit, Size = Size)]
internal struct DocumentRecordHeader
{
    public const int Size = 24;

    [FieldOffset(0)] public long Etag;
    [FieldOffset(8)] public long LastModifiedTicks;
    [FieldOffset(16)] public ushort IdLength;
    [FieldOffset(18)] public ushort CollectionLength;
    [FieldOffset(20)] public int DocumentLength;
}

/// <summary>A view of a stored document record (see <see cref="DocumentRecordHeader"/>).</summary>
public readonly ref struct DocumentRecord
{
    private readonly ReadOnlySpan<byte> _record;

    public DocumentRecord(ReadOnlySpan<byte> record)
    {
        if (record.Length < DocumentRecordHeader.Size)
        {
            ThrowCorrupt(record.Length);
        }
        _record = record;
        var header = MemoryMarshal.Read<DocumentRecordHeader>(record);
        if (!BitConverter.IsLittleEndian)
        {
            throw new PlatformNotSupportedException("Document records are little endian.");
        }
        var expected = (long)DocumentRecordHeader.Size + header.IdLength + header.CollectionLength + header.DocumentLength;
        if (header.DocumentLength < 0 || expected != record.Length)
        {
            ThrowCorrupt(record.Length);
        }
        Etag = header.Etag;
        LastModifiedTicks = header.LastModifiedTicks;
        IdUtf8 = record.Slice(DocumentRecordHeader.Size, header.IdLength);
        CollectionUtf8 = record.Slice(DocumentRecordHeader.Size + header.IdLength, header.CollectionLength);
        Document = record[(DocumentRecordHeader.Size + header.IdLength + header.CollectionLength)..];
    }

    public long Etag { get; }

    public long LastModifiedTicks { get; }

    /// <summary>The id as first written (original casing), UTF-8.</summary>
    public ReadOnlySpan<byte> IdUtf8 { get; }

    /// <summary>The collection name as given in <c>@metadata.@collection</c>, UTF-8; empty when none.</summary>
    public ReadOnlySpan<byte> CollectionUtf8 { get; }

    /// <summary>The blittable document, metadata stamped.</summary>
    public ReadOnlySpan<byte> Document { get; }

    public string Id => Encoding.UTF8.GetString(IdUtf8);

    /// <summary>
    /// The version's change vector, as stamped in its <c>@metadata</c>; for a document without one
    /// (never written so), the single-node change vector of its etag in <paramref name="databaseId"/>.
    /// </summary>
    public string ChangeVectorOr(string databaseId) =>
        ChangeVectors.Of(Document) ?? ChangeVectors.Format(ChangeVectors.DefaultTag, Etag, databaseId);

    public static int SizeOf(int idBytes, int collectionBytes, int documentBytes) =>
        DocumentRecordHeader.Size + idBytes + collectionBytes + documentBytes;

    /// <summary>Writes a record into <paramref name="destination"/>, which is exactly <see cref="SizeOf"/> long.</summary>
    public static void Write(Span<byte> destination, long etag, long lastModifiedTicks, ReadOnlySpan<byte> id, ReadOnlySpan<byte> collection, ReadOnlySpan<byte> document)
    {
        var header = new DocumentRecordHeader
        {
            Etag = etag,
            LastModifiedTicks = lastModifiedTicks,
            IdLength = checked((ushort)id.Length),
            CollectionLength = checked((ushort)collection.Length),
            DocumentLength = document.Length,
        };
        MemoryMarshal.Write(destination, in header);
        id.CopyTo(destination[DocumentRecordHeader.Size..]);
        collection.CopyTo(destination[(DocumentRecordHeader.Size + id.Length)..]);
        document.CopyTo(destination[(DocumentRecordHeader.Size + id.Length + collection.Length)..]);
    }

    private static void ThrowCorrupt(int length) =>
        throw new InvalidDataException($"A stored document record of {length} bytes is corrupt: its header does not match its length.");
}

/// <summary>Keys of the secondary trees: etags big endian so that byte order is etag order.</summary>
internal static class StorageKeys
{
    public const int EtagSize = sizeof(long);

    /// <summary>The longest collection name, in UTF-8 bytes.</summary>
    public const int MaxCollectionBytes = 255;

    public static void WriteEtag(Span<byte> destination, long etag) => BinaryPrimitives.WriteInt64BigEndian(destination, etag);

    public static long ReadEtag(ReadOnlySpan<byte> source) => BinaryPrimitives.ReadInt64BigEndian(source);

    /// <summary>
    /// <c>[length: 1][lowercased collection name][etag: 8, big endian]</c>. The length prefix makes
    /// <c>[length][name]</c> a prefix that no other collection's key starts with.
    /// </summary>
    public static int WriteCollectionEtag(Span<byte> destination, ReadOnlySpan<byte> lowerCollection, long etag)
    {
        destination[0] = checked((byte)lowerCollection.Length);
        lowerCollection.CopyTo(destination[1..]);
        WriteEtag(destination[(1 + lowerCollection.Length)..], etag);
        return 1 + lowerCollection.Length + EtagSize;
    }

    /// <summary>
    /// Positions an iterator at the first entry after <paramref name="afterEtag"/>: of an etag-keyed
    /// tree, or (when <paramref name="byCollection"/>) of one collection's range of a
    /// <c>[length][collection][etag]</c>-keyed tree. The feeds start here.
    /// </summary>
    public static bool SeekAfter(TreeIterator iterator, ReadOnlySpan<byte> lowerCollection, long afterEtag, bool byCollection)
    {
        Span<byte> first = stackalloc byte[1 + MaxCollectionBytes + EtagSize];
        int length;
        if (byCollection)
        {
            length = WriteCollectionEtag(first, lowerCollection, afterEtag + 1);
        }
        else
        {
            WriteEtag(first, afterEtag + 1);
            length = EtagSize;
        }
        return iterator.Seek(first[..length]);
    }

    /// <summary>Whether a <c>[length][collection][etag]</c> key belongs to <paramref name="lowerCollection"/>.</summary>
    public static bool IsCollectionEtagKey(ReadOnlySpan<byte> key, ReadOnlySpan<byte> lowerCollection) =>
        key.Length == 1 + lowerCollection.Length + EtagSize && key[0] == lowerCollection.Length && key.Slice(1, lowerCollection.Length).SequenceEqual(lowerCollection);

    /// <summary>The lowercase UTF-8 form of a collection name, used for case-insensitive keys.</summary>
    public static byte[] LowerCollection(string collection) => Encoding.UTF8.GetBytes(collection.ToLowerInvariant());
}
