using System.Buffers;

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
internal static partial class ShortStringCodec
{
    public const int OneByteCodes = 112;
    public const int MaxInput = 16 * 1024;

    private static readonly byte[][] Entries;
    private static readonly byte[] EntryLengths;
    private static readonly int[] PrefixStart;   // 65537 offsets into PrefixEntries by first two bytes
    private static readonly int[] PrefixEntries; // entry indexes, grouped by prefix

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
        var counts = new int[65537];
        foreach (var entry in Entries)
        {
            counts[((entry[0] << 8) | entry[1]) + 1]++;
        }

        for (var i = 1; i < counts.Length; i++)
        {
            counts[i] += counts[i - 1];
        }

        PrefixStart = (int[])counts.Clone();
        PrefixEntries = new int[Entries.Length];
        var fill = (int[])counts.Clone();
        for (var i = 0; i < Entries.Length; i++)
        {
            var key = (Entries[i][0] << 8) | Entries[i][1];
            PrefixEntries[fill[key]++] = i;
        }
    }

    internal static int EntryCount => Entries.Length;

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
            var cost = scratch.Slice(0, n + 1);
            var choice = scratch.Slice(n + 1, n + 1);
            cost[n] = 0;
            for (var i = n - 1; i >= 0; i--)
            {
                var c = value[i];
                var best = (c < 0x80 ? 1 : 2) + cost[i + 1];
                var pick = -1;
                if (i + 1 < n && c < 0x80)
                {
                    var key = (c << 8) | value[i + 1];
                    var end = PrefixStart[key + 1];
                    for (var k = PrefixStart[key]; k < end; k++)
                    {
                        var e = PrefixEntries[k];
                        var entry = Entries[e];
                        if (i + entry.Length <= n && value.Slice(i + 2, entry.Length - 2).SequenceEqual(entry.AsSpan(2)))
                        {
                            var candidate = (e < OneByteCodes ? 1 : 2) + cost[i + entry.Length];
                            if (candidate < best)
                            {
                                best = candidate;
                                pick = e;
                            }
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

                destination[o++] = payload[i];
                continue;
            }

            var entry = Entries[e];
            if (entry.Length > destination.Length - o)
            {
                return -1;
            }

            entry.CopyTo(destination.Slice(o));
            o += entry.Length;
        }

        return o;
    }
}
