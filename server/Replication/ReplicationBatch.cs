using System.Text;

namespace Jackdaw.Server.Replication;

/// <summary>
/// A batch of a source's etag feed, as one binary WebSocket message (little endian; strings are
/// .NET's <see cref="BinaryWriter"/> strings: a 7-bit encoded byte length, then UTF-8):
/// <code>
/// [version: 1 = 1][last etag: 8][count: 4]
/// count × [kind: 1 (1 document, 2 tombstone)][etag: 8][last-modified ticks: 8]
///         [id: string][collection: string, "" for none][change vector: string]
///         [document length: 4][Disk-mode blittable]   (length 0 for a tombstone)
/// </code>
/// <c>last etag</c> is the source's etag the receiver is at once the batch is applied: the last
/// item's, or further when the source's feed has nothing more up to it (etags of versions
/// replaced since, or of nothing replicated), so an empty batch also moves the position.
/// </summary>
public sealed class ReplicationBatch(long lastEtag, IReadOnlyList<ReplicationItem> items)
{
    private const byte Version = 1;
    private const byte DocumentKind = 1;
    private const byte TombstoneKind = 2;

    public long LastEtag { get; } = lastEtag;

    public IReadOnlyList<ReplicationItem> Items { get; } = items;

    public byte[] Serialize()
    {
        using var stream = new MemoryStream();
        using (var writer = new BinaryWriter(stream, Encoding.UTF8, leaveOpen: true))
        {
            writer.Write(Version);
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
            if (version != Version)
            {
                throw new InvalidDataException($"A replication batch of version {version}; this node reads version {Version}.");
            }
            var lastEtag = reader.ReadInt64();
            var count = reader.ReadInt32();
            if (count < 0 || count > message.Length)
            {
                throw new InvalidDataException($"A replication batch claims {count} items in {message.Length} bytes.");
            }
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
                var length = reader.ReadInt32();
                if (length < 0 || length > stream.Length - stream.Position)
                {
                    throw new InvalidDataException($"Item {i} of a replication batch claims a document of {length} bytes.");
                }
                var document = reader.ReadBytes(length);
                items.Add(new ReplicationItem(etag, kind == TombstoneKind, id, collection.Length == 0 ? null : collection, changeVector, ticks, document));
            }
            return new ReplicationBatch(lastEtag, items);
        }
        catch (EndOfStreamException e)
        {
            throw new InvalidDataException("A replication batch ends early.", e);
        }
    }
}
