using System.Buffers;

namespace Jackdaw.Server.Indexing.MapReduce;

/// <summary>
/// One reduce key as a batch sees it: loaded from the <c>ReduceKeys</c> tree on first touch,
/// changed by the batch's documents, reduced and written back at the end of the batch
/// (<see cref="ReduceTable"/>). A key with few entries keeps them packed in its own record
/// (<see cref="Packed"/>); past <see cref="ReduceTable.MaxPacked"/> they move to the entries tree,
/// under leaves and branches of partial aggregates (<see cref="IsTree"/>, <see cref="Height"/>).
/// <code>
/// record   mode (1: 0 packed, 1 tree), height (1), count (4), key (block), result (block; empty
///          when the key has none), then for a packed key each entry: id (8), entry (block)
/// </code>
/// </summary>
internal sealed class ReduceKey
{
    public ReduceKey(byte[] id, byte[] key)
    {
        Id = id;
        Key = key;
        Packed = new List<(long, byte[])>();
    }

    /// <summary>The key's id (<see cref="ReduceEncoding.KeyId"/>).</summary>
    public byte[] Id { get; }

    /// <summary>The canonical key JSON.</summary>
    public byte[] Key { get; }

    /// <summary>Whether the key had a record before this batch.</summary>
    public bool Stored { get; set; }

    public bool IsTree { get; set; }

    /// <summary>Levels of the tree of a big key: 1 when its one leaf is its root.</summary>
    public int Height { get; set; }

    /// <summary>The key's entries.</summary>
    public int Count { get; set; }

    /// <summary>The entries of a packed key, by id (null for a tree).</summary>
    public List<(long Id, byte[] Entry)>? Packed { get; set; }

    /// <summary>The results as last reduced (an encoded list), null when the key has none (no entries, or its reduce failed).</summary>
    public byte[]? Result { get; set; }

    /// <summary>Whether an entry changed in this batch: the key is reduced at its end.</summary>
    public bool Changed { get; set; }

    /// <summary>The tree nodes to reduce again, by level and first id.</summary>
    public SortedSet<(int Level, long Start)> DirtyNodes { get; } = new();

    public static ReduceKey Read(byte[] id, ReadOnlySpan<byte> record)
    {
        var at = 2;
        var count = ReduceEncoding.ReadInt32(record, ref at);
        var key = new ReduceKey(id, ReduceEncoding.ReadBlock(record, ref at).ToArray())
        {
            Stored = true,
            IsTree = record[0] == 1,
            Height = record[1],
            Count = count,
        };
        var result = ReduceEncoding.ReadBlock(record, ref at);
        key.Result = result.Length == 0 ? null : result.ToArray();
        if (key.IsTree)
        {
            key.Packed = null;
            return key;
        }
        for (var i = 0; i < count; i++)
        {
            var entryId = ReduceEncoding.ReadInt64(record, ref at);
            key.Packed!.Add((entryId, ReduceEncoding.ReadBlock(record, ref at).ToArray()));
        }
        return key;
    }

    public byte[] Write()
    {
        var writer = new ArrayBufferWriter<byte>(64 + Key.Length + (Result?.Length ?? 0));
        var head = writer.GetSpan(2);
        head[0] = IsTree ? (byte)1 : (byte)0;
        head[1] = (byte)Height;
        writer.Advance(2);
        ReduceEncoding.WriteInt32(writer, Count);
        ReduceEncoding.WriteBlock(writer, Key);
        ReduceEncoding.WriteBlock(writer, Result ?? []);
        if (!IsTree)
        {
            foreach (var (entryId, entry) in Packed!)
            {
                ReduceEncoding.WriteInt64(writer, entryId);
                ReduceEncoding.WriteBlock(writer, entry);
            }
        }
        return writer.WrittenSpan.ToArray();
    }

    /// <summary>The index of entry <paramref name="entryId"/> among the packed ones, or its complement where it would go.</summary>
    public int FindPacked(long entryId)
    {
        int low = 0, high = Packed!.Count - 1;
        while (low <= high)
        {
            var middle = (low + high) >>> 1;
            var at = Packed[middle].Id;
            if (at == entryId)
            {
                return middle;
            }
            if (at < entryId)
            {
                low = middle + 1;
            }
            else
            {
                high = middle - 1;
            }
        }
        return ~low;
    }
}
