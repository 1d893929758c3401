using System.Text;
using Jackdaw.Server.Documents;

namespace Jackdaw.Server.Replication;

/// <summary>
/// A batch of a source's etag feed, as one binary WebSocket message (little endian; strings are
/// .NET's <see cref="BinaryWriter"/> strings: a 7-bit encoded byte length, then UTF-8):
/// <code>
/// [version: 1 = 2 or 3][flags: 1 (bit 0: carries every content its items list)][last etag: 8][count: 4]
/// count × [kind: 1 (1 document, 2 tombstone)][etag: 8][last-modified ticks: 8]
///         [id: string][collection: string, "" for none][change vector: string]
///         [document length: 4][Disk-mode blittable]   (length 0 for a tombstone)
///         [attachments: 4] × [name: string][content type: string][sha-256: 32][size: 8]   (0 for a tombstone)
/// [last revision etag: 8][revisions: 4]
/// revisions × [revision etag: 8][last-modified ticks: 8][flags: 4][id: string][collection: string]
///             [change vector: string][document length: 4][Disk-mode blittable]   (0 for a delete revision)
/// version 3 only: [revision tombstones: 4] × [revision etag: 8][removed-at ticks: 8][change vector: string]
/// [contents: 4] × [sha-256: 32][size: 8]
/// </code>
/// then, after the message, each content's bytes as one binary message of its own, in that order
/// (sent in frames of up to 1 MiB, read a frame at a time and staged as an upload is: never held
/// whole). <c>last etag</c> is the source's etag the receiver is at once the batch is applied: the
/// last item's, or further when the source's feed has nothing more up to it (etags of versions
/// replaced since, or of nothing replicated), so an empty batch also moves the position;
/// <c>last revision etag</c> is the same for the source's revisions (their own counter), which
/// revision tombstones (removed revisions' change vectors) share. A batch is written as version 2
/// when it carries no revision tombstone, so a node that reads only version 2 still takes it
/// (until the first removal travels); this node reads both.
/// </summary>
public sealed class ReplicationBatch(long lastEtag, IReadOnlyList<ReplicationItem> items, long lastRevisionEtag = 0,
    IReadOnlyList<ReplicatedRevision>? revisions = null, IReadOnlyList<ReplicatedContent>? contents = null, bool carriesAllContents = false,
    IReadOnlyList<RevisionTombstone>? revisionTombstones = null)
{
    private const byte Version = 3;
    private const byte VersionWithoutRevisionTombstones = 2;
    private const byte DocumentKind = 1;
    private const byte TombstoneKind = 2;
    private const byte AllContentsFlag = 1;

    public long LastEtag { get; } = lastEtag;

    public IReadOnlyList<ReplicationItem> Items { get; } = items;

    /// <summary>The source's revision etag the receiver is at once the batch is applied.</summary>
    public long LastRevisionEtag { get; } = lastRevisionEtag;

    public IReadOnlyList<ReplicatedRevision> Revisions { get; } = revisions ?? [];

    /// <summary>The source's revision tombstones in the batch's revision-etag range (removed revisions' change vectors).</summary>
    public IReadOnlyList<RevisionTombstone> RevisionTombstones { get; } = revisionTombstones ?? [];

    /// <summary>The attachment contents whose bytes follow the batch, each once.</summary>
    public IReadOnlyList<ReplicatedContent> Contents { get; } = contents ?? [];

    /// <summary>The batch carries every content its items and revisions list that the source stores (sent after a <see cref="MissingAttachmentsException"/>).</summary>
    public bool CarriesAllContents { get; } = carriesAllContents;

    public byte[] Serialize()
    {
        using var stream = new MemoryStream();
        using (var writer = new BinaryWriter(stream, Encoding.UTF8, leaveOpen: true))
        {
            writer.Write(RevisionTombstones.Count > 0 ? Version : VersionWithoutRevisionTombstones);
            writer.Write(CarriesAllContents ? AllContentsFlag : (byte)0);
            writer.Write(LastEtag);
            writer.Write(Items.Count);
            foreach (var item in Items)
            {
                writer.Write(item.IsTombstone ? TombstoneKind : DocumentKind);
                writer.Write(item.Etag);
                writer.Write(item.LastModifiedTicks);
                writer.Write(item.Id);
                writer.Write(item.Collection ?? "");
                writer.Write(item.ChangeVector);
                writer.Write(item.Document.Length);
                writer.Write(item.Document);
                var attachments = item.Attachments ?? [];
                writer.Write(attachments.Count);
                foreach (var attachment in attachments)
                {
                    writer.Write(attachment.Name);
                    writer.Write(attachment.ContentType);
                    writer.Write(Convert.FromBase64String(attachment.Hash));
                    writer.Write(attachment.Size);
                }
            }
            writer.Write(LastRevisionEtag);
            writer.Write(Revisions.Count);
            foreach (var revision in Revisions)
            {
                writer.Write(revision.Etag);
                writer.Write(revision.LastModifiedTicks);
                writer.Write((int)revision.Flags);
                writer.Write(revision.Id);
                writer.Write(revision.Collection ?? "");
                writer.Write(revision.ChangeVector);
                writer.Write(revision.Document.Length);
                writer.Write(revision.Document);
            }
            if (RevisionTombstones.Count > 0)
            {
                writer.Write(RevisionTombstones.Count);
                foreach (var tombstone in RevisionTombstones)
                {
                    writer.Write(tombstone.Etag);
                    writer.Write(tombstone.RemovedAtTicks);
                    writer.Write(tombstone.ChangeVector);
                }
            }
            writer.Write(Contents.Count);
            foreach (var content in Contents)
            {
                writer.Write(content.Hash);
                writer.Write(content.Size);
            }
        }
        return stream.ToArray();
    }

    /// <exception cref="InvalidDataException">The message is not a batch of this version.</exception>
    public static ReplicationBatch Deserialize(ReadOnlyMemory<byte> message)
    {
        try
        {
            using var stream = new MemoryStream(message.ToArray(), writable: false);
            using var reader = new BinaryReader(stream, Encoding.UTF8);
            var version = reader.ReadByte();
            if (version is not (Version or VersionWithoutRevisionTombstones))
            {
                throw new InvalidDataException($"A replication batch of version {version}; this node reads versions {VersionWithoutRevisionTombstones} and {Version}.");
            }
            var flags = reader.ReadByte();
            var lastEtag = reader.ReadInt64();
            var count = ReadCount(reader, message.Length, "items");
            var items = new List<ReplicationItem>(count);
            for (var i = 0; i < count; i++)
            {
                var kind = reader.ReadByte();
                if (kind is not (DocumentKind or TombstoneKind))
                {
                    throw new InvalidDataException($"Item {i} of a replication batch has kind {kind}.");
                }
                var etag = reader.ReadInt64();
                var ticks = reader.ReadInt64();
                var id = reader.ReadString();
                var collection = reader.ReadString();
                var changeVector = reader.ReadString();
                var document = ReadBytes(reader, stream, $"Item {i}");
                var attachmentCount = ReadCount(reader, message.Length, $"attachments of item {i}");
                var attachments = new List<AttachmentInfo>(attachmentCount);
                for (var a = 0; a < attachmentCount; a++)
                {
                    var name = reader.ReadString();
                    var contentType = reader.ReadString();
                    var hash = reader.ReadBytes(AttachmentEntry.HashSize);
                    if (hash.Length != AttachmentEntry.HashSize)
                    {
                        throw new EndOfStreamException();
                    }
                    attachments.Add(new AttachmentInfo(name, Convert.ToBase64String(hash), contentType, reader.ReadInt64()));
                }
                items.Add(new ReplicationItem(etag, kind == TombstoneKind, id, collection.Length == 0 ? null : collection, changeVector, ticks, document,
                    kind == TombstoneKind ? null : attachments));
            }
            var lastRevisionEtag = reader.ReadInt64();
            count = ReadCount(reader, message.Length, "revisions");
            var revisions = new List<ReplicatedRevision>(count);
            for (var i = 0; i < count; i++)
            {
                var etag = reader.ReadInt64();
                var ticks = reader.ReadInt64();
                var revisionFlags = (DocumentFlags)reader.ReadInt32();
                var id = reader.ReadString();
                var collection = reader.ReadString();
                var changeVector = reader.ReadString();
                var document = ReadBytes(reader, stream, $"Revision {i}");
                revisions.Add(new ReplicatedRevision(etag, id, collection.Length == 0 ? null : collection, changeVector, ticks, revisionFlags, document));
            }
            var tombstones = new List<RevisionTombstone>();
            if (version == Version)
            {
                count = ReadCount(reader, message.Length, "revision tombstones");
                for (var i = 0; i < count; i++)
                {
                    var etag = reader.ReadInt64();
                    var ticks = reader.ReadInt64();
                    tombstones.Add(new RevisionTombstone(etag, ticks, reader.ReadString()));
                }
            }
            count = ReadCount(reader, message.Length, "contents");
            var contents = new List<ReplicatedContent>(count);
            for (var i = 0; i < count; i++)
            {
                var hash = reader.ReadBytes(AttachmentEntry.HashSize);
                if (hash.Length != AttachmentEntry.HashSize)
                {
                    throw new EndOfStreamException();
                }
                var size = reader.ReadInt64();
                if (size < 0)
                {
                    throw new InvalidDataException($"Content {i} of a replication batch claims {size} bytes.");
                }
                contents.Add(new ReplicatedContent(hash, size));
            }
            if (stream.Position != stream.Length)
            {
                throw new InvalidDataException($"A replication batch has {stream.Length - stream.Position} bytes after its end.");
            }
            return new ReplicationBatch(lastEtag, items, lastRevisionEtag, revisions, contents, (flags & AllContentsFlag) != 0, tombstones);
        }
        catch (EndOfStreamException e)
        {
            throw new InvalidDataException("A replication batch ends early.", e);
        }
    }

    private static int ReadCount(BinaryReader reader, int messageLength, string what)
    {
        var count = reader.ReadInt32();
        if (count < 0 || count > messageLength)
        {
            throw new InvalidDataException($"A replication batch claims {count} {what} in {messageLength} bytes.");
        }
        return count;
    }

    private static byte[] ReadBytes(BinaryReader reader, MemoryStream stream, string what)
    {
        var length = reader.ReadInt32();
        if (length < 0 || length > stream.Length - stream.Position)
        {
            throw new InvalidDataException($"{what} of a replication batch claims a document of {length} bytes.");
        }
        return reader.ReadBytes(length);
    }
}
