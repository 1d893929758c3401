using System.Buffers;
using System.Buffers.Binary;
using System.IO.Hashing;

namespace Jackdaw.Server.Indexing.MapReduce;

/// <summary>
/// The byte layouts of the reduce store's keys and values (big-endian numbers, so keys sort by
/// them):
/// <code>
/// key id             XxHash128 of the canonical key JSON (16 bytes)
/// entry key          key id, entry id (8)                          → the entry's JSON
/// node key           key id, level (1), first entry or child id (8) → count (4), flags (1), aggregate (list)
/// list               count (4), then per item its length (4) and bytes
/// </code>
/// </summary>
internal static class ReduceEncoding
{
    public const int KeyIdLength = 16;
    public const int EntryKeyLength = KeyIdLength + 8;
    public const int NodeKeyLength = KeyIdLength + 1 + 8;

    public static byte[] KeyId(ReadOnlySpan<byte> canonicalKey)
    {
        var id = new byte[KeyIdLength];
        XxHash128.Hash(canonicalKey, id);
        return id;
    }

    public static ulong EntryHash(ReadOnlySpan<byte> entry) => XxHash64.HashToUInt64(entry);

    public static byte[] EntryKey(ReadOnlySpan<byte> keyId, long entryId)
    {
        var key = new byte[EntryKeyLength];
        keyId.CopyTo(key);
        BinaryPrimitives.WriteInt64BigEndian(key.AsSpan(KeyIdLength), entryId);
        return key;
    }

    public static long EntryIdOf(ReadOnlySpan<byte> entryKey) => BinaryPrimitives.ReadInt64BigEndian(entryKey[KeyIdLength..]);

    public static byte[] NodeKey(ReadOnlySpan<byte> keyId, int level, long start)
    {
        var key = new byte[NodeKeyLength];
        keyId.CopyTo(key);
        key[KeyIdLength] = (byte)level;
        BinaryPrimitives.WriteInt64BigEndian(key.AsSpan(KeyIdLength + 1), start);
        return key;
    }

    public static long NodeStartOf(ReadOnlySpan<byte> nodeKey) => BinaryPrimitives.ReadInt64BigEndian(nodeKey[(KeyIdLength + 1)..]);

    /// <summary>A list of byte strings (aggregates, results).</summary>
    public static byte[] EncodeList(IReadOnlyList<byte[]> items)
    {
        var length = 4;
        foreach (var item in items)
        {
            length += 4 + item.Length;
        }
        var bytes = new byte[length];
        BinaryPrimitives.WriteInt32BigEndian(bytes, items.Count);
        var at = 4;
        foreach (var item in items)
        {
            BinaryPrimitives.WriteInt32BigEndian(bytes.AsSpan(at), item.Length);
            item.CopyTo(bytes, at + 4);
            at += 4 + item.Length;
        }
        return bytes;
    }

    /// <summary>Appends the items of an encoded list to <paramref name="items"/> (copies).</summary>
    public static void DecodeList(ReadOnlySpan<byte> list, List<byte[]> items)
    {
        if (list.Length < 4)
        {
            return;
        }
        var count = BinaryPrimitives.ReadInt32BigEndian(list);
        var at = 4;
        for (var i = 0; i < count; i++)
        {
            var length = BinaryPrimitives.ReadInt32BigEndian(list[at..]);
            items.Add(list.Slice(at + 4, length).ToArray());
            at += 4 + length;
        }
    }

    /// <summary>A node's value: its count of children (entries for a leaf), whether its reduce failed, and its aggregate.</summary>
    public static byte[] EncodeNode(int count, bool failed, ReadOnlySpan<byte> aggregate)
    {
        var bytes = new byte[5 + aggregate.Length];
        BinaryPrimitives.WriteInt32BigEndian(bytes, count);
        bytes[4] = failed ? (byte)1 : (byte)0;
        aggregate.CopyTo(bytes.AsSpan(5));
        return bytes;
    }

    public static int NodeCount(ReadOnlySpan<byte> node) => BinaryPrimitives.ReadInt32BigEndian(node);

    public static bool NodeFailed(ReadOnlySpan<byte> node) => node[4] != 0;

    public static ReadOnlySpan<byte> NodeAggregate(ReadOnlySpan<byte> node) => node[5..];

    /// <summary>Writes a 32-bit length and the bytes.</summary>
    public static void WriteBlock(IBufferWriter<byte> writer, ReadOnlySpan<byte> bytes)
    {
        BinaryPrimitives.WriteInt32BigEndian(writer.GetSpan(4), bytes.Length);
        writer.Advance(4);
        writer.Write(bytes);
    }

    public static void WriteInt64(IBufferWriter<byte> writer, long value)
    {
        BinaryPrimitives.WriteInt64BigEndian(writer.GetSpan(8), value);
        writer.Advance(8);
    }

    public static void WriteInt32(IBufferWriter<byte> writer, int value)
    {
        BinaryPrimitives.WriteInt32BigEndian(writer.GetSpan(4), value);
        writer.Advance(4);
    }

    /// <summary>Reads what <see cref="WriteBlock"/> wrote at <paramref name="at"/>, moving it on.</summary>
    public static ReadOnlySpan<byte> ReadBlock(ReadOnlySpan<byte> source, ref int at)
    {
        var length = BinaryPrimitives.ReadInt32BigEndian(source[at..]);
        var block = source.Slice(at + 4, length);
        at += 4 + length;
        return block;
    }

    public static long ReadInt64(ReadOnlySpan<byte> source, ref int at)
    {
        var value = BinaryPrimitives.ReadInt64BigEndian(source[at..]);
        at += 8;
        return value;
    }

    public static int ReadInt32(ReadOnlySpan<byte> source, ref int at)
    {
        var value = BinaryPrimitives.ReadInt32BigEndian(source[at..]);
        at += 4;
        return value;
    }
}
