using System.Buffers.Binary;
using System.Numerics;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using System.Runtime.Intrinsics;

namespace Jackdaw.Storage.Blittable;

/// <summary>
/// Smaz-style coder for short text with a dictionary trained on the corpus
/// (tools/train-blittable-dictionary.cs). Encoded bytes:
/// <code>
///   0x00-0x7F        the ASCII byte itself
///   0x80-0xEF        dictionary entry 0..111 (the most used ones)
///   0xF0-0xFE  lo    dictionary entry 112 + ((b - 0xF0) &lt;&lt; 8 | lo)
///   0xFF       b     the byte b verbatim (b &gt;= 0x80: non-ASCII)
///   0xFF 0x00  t0-t6 a whole string yyyy-MM-ddTHH:mm:ss.fffZ, packed (see <see cref="TryPackTimestamp"/>)
///   0xFF 0x01-0x7F   invalid
/// </code>
/// The encoder parses greedily with one look-ahead (see <see cref="TryEncode"/>) and gives up as soon
/// as its output would not be smaller than the input; callers keep the raw string unless this is smaller.
/// </summary>
[System.Runtime.CompilerServices.SkipLocalsInit]
internal static partial class ShortStringCodec
{
    public const int OneByteCodes = 112;
    public const int MaxInput = 16 * 1024;

    /// <summary>
    /// Bytes a code must save to be used: a code that saves one byte costs the decoder a token (and
    /// often splits a literal run in two) for that byte. On the corpus this leaves most phone numbers
    /// and postal codes raw: companies decode 14% fewer tokens for 0.7% more bytes.
    /// </summary>
    internal const int MinGain = 2;

    private static readonly byte[][] Entries;

    // All entries back to back, followed by 32 bytes of padding, so the decoder can copy any entry
    // with one 32-byte vector load without reading past the array.
    private static readonly byte[] Blob;
    private static readonly uint[] EntryInfo;   // per entry: offset in Blob << 8 | length (one load for both)
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
        MaxEntryLength = Entries.Max(e => e.Length);
        EntryInfo = new uint[Entries.Length];
        Blob = new byte[Entries.Sum(e => e.Length) + BlobPadding];
        var offset = 0;
        for (var e = 0; e < Entries.Length; e++)
        {
            EntryInfo[e] = ((uint)offset << 8) | (uint)Entries[e].Length;
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

        (Cells, CellEntry) = BuildDoubleArray(edges, nodeEntry.ToArray());
    }

    // A trie over the entries for the encoder, as a double array with one 4-byte cell per state: the child
    // of state s on byte b is cell t = Base(s) + b when Parent(t) == s. A cell packs
    //   bits  0-14  parent state + 1 (0: the cell is free)
    //   bits 15-29  base of this state's children
    //   bit   30    an entry ends at this state (its id is CellEntry[t])
    //   bit   31    that entry has a one-byte code
    // so one load per input byte both follows the edge and tells whether an entry ends there, and the
    // trie (16 K cells; at most 32 K fit) takes 64 KB of cache.
    private static readonly uint[] Cells;
    private static readonly ushort[] CellEntry;
    private const int FieldBits = 15;
    private const uint FieldMask = (1u << FieldBits) - 1;
    private const uint EndBit = 1u << 30;
    private const uint OneByteBit = 1u << 31;

    private static (uint[] Cells, ushort[] CellEntry) BuildDoubleArray(Dictionary<int, int> edges, int[] nodeEntry)
    {
        var children = new List<(byte Byte, int Node)>[nodeEntry.Length];
        foreach (var (key, child) in edges)
        {
            (children[key >> 8] ??= new List<(byte, int)>()).Add(((byte)key, child));
        }

        // Every node takes one cell and first fit leaves few holes (about 2% for the generated
        // dictionary): twice the nodes plus 512 is ample, and the array is trimmed at the end.
        // Cells from `end` on are free; below it, the free ones are listed in order.
        var size = (nodeEntry.Length * 2) + 512;
        var cells = new uint[size];
        var entryOf = new ushort[size];
        var state = new int[nodeEntry.Length];   // trie node -> cell index; the root is cell 0
        var free = new List<int>();
        var end = 1;
        var queue = new Queue<int>();
        queue.Enqueue(0);
        while (queue.Count > 0)
        {
            var node = queue.Dequeue();
            var list = children[node];
            if (list is null)
            {
                continue;
            }

            list.Sort((x, y) => x.Byte.CompareTo(y.Byte));
            var minByte = list[0].Byte;

            // First fit: the smallest child goes to each free cell in turn (the root's base is 0).
            var b = node == 0 ? 0 : Math.Max(end, minByte + 1) - minByte;
            if (node != 0)
            {
                foreach (var f in free)
                {
                    var candidate = f - minByte;
                    var fits = candidate >= 1;
                    for (var k = 1; fits && k < list.Count; k++)
                    {
                        var t = candidate + list[k].Byte;
                        fits = t >= end || (cells[t] & FieldMask) == 0;
                    }

                    if (fits)
                    {
                        b = candidate;
                        break;
                    }
                }
            }

            var s = state[node];
            cells[s] |= (uint)b << FieldBits;
            foreach (var (c, child) in list)
            {
                var t = b + c;
                if (t < end)
                {
                    free.Remove(t);
                }
                else
                {
                    for (var k = end; k < t; k++)
                    {
                        free.Add(k);
                    }

                    end = t + 1;
                }

                state[child] = t;
                cells[t] |= (uint)(s + 1);
                var entry = nodeEntry[child];
                if (entry >= 0)
                {
                    cells[t] |= EndBit | (entry < OneByteCodes ? OneByteBit : 0);
                    entryOf[t] = (ushort)entry;
                }

                queue.Enqueue(child);
            }
        }

        // Every base and state lies below `end`: one check covers the array and the 15-bit fields.
        if (end + 256 > Math.Min(size, (int)FieldMask))
        {
            throw new InvalidOperationException("The short-string dictionary does not fit the encoder's double-array trie.");
        }

        // Room for base + 255 past the last used cell, so a walk never indexes outside the array.
        return (cells.AsSpan(0, end + 256).ToArray(), entryOf.AsSpan(0, end + 256).ToArray());
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

    /// <summary>A dictionary match: the trie cell where its entry ends, its length in the input and the bytes it saves.</summary>
    private struct Match
    {
        public int Cell;            // -1 if none; the entry is CellEntry[Cell]
        public int Length;
        public int Gain;
        public int ShorterCell;     // the longest other entry found on the way to Cell (-1 if none)
        public int ShorterLength;
        public int ShorterGain;
    }

    /// <summary>
    /// Walks the trie from <paramref name="start"/>: the entry that saves most (the longest on a tie),
    /// and the longest entry found on the way to it.
    /// </summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static Match Walk(ReadOnlySpan<byte> value, int start, uint[] cells)
    {
        var match = new Match { Cell = -1, ShorterCell = -1 };
        var c = value[start];
        var cell = cells[c];
        if ((cell & FieldMask) != 1)
        {
            return match;
        }

        var state = (uint)c;
        for (var j = start + 1; j < value.Length; j++)
        {
            var t = (int)((cell >> FieldBits) & FieldMask) + value[j];
            cell = cells[t];
            if ((cell & FieldMask) != state + 1)
            {
                break;
            }

            state = (uint)t;

            if ((cell & EndBit) == 0)
            {
                continue;
            }

            var length = j + 1 - start;
            var gain = length - ((cell & OneByteBit) != 0 ? 1 : 2);
            if (gain >= MinGain && gain >= match.Gain)
            {
                match.ShorterCell = match.Cell;
                match.ShorterLength = match.Length;
                match.ShorterGain = match.Gain;
                match.Cell = t;
                match.Length = length;
                match.Gain = gain;
            }
        }

        return match;
    }

    /// <summary>
    /// Greedy encoder with one look-ahead: at each character-class boundary, the entry that saves
    /// most; when a shorter entry was found on the way, it is taken instead if it and the match that
    /// follows it save more than the longer one and its follower ("Fantastic " + "Bamboo Chair"
    /// rather than "Fantastic Bamboo" + literals; " amplus" + " textilis" rather than
    /// " amplus " + "textilis"). Returns the size, or -1 when the result would not be smaller.
    /// </summary>
    public static int TryEncode(ReadOnlySpan<byte> value, Span<byte> destination)
    {
        var n = value.Length;
        if (n < 2 || n > MaxInput)
        {
            return -1;
        }

        if (n == TimestampLength && destination.Length >= TimestampTokenLength && TryPackTimestamp(value, out var packed))
        {
            destination[0] = 0xFF;
            destination[1] = TimestampMarker;
            BinaryPrimitives.WriteUInt32LittleEndian(destination.Slice(2), (uint)packed);
            BinaryPrimitives.WriteUInt16LittleEndian(destination.Slice(6), (ushort)(packed >> 32));
            destination[8] = (byte)(packed >> 48);
            return TimestampTokenLength;
        }

        var cells = Cells;
        var charClass = CharClass;
        var limit = Math.Min(n - 1, destination.Length);
        var o = 0;
        var i = 0;
        var previousClass = 0;
        var next = default(Match);
        var nextAt = -1;
        while (i < n)
        {
            var c = value[i];
            var cls = charClass[c];
            var match = default(Match);
            match.Cell = -1;
            if (cls == 3 || cls != previousClass)
            {
                match = nextAt == i ? next : Walk(value, i, cells);
                if (match.ShorterCell >= 0)
                {
                    var shorterEnd = i + match.ShorterLength;
                    var afterShorter = shorterEnd < n ? Walk(value, shorterEnd, cells) : default;
                    var shorterTotal = match.ShorterGain + afterShorter.Gain;
                    if (shorterTotal > match.Gain)
                    {
                        var longerEnd = i + match.Length;
                        var afterLonger = longerEnd < n ? Walk(value, longerEnd, cells) : default;
                        if (shorterTotal >= match.Gain + afterLonger.Gain)
                        {
                            match.Cell = match.ShorterCell;
                            match.Length = match.ShorterLength;
                            next = afterShorter;
                            nextAt = shorterEnd;
                        }
                        else
                        {
                            next = afterLonger;
                            nextAt = longerEnd;
                        }
                    }
                }
            }
            if (match.Cell < 0)
            {
                if (c >= 0x80)
                {
                    if (o + 2 > limit)
                    {
                        return -1;
                    }

                    destination[o++] = 0xFF;
                }
                else if (o >= limit)
                {
                    return -1;
                }

                destination[o++] = c;
                i++;
                previousClass = cls;
                continue;
            }

            var e = (int)CellEntry[match.Cell];
            if (e < OneByteCodes)
            {
                if (o >= limit)
                {
                    return -1;
                }

                destination[o++] = (byte)(0x80 + e);
            }
            else
            {
                if (o + 2 > limit)
                {
                    return -1;
                }

                var k = e - OneByteCodes;
                destination[o++] = (byte)(0xF0 + (k >> 8));
                destination[o++] = (byte)k;
            }

            i += match.Length;
            previousClass = charClass[value[i - 1]];
        }

        return o;
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
                length += (byte)EntryInfo[b - 0x80];
            }
            else if (b < 0xFF)
            {
                if (++i >= payload.Length)
                {
                    return -1;
                }

                var e = OneByteCodes + ((b - 0xF0) << 8) + payload[i];
                if (e >= EntryInfo.Length)
                {
                    return -1;
                }

                length += (byte)EntryInfo[e];
            }
            else
            {
                if (++i >= payload.Length)
                {
                    return -1;
                }

                if (payload[i] >= 0x80)
                {
                    length++;
                    continue;
                }

                if (payload[i] != TimestampMarker || payload.Length - i <= TimestampPackedLength)
                {
                    return -1;
                }

                i += TimestampPackedLength;
                length += TimestampLength;
            }
        }

        return length > int.MaxValue ? -1 : (int)length;
    }

    /// <summary>Decodes into <paramref name="destination"/>; returns the size, or -1 when the data is corrupt or too long.</summary>
    public static int Decode(ReadOnlySpan<byte> payload, Span<byte> destination) => Decode(payload, 0, payload.Length, destination);

    /// <summary>
    /// Decodes the payload <paramref name="source"/>[start, start + length) into <paramref name="destination"/>;
    /// returns the size, or -1 when the data is corrupt or too long. Bytes of <paramref name="source"/> after the
    /// payload (the rest of a document) may be read but never change the result: handing the decoder the whole
    /// document lets literal runs near a string's end take the 8- and 16-byte steps too.
    /// </summary>
    public static int Decode(ReadOnlySpan<byte> source, int start, int length, Span<byte> destination)
    {
        if ((uint)start > (uint)source.Length || (uint)length > (uint)(source.Length - start))
        {
            return -1;
        }

        var end = start + length;
        var i = start;
        var o = 0;
        var entries = EntryInfo;
        ref var blob = ref MemoryMarshal.GetArrayDataReference(Blob);
        ref var output = ref MemoryMarshal.GetReference(destination);
        ref var input = ref MemoryMarshal.GetReference(source);

        // Fast loop while a token remains and 32 output bytes are free. A code copies its entry with
        // one 32-byte vector move; a literal run moves 8 bytes at once and keeps the ones before the
        // first non-ASCII byte (or the payload's end).
        while (i < end && destination.Length - o >= BlobPadding)
        {
            // Safe: i < end <= source.Length.
            var b = Unsafe.Add(ref input, i);
            if (b < 0x80)
            {
                if (source.Length - i >= 16)
                {
                    // Safe: 16 bytes are readable at i (checked) and 32 writable at o (loop condition); the
                    // bytes written past the run are overwritten by the next token or lie past the result.
                    // Up to 15 literals in one step: names, e-mail addresses and capitalized words run past 8.
                    var block = Vector128.LoadUnsafe(ref input, (nuint)i);
                    block.StoreUnsafe(ref output, (nuint)o);
                    var run = BitOperations.TrailingZeroCount(block.ExtractMostSignificantBits() | 0x8000u);
                    run = Math.Min(run, end - i);
                    i += run;
                    o += run;
                    continue;
                }

                if (source.Length - i >= 8)
                {
                    // Safe: 8 bytes are readable at i (checked) and 32 writable at o (loop condition); the
                    // bytes written past the run are overwritten by the next token or lie past the result.
                    var word = Unsafe.ReadUnaligned<ulong>(ref Unsafe.Add(ref input, i));
                    Unsafe.WriteUnaligned(ref Unsafe.Add(ref output, o), word);
                    var literals = BitOperations.TrailingZeroCount((word & 0x8080808080808080UL) | 0x8000000000000000UL) >> 3;
                    literals = Math.Min(literals, end - i);
                    i += literals;
                    o += literals;
                    continue;
                }

                Unsafe.Add(ref output, o++) = b;
                i++;
                continue;
            }

            int e;
            if (b < 0xF0)
            {
                e = b - 0x80;
                i++;
            }
            else
            {
                if (end - i < 2)
                {
                    return -1;
                }

                // Safe: i + 1 < end (checked).
                var lo = Unsafe.Add(ref input, i + 1);
                i += 2;
                if (b == 0xFF)
                {
                    if (lo >= 0x80)
                    {
                        Unsafe.Add(ref output, o++) = lo;
                        continue;
                    }

                    // A timestamp: 24 bytes fit the 32 the loop condition leaves.
                    if (lo != TimestampMarker || end - i < TimestampPackedLength || !TryWriteTimestamp(source.Slice(i, TimestampPackedLength), destination.Slice(o)))
                    {
                        return -1;
                    }

                    i += TimestampPackedLength;
                    o += TimestampLength;
                    continue;
                }

                e = OneByteCodes + ((b - 0xF0) << 8) + lo;
                if ((uint)e >= (uint)entries.Length)
                {
                    return -1;
                }
            }

            // Safe: e < entries.Length (a one-byte code is below OneByteCodes); Blob has 32 bytes of padding
            // after its last entry; destination has 32 bytes left (loop condition).
            var entry = entries[e];
            Vector256.StoreUnsafe(Vector256.LoadUnsafe(ref blob, entry >> 8), ref output, (nuint)o);
            o += (int)(entry & 0xFF);
        }

        return i < end ? DecodeTail(source.Slice(i, end - i), destination, o) : o;
    }

    /// <summary>Bytes the caller of <see cref="DecodeUnchecked"/> must have readable after the payload.</summary>
    public const int UncheckedReadSlack = 16;

    /// <summary>
    /// The writer's decoder: decodes the payload input[start, end) to <paramref name="output"/> and returns
    /// the decoded length, or -1 when the data is corrupt. Unlike <see cref="Decode(ReadOnlySpan{byte}, int, int, Span{byte})"/>
    /// it checks the room once, not per token: the caller guarantees <see cref="UncheckedReadSlack"/> readable
    /// bytes after the payload and room for its longest decoding (length times <see cref="MaxEntryLength"/>)
    /// plus 32 bytes at <paramref name="output"/>. Fewer checks and fewer live values let the writer's object
    /// loop, into which this is inlined, keep the decoder's state in registers.
    /// </summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public static int DecodeUnchecked(ref byte input, int start, int end, ref byte output)
    {
        var entries = EntryInfo;
        ref var blob = ref MemoryMarshal.GetArrayDataReference(Blob);
        var i = start;
        var o = 0;
        while (i < end)
        {
            var b = Unsafe.Add(ref input, i);
            if (b < 0x80)
            {
                // Safe: 16 bytes are readable at i < end (the read slack) and 32 writable at o (the room: every
                // token leaves the output short of its longest decoding).
                var block = Vector128.LoadUnsafe(ref input, (nuint)i);
                block.StoreUnsafe(ref output, (nuint)o);
                var run = Math.Min(BitOperations.TrailingZeroCount(block.ExtractMostSignificantBits() | 0x8000u), end - i);
                i += run;
                o += run;
                continue;
            }

            int e;
            if (b < 0xF0)
            {
                e = b - 0x80;
                i++;
            }
            else
            {
                // Safe: i + 1 < end + slack. A second byte past the payload leaves i > end: refused below.
                var lo = Unsafe.Add(ref input, i + 1);
                i += 2;
                if (b == 0xFF)
                {
                    if (lo >= 0x80)
                    {
                        Unsafe.Add(ref output, o++) = lo;
                        continue;
                    }

                    // A timestamp: the marker and the 7 packed bytes are one word (safe: i + 7 <= end + slack).
                    var word = BinaryPrimitives.ReadUInt64LittleEndian(MemoryMarshal.CreateReadOnlySpan(ref Unsafe.Add(ref input, i - 1), 8));
                    if (lo != TimestampMarker || end - i < TimestampPackedLength || !TryWriteTimestamp(word >> 8, ref Unsafe.Add(ref output, o)))
                    {
                        return -1;
                    }

                    i += TimestampPackedLength;
                    o += TimestampLength;
                    continue;
                }

                e = OneByteCodes + ((b - 0xF0) << 8) + lo;
                if ((uint)e >= (uint)entries.Length)
                {
                    return -1;
                }
            }

            // Safe: e < entries.Length; Blob has 32 bytes of padding; 32 bytes are writable at o (the room).
            var entry = entries[e];
            Vector256.StoreUnsafe(Vector256.LoadUnsafe(ref blob, entry >> 8), ref output, (nuint)o);
            o += (int)(entry & 0xFF);
        }

        return i == end ? o : -1;
    }

    /// <summary>The checked byte-at-a-time loop for the last tokens when fewer than 32 output bytes are left.</summary>
    private static int DecodeTail(ReadOnlySpan<byte> payload, Span<byte> destination, int o)
    {
        for (var i = 0; i < payload.Length; i++)
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

                if (payload[i] >= 0x80)
                {
                    destination[o++] = payload[i];
                    continue;
                }

                if (payload[i] != TimestampMarker || payload.Length - i <= TimestampPackedLength
                    || !TryWriteTimestamp(payload.Slice(i + 1, TimestampPackedLength), destination.Slice(o)))
                {
                    return -1;
                }

                i += TimestampPackedLength;
                o += TimestampLength;
                continue;
            }

            var length = (int)(EntryInfo[e] & 0xFF);
            if (length > destination.Length - o)
            {
                return -1;
            }

            Blob.AsSpan((int)(EntryInfo[e] >> 8), length).CopyTo(destination.Slice(o));
            o += length;
        }

        return o;
    }

    // A timestamp token stands for a whole string of the form yyyy-MM-ddTHH:mm:ss.fffZ (24 bytes: the
    // corpus's dates and most ISO-8601 UTC stamps) in 9 bytes: 0xFF, 0x00, then these 7 bytes, a
    // 56-bit little-endian value:
    //
    //   bits  0-9   milliseconds  0-999
    //   bits 10-15  seconds       0-63
    //   bits 16-21  minutes       0-63
    //   bits 22-26  hours         0-31
    //   bits 27-31  day           0-31
    //   bits 32-35  month         0-15
    //   bits 36-49  year          0-9999
    //   bits 50-55  zero
    //
    // Fields are packed as written (not checked as a calendar date), so any stamp whose two-digit fields
    // fit their bits round-trips exactly; others go through the dictionary. One token replaces about six
    // (year-month, day, hour, minutes, seconds, milliseconds), which the decoder would take in turn.
    public const int TimestampLength = 24;
    private const int TimestampPackedLength = 7;
    private const int TimestampTokenLength = 2 + TimestampPackedLength;
    private const byte TimestampMarker = 0x00;

    /// <summary>Packs yyyy-MM-ddTHH:mm:ss.fffZ into the 56-bit layout above; false when the text has another form or a field does not fit.</summary>
    internal static bool TryPackTimestamp(ReadOnlySpan<byte> value, out ulong packed)
    {
        packed = 0;
        if (value.Length != TimestampLength || value[4] != '-' || value[7] != '-' || value[10] != 'T' || value[13] != ':'
            || value[16] != ':' || value[19] != '.' || value[23] != 'Z')
        {
            return false;
        }

        var year = Digits(value, 0, 4);
        var month = Digits(value, 5, 2);
        var day = Digits(value, 8, 2);
        var hour = Digits(value, 11, 2);
        var minute = Digits(value, 14, 2);
        var second = Digits(value, 17, 2);
        var millisecond = Digits(value, 20, 3);
        if ((year | month | day | hour | minute | second | millisecond) < 0 || month > 15 || day > 31 || hour > 31 || minute > 63 || second > 63)
        {
            return false;
        }

        // Every field is checked non-negative above.
        packed = (uint)millisecond | ((ulong)(uint)second << 10) | ((ulong)(uint)minute << 16) | ((ulong)(uint)hour << 22) | ((ulong)(uint)day << 27)
            | ((ulong)(uint)month << 32) | ((ulong)(uint)year << 36);
        return true;
    }

    /// <summary>The decimal value of value[start, start + count), or -1 when a byte is not a digit.</summary>
    private static int Digits(ReadOnlySpan<byte> value, int start, int count)
    {
        var result = 0;
        for (var k = start; k < start + count; k++)
        {
            var digit = value[k] - '0';
            if ((uint)digit > 9)
            {
                return -1;
            }

            result = (result * 10) + digit;
        }

        return result;
    }

    /// <summary>Writes the 24 bytes of a packed timestamp; false when the packed value is out of range (corrupt).</summary>
    internal static bool TryWriteTimestamp(ReadOnlySpan<byte> packedBytes, Span<byte> destination)
    {
        if (packedBytes.Length < TimestampPackedLength || destination.Length < TimestampLength)
        {
            return false;
        }

        var packed = BinaryPrimitives.ReadUInt32LittleEndian(packedBytes) | ((ulong)BinaryPrimitives.ReadUInt16LittleEndian(packedBytes.Slice(4)) << 32)
            | ((ulong)packedBytes[6] << 48);
        return TryWriteTimestamp(packed, ref MemoryMarshal.GetReference(destination));
    }

    /// <summary>Writes the 24 bytes of the 56-bit packed timestamp at <paramref name="destination"/> (24 bytes writable); false when a field is out of range.</summary>
    private static bool TryWriteTimestamp(ulong packed, ref byte destination)
    {
        var millisecond = (int)(packed & 0x3FF);
        var year = (int)((packed >> 36) & 0x3FFF);
        if (millisecond > 999 || year > 9999 || (packed >> 50) != 0)
        {
            return false;
        }

        // The two-digit fields in 16-bit lanes, all converted at once (see TwoDigitLanes): "yyyyMMdd" and
        // "HHmmssff" (ff: the milliseconds' last two digits).
        var hundreds = millisecond / 100;
        var date = TwoDigitLanes((ulong)(uint)(year / 100) | ((ulong)(uint)(year % 100) << 16) | (((packed >> 32) & 0xF) << 32) | (((packed >> 27) & 0x1F) << 48));
        var time = TwoDigitLanes(((packed >> 22) & 0x1F) | (((packed >> 16) & 0x3F) << 16) | (((packed >> 10) & 0x3F) << 32) | ((ulong)(uint)(millisecond - (hundreds * 100)) << 48));

        // Three 8-byte words: "yyyy-MM-", "ddTHH:mm", ":ss.fffZ" (little-endian: the first byte is the lowest).
        var first = (date & 0xFFFF_FFFF) | ((ulong)'-' << 32) | (((date >> 32) & 0xFFFF) << 40) | ((ulong)'-' << 56);
        var second = (date >> 48) | ((ulong)'T' << 16) | ((time & 0xFFFF) << 24) | ((ulong)':' << 40) | (((time >> 16) & 0xFFFF) << 48);
        var third = ':' | (((time >> 32) & 0xFFFF) << 8) | ((ulong)'.' << 24) | ((ulong)(uint)('0' + hundreds) << 32) | ((time >> 48) << 40) | ((ulong)'Z' << 56);
        var text = MemoryMarshal.CreateSpan(ref destination, TimestampLength);
        BinaryPrimitives.WriteUInt64LittleEndian(text, first);
        BinaryPrimitives.WriteUInt64LittleEndian(text.Slice(8), second);
        BinaryPrimitives.WriteUInt64LittleEndian(text.Slice(16), third);
        return true;
    }

    /// <summary>
    /// Four values of 0-99, one in each 16-bit lane, as eight ASCII digits (tens then units, lane by lane).
    /// The tens are v * 103 / 1024, exact for v &lt; 170; a lane's product stays below 2^14, so no lane
    /// spills into the next, and the bits shifted in from the lane above fall outside the 4-bit mask.
    /// </summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal static ulong TwoDigitLanes(ulong lanes)
    {
        var tens = ((lanes * 103) >> 10) & 0x000F_000F_000F_000FUL;
        var units = lanes - (tens * 10);
        return tens | (units << 8) | 0x3030_3030_3030_3030UL;
    }
}
