using System.Buffers.Binary;
using System.Text;

namespace Jackdaw.Server.Documents;

/// <summary>
/// A view of a tombstone: the value in the <c>Tombstones</c> tree, keyed by the deletion's etag.
/// <code>
/// offset  size  field
///  0      8     deleted at, UTC ticks (int64, little endian)
///  8      2     id length in UTF-8 bytes (uint16)
/// 10      2     collection length in UTF-8 bytes (uint16), 0 = no collection
/// 12      ...   id (the casing first written), then the collection as written
/// then, from schema version 5:
///         2     change vector length in bytes (uint16)
///         ...   the change vector of the deletion, ASCII
/// </code>
/// A tombstone written before version 5 has no change vector: its change vector is the
/// single-node one of its etag (<see cref="ChangeVectorOr"/>).
/// </summary>
public readonly ref struct TombstoneRecord
{
    public const int HeaderSize = 12;

    public TombstoneRecord(long etag, ReadOnlySpan<byte> value)
    {
        if (value.Length < HeaderSize)
        {
            ThrowCorrupt(etag, value.Length);
        }
        var idLength = BinaryPrimitives.ReadUInt16LittleEndian(value[8..]);
        var collectionLength = BinaryPrimitives.ReadUInt16LittleEndian(value[10..]);
        var end = HeaderSize + idLength + collectionLength;
        var changeVectorLength = 0;
        if (value.Length > end)
        {
            if (value.Length < end + 2)
            {
                ThrowCorrupt(etag, value.Length);
            }
            changeVectorLength = BinaryPrimitives.ReadUInt16LittleEndian(value[end..]);
            if (end + 2 + changeVectorLength != value.Length)
            {
                ThrowCorrupt(etag, value.Length);
            }
        }
        else if (end != value.Length)
        {
            ThrowCorrupt(etag, value.Length);
        }
        Etag = etag;
        DeletedAtTicks = BinaryPrimitives.ReadInt64LittleEndian(value);
        IdUtf8 = value.Slice(HeaderSize, idLength);
        CollectionUtf8 = value.Slice(HeaderSize + idLength, collectionLength);
        ChangeVectorUtf8 = changeVectorLength == 0 ? default : value.Slice(end + 2, changeVectorLength);
    }

    /// <summary>The etag the deletion took.</summary>
    public long Etag { get; }

    public long DeletedAtTicks { get; }

    /// <summary>The deleted document's id, as first written, UTF-8.</summary>
    public ReadOnlySpan<byte> IdUtf8 { get; }

    /// <summary>The deleted document's collection, UTF-8; empty when it had none.</summary>
    public ReadOnlySpan<byte> CollectionUtf8 { get; }

    /// <summary>The deletion's change vector, ASCII; empty for a tombstone written before schema version 5.</summary>
    public ReadOnlySpan<byte> ChangeVectorUtf8 { get; }

    public string Id => Encoding.UTF8.GetString(IdUtf8);

    /// <summary>The deletion's change vector; for an older tombstone, the single-node one of its etag in <paramref name="databaseId"/>.</summary>
    public string ChangeVectorOr(string databaseId) =>
        ChangeVectorUtf8.IsEmpty ? ChangeVectors.Format(ChangeVectors.DefaultTag, Etag, databaseId) : Encoding.ASCII.GetString(ChangeVectorUtf8);

    public string? Collection => CollectionUtf8.IsEmpty ? null : Encoding.UTF8.GetString(CollectionUtf8);

    /// <summary>Writes a tombstone value into <paramref name="buffer"/> (grown when short); returns its length.</summary>
    internal static int Write(long ticks, ReadOnlySpan<byte> id, ReadOnlySpan<byte> collection, string changeVector, ref byte[] buffer)
    {
        var size = HeaderSize + id.Length + collection.Length + 2 + changeVector.Length;
        if (buffer.Length < size)
        {
            buffer = new byte[Math.Max(size, buffer.Length * 2)];
        }
        var span = buffer.AsSpan();
        BinaryPrimitives.WriteInt64LittleEndian(span, ticks);
        BinaryPrimitives.WriteUInt16LittleEndian(span[8..], checked((ushort)id.Length));
        BinaryPrimitives.WriteUInt16LittleEndian(span[10..], checked((ushort)collection.Length));
        id.CopyTo(span[HeaderSize..]);
        collection.CopyTo(span[(HeaderSize + id.Length)..]);
        var end = HeaderSize + id.Length + collection.Length;
        BinaryPrimitives.WriteUInt16LittleEndian(span[end..], checked((ushort)changeVector.Length));
        Encoding.ASCII.GetBytes(changeVector, span[(end + 2)..]);
        return size;
    }

    private static void ThrowCorrupt(long etag, int length) =>
        throw new InvalidDataException($"The tombstone at etag {etag} ({length} bytes) is corrupt: its header does not match its length.");
}
