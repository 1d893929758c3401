using System.Buffers;
using System.Runtime.CompilerServices;

namespace Jackdaw.Storage.Blittable;

/// <summary>
/// Smaz-style coder for short text with a dictionary trained on the corpus
/// (tools/train-blittable-dictionary.cs). Encoded bytes:
/// <code>
///   0x00-0x7F        the ASCII byte itself
///   0x80-0xEF        dictionary entry 0..111 (the most used ones)
///   0xF0-0xFE  lo    dictionary entry 112 + ((b - 0xF0) &lt;&lt; 8 | lo)
///   0xFF       b     the byte b verbatim (non-ASCII)
/// </code>
/// The encoder picks the cheapest parse (dynamic programming over the string), so it never does
/// worse than one byte per ASCII character; callers keep the raw string unless this is smaller.
/// </summary>
[System.Runtime.CompilerServices.SkipLocalsInit]
internal static partial class ShortStringCodec
{
    public const int OneByteCodes = 112;
    public const int MaxInput = 16 * 1024;

    private static readonly byte[][] Entries;
    private static readonly byte[] EntryLengths;

    // All entries back to back, followed by 32 bytes of padding, so the decoder can copy any entry
    // with one 32-byte vector load without reading past the array.
    private static readonly byte[] Blob;
    private static readonly int[] EntryOffsets;
    private const int BlobPadding = 32;

    static ShortStringCodec()
    {
        var list = new List<byte[]>();
        var data = DictionaryData;
        for (var p = 0; p < data.Length;)
        {
            var length = data[p];
            list.Add(data.Slice(p + 1, length).ToArray());
            p += 1 + length;
        }

        Entries = list.ToArray();
        EntryLengths = Array.ConvertAll(Entries, e => (byte)e.Length);
        MaxEntryLength = EntryLengths.Max();
        EntryOffsets = new int[Entries.Length];
        Blob = new byte[Entries.Sum(e => e.Length) + BlobPadding];
        var offset = 0;
        for (var e = 0; e < Entries.Length; e++)
        {
            EntryOffsets[e] = offset;
            Entries[e].CopyTo(Blob, offset);
            offset += Entries[e].Length;
        }

        var nodeEntry = new List<int> { -1 };
        var edges = new Dictionary<int, int>();
        for (var e = 0; e < Entries.Length; e++)
        {
            var node = 0;
            foreach (var b in Entries[e])
            {
                var key = (node << 8) | b;
                if (!edges.TryGetValue(key, out var child))
                {
                    child = nodeEntry.Count;
                    nodeEntry.Add(-1);
                    edges[key] = child;
                }

                node = child;
            }

            nodeEntry[node] = e;
        }

        Cells = BuildDoubleArray(edges, nodeEntry.ToArray());
    }

    // A trie over the entries for the encoder, as a double array with one 8-byte cell per state: the child
    // of state s on byte b is cell t = Base(s) + b when Parent(t) == s. A cell packs
    //   bits  0-21  parent state + 1 (0: the cell is free)
    //   bits 22-43  base of this state's children
    //   bits 44-56  entry that ends at this state + 1 (0: none)
    // so one load per input byte both follows the edge and tells whether an entry ends there.
    private static readonly ulong[] Cells;
    private const int ParentBits = 22;
    private const ulong FieldMask = (1UL << 22) - 1;

    private static ulong[] BuildDoubleArray(Dictionary<int, int> edges, int[] nodeEntry)
    {
        var children = new List<(byte Byte, int Node)>[nodeEntry.Length];
        foreach (var (key, child) in edges)
        {
            (children[key >> 8] ??= new List<(byte, int)>()).Add(((byte)key, child));
        }

        var cells = new List<ulong>(new ulong[256 * 4]);
        var state = new int[nodeEntry.Length];   // trie node -> cell index; the root is cell 0
        var used = new List<bool>(new bool[cells.Count]) { [0] = true };
        var queue = new Queue<int>();
        queue.Enqueue(0);
        var firstFree = 1;
        while (queue.Count > 0)
        {
            var node = queue.Dequeue();
            var list = children[node];
            if (list is null)
            {
                continue;
            }

            // The lowest base whose slots for all the children are free (the root's is 0).
            var minByte = list.Min(c => c.Byte);
            var b = node == 0 ? 0 : Math.Max(1, firstFree - minByte);
            while (true)
            {
                var fits = true;
                foreach (var (c, _) in list)
                {
                    while (b + c >= used.Count)
                    {
                        used.Add(false);
                        cells.Add(0);
                    }

                    if (used[b + c])
                    {
                        fits = false;
                        break;
                    }
                }

                if (fits)
                {
                    break;
                }

                b++;
            }

            var s = state[node];
            cells[s] |= (ulong)(uint)b << ParentBits;
            foreach (var (c, child) in list)
            {
                var t = b + c;
                used[t] = true;
                state[child] = t;
                cells[t] |= (ulong)(uint)(s + 1) | ((ulong)(uint)(nodeEntry[child] + 1) << 44);
                queue.Enqueue(child);
            }

            while (firstFree < used.Count && used[firstFree])
            {
                firstFree++;
            }
        }

        // Room for base + 255 past the last used cell, so a walk never indexes outside the array.
        while (cells.Count < used.Count + 256)
        {
            cells.Add(0);
        }

        if (cells.Count >= (int)FieldMask)
        {
            throw new InvalidOperationException("The short-string dictionary is too large for the encoder's double-array trie.");
        }

        return cells.ToArray();
    }

    private static ReadOnlySpan<byte> CharClass => [
        3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3,
        3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3,
        3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 3, 3, 3, 3, 3,
        3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 3, 3, 3, 3, 3,
        4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4,
        4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4,
        4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4,
        4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4,
    ];

    internal static int EntryCount => Entries.Length;

    internal static ReadOnlySpan<byte> Entry(int index) => Entries[index];

    /// <summary>Longest entry: a payload of n bytes decodes to at most n times this.</summary>
    public static int MaxEntryLength { get; }

    /// <summary>Encodes into <paramref name="destination"/>; returns the size, or -1 when it would not be smaller than the input.</summary>
    public static int TryEncode(ReadOnlySpan<byte> value, Span<byte> destination)
    {
        var n = value.Length;
        if (n < 2 || n > MaxInput)
        {
            return -1;
        }

        int[]? rented = null;
        var scratch = n <= 256 ? stackalloc int[2 * (n + 1)] : (rented = ArrayPool<int>.Shared.Rent(2 * (n + 1)));
        try
        {
            var cells = Cells;
            var cost = scratch.Slice(0, n + 1);
            var choice = scratch.Slice(n + 1, n + 1);
            cost[n] = 0;
            for (var i = n - 1; i >= 0; i--)
            {
                var c = value[i];
                var best = (c < 0x80 ? 1 : 2) + cost[i + 1];
                var pick = -1;

                // Entries were trained to start on a character-class boundary (letter / digit / other):
                // trying only there keeps the encoder several times faster at almost the same ratio.
                // The root is state 0, so its child on c is cell c, whose parent field is then 0 + 1.
                var cell = cells[c];
                if ((i == 0 || CharClass[c] == 3 || CharClass[c] != CharClass[value[i - 1]]) && (uint)(cell & FieldMask) == 1)
                {
                    var s = (uint)c;
                    for (var j = i + 1; j < n; j++)
                    {
                        var t = (uint)((cell >> ParentBits) & FieldMask) + value[j];
                        cell = cells[(int)t];
                        if ((uint)(cell & FieldMask) != s + 1)
                        {
                            break;
                        }

                        s = t;
                        var e = (int)(cell >> 44) - 1;
                        if (e < 0)
                        {
                            continue;
                        }

                        var candidate = (e < OneByteCodes ? 1 : 2) + cost[j + 1];
                        if (candidate < best)
                        {
                            best = candidate;
                            pick = e;
                        }
                    }
                }

                cost[i] = best;
                choice[i] = pick;
            }

            if (cost[0] >= n || cost[0] > destination.Length)
            {
                return -1;
            }

            var o = 0;
            for (var i = 0; i < n;)
            {
                var e = choice[i];
                if (e < 0)
                {
                    var c = value[i++];
                    if (c >= 0x80)
                    {
                        destination[o++] = 0xFF;
                    }

                    destination[o++] = c;
                }
                else if (e < OneByteCodes)
                {
                    destination[o++] = (byte)(0x80 + e);
                    i += Entries[e].Length;
                }
                else
                {
                    var k = e - OneByteCodes;
                    destination[o++] = (byte)(0xF0 + (k >> 8));
                    destination[o++] = (byte)k;
                    i += Entries[e].Length;
                }
            }

            return o;
        }
        finally
        {
            if (rented is not null)
            {
                ArrayPool<int>.Shared.Return(rented);
            }
        }
    }

    /// <summary>Length of the decoded text, or -1 when the data holds an invalid code.</summary>
    public static int DecodedLength(ReadOnlySpan<byte> payload)
    {
        var length = 0L;
        for (var i = 0; i < payload.Length; i++)
        {
            var b = payload[i];
            if (b < 0x80)
            {
                length++;
            }
            else if (b < 0xF0)
            {
                length += EntryLengths[b - 0x80];
            }
            else if (b < 0xFF)
            {
                if (++i >= payload.Length)
                {
                    return -1;
                }

                var e = OneByteCodes + ((b - 0xF0) << 8) + payload[i];
                if (e >= EntryLengths.Length)
                {
                    return -1;
                }

                length += EntryLengths[e];
            }
            else
            {
                if (++i >= payload.Length)
                {
                    return -1;
                }

                length++;
            }
        }

        return length > int.MaxValue ? -1 : (int)length;
    }

    /// <summary>Decodes into <paramref name="destination"/>; returns the size, or -1 when the data is corrupt or too long.</summary>
    public static int Decode(ReadOnlySpan<byte> payload, Span<byte> destination)
    {
        var o = 0;
        var i = 0;

        // Fast loop while at least 8 input bytes and 32 output bytes remain: eight literals at a
        // time when a whole word is ASCII, dictionary entries by one 32-byte vector copy.
        ref var blob = ref System.Runtime.InteropServices.MemoryMarshal.GetArrayDataReference(Blob);
        ref var output = ref System.Runtime.InteropServices.MemoryMarshal.GetReference(destination);
        while (i + 8 <= payload.Length && destination.Length - o >= BlobPadding)
        {
            var word = System.Buffers.Binary.BinaryPrimitives.ReadUInt64LittleEndian(payload.Slice(i));
            if ((word & 0x8080808080808080UL) == 0)
            {
                System.Buffers.Binary.BinaryPrimitives.WriteUInt64LittleEndian(destination.Slice(o), word);
                i += 8;
                o += 8;
                continue;
            }

            var b = (byte)word;
            int e;
            if (b < 0x80)
            {
                destination[o++] = b;
                i++;
                continue;
            }

            if (b < 0xF0)
            {
                e = b - 0x80;
                i++;
            }
            else if (b < 0xFF)
            {
                e = OneByteCodes + ((b - 0xF0) << 8) + (byte)(word >> 8);
                if (e >= Entries.Length)
                {
                    return -1;
                }

                i += 2;
            }
            else
            {
                destination[o++] = (byte)(word >> 8);
                i += 2;
                continue;
            }

            // Safe: Blob has 32 bytes of padding after its last entry; destination has 32 bytes left (loop condition).
            System.Runtime.Intrinsics.Vector256.StoreUnsafe(
                System.Runtime.Intrinsics.Vector256.LoadUnsafe(ref blob, (nuint)EntryOffsets[e]),
                ref output,
                (nuint)o);
            o += EntryLengths[e];
        }

        for (; i < payload.Length; i++)
        {
            var b = payload[i];
            if (b < 0x80)
            {
                if (o >= destination.Length)
                {
                    return -1;
                }

                destination[o++] = b;
                continue;
            }

            int e;
            if (b < 0xF0)
            {
                e = b - 0x80;
            }
            else if (b < 0xFF)
            {
                if (++i >= payload.Length)
                {
                    return -1;
                }

                e = OneByteCodes + ((b - 0xF0) << 8) + payload[i];
                if (e >= Entries.Length)
                {
                    return -1;
                }
            }
            else
            {
                if (++i >= payload.Length || o >= destination.Length)
                {
                    return -1;
                }

                destination[o++] = payload[i];
                continue;
            }

            var length = EntryLengths[e];
            if (destination.Length - o >= BlobPadding)
            {
                // Copies 32 bytes (the entry and whatever follows it in the blob); only `length` count.
                // Safe: Blob has 32 bytes of padding after its last entry, and destination has 32 bytes left.
                System.Runtime.Intrinsics.Vector256.StoreUnsafe(
                    System.Runtime.Intrinsics.Vector256.LoadUnsafe(ref System.Runtime.InteropServices.MemoryMarshal.GetArrayDataReference(Blob), (nuint)EntryOffsets[e]),
                    ref System.Runtime.InteropServices.MemoryMarshal.GetReference(destination),
                    (nuint)o);
            }
            else if (length <= destination.Length - o)
            {
                Blob.AsSpan(EntryOffsets[e], length).CopyTo(destination.Slice(o));
            }
            else
            {
                return -1;
            }

            o += length;
        }

        return o;
    }
}
