using System.Buffers;
using K4os.Compression.LZ4;

namespace Jackdaw.Storage.Blittable;

/// <summary>
/// Disk-mode string compression: the shared-dictionary coder for short text, LZ4 for strings of
/// <see cref="Lz4Threshold"/> bytes or more that the dictionary did not shrink by a quarter, and for
/// all strings from <see cref="Lz4FirstThreshold"/>; the smallest result wins, and the caller keeps
/// the raw form unless the compressed one is strictly smaller. From <see cref="Lz4FirstThreshold"/>
/// bytes LZ4 goes first, and a string it shrinks to a quarter or less (text that repeats itself) is
/// not given to the dictionary coder at all: that coder cannot beat it there (its best code saves a
/// few bytes per entry) and costs several times LZ4's time on long input.
/// </summary>
[System.Runtime.CompilerServices.SkipLocalsInit]
internal static class StringCompression
{
    /// <summary>Strings shorter than this are never worth a compressed header.</summary>
    public const int MinLength = 4;

    public const int Lz4Threshold = 128;

    /// <summary>From this length LZ4 is tried first, and kept at once when it shrinks the string to a quarter.</summary>
    public const int Lz4FirstThreshold = 512;

    /// <summary>Upper bound of decoded/encoded size for both coders (LZ4 tops out near 255).</summary>
    public const int MaxExpansion = 256;

    /// <summary>Longest LZ4 scratch taken from the stack; longer strings rent theirs from the shared pool.</summary>
    private const int MaxStackScratch = 4096;

    /// <summary>Compresses into <paramref name="destination"/> (as long as the input); returns String when nothing smaller was found.</summary>
    public static BlittableType TryCompress(ReadOnlySpan<byte> value, Span<byte> destination, out int written)
    {
        if (value.Length <= MaxStackScratch)
        {
            Span<byte> lz4 = value.Length < Lz4Threshold ? default : stackalloc byte[value.Length];
            return TryCompress(value, destination, lz4, out written);
        }

        // A long string (text-heavy documents): a pooled scratch, so that building them allocates
        // nothing per document after warm-up (a new array per string went to the large object heap
        // from 85 KB).
        var rented = ArrayPool<byte>.Shared.Rent(value.Length);
        try
        {
            return TryCompress(value, destination, rented.AsSpan(0, value.Length), out written);
        }
        finally
        {
            ArrayPool<byte>.Shared.Return(rented);
        }
    }

    /// <param name="lz4">Scratch for the LZ4 attempt, as long as the input (empty below <see cref="Lz4Threshold"/>).</param>
    private static BlittableType TryCompress(ReadOnlySpan<byte> value, Span<byte> destination, Span<byte> lz4, out int written)
    {
        // LZ4 only gains on text that repeats itself, and each call clears a 16 KiB hash table: it goes first
        // on long strings, and on shorter ones is tried only where the dictionary did poorly.
        var lz4Size = 0;
        if (value.Length >= Lz4FirstThreshold)
        {
            lz4Size = LZ4Codec.Encode(value, lz4, LZ4Level.L00_FAST);
            if (lz4Size > 0 && lz4Size <= value.Length >> 2)
            {
                lz4[..lz4Size].CopyTo(destination);
                written = lz4Size;
                return BlittableType.StringLz4;
            }
        }

        // After LZ4 (long strings), the dictionary's result is kept only if it is no larger than LZ4's:
        // the coder gives up as soon as its output would pass that size, with the same outcome.
        var best = BlittableType.String;
        var bestSize = value.Length;
        var dictionarySize = ShortStringCodec.TryEncode(value, lz4Size > 0 ? destination[..Math.Min(lz4Size, destination.Length)] : destination);
        if (dictionarySize > 0 && dictionarySize < bestSize)
        {
            best = BlittableType.StringDictionary;
            bestSize = dictionarySize;
        }

        if (value.Length >= Lz4Threshold && value.Length < Lz4FirstThreshold && bestSize > value.Length - (value.Length >> 2))
        {
            lz4Size = LZ4Codec.Encode(value, lz4, LZ4Level.L00_FAST);
        }

        if (lz4Size > 0 && lz4Size < bestSize)
        {
            lz4[..lz4Size].CopyTo(destination);
            best = BlittableType.StringLz4;
            bestSize = lz4Size;
        }

        written = best == BlittableType.String ? 0 : bestSize;
        return best;
    }

    /// <summary>Decodes exactly destination.Length bytes; throws <see cref="BlittableFormatException"/> when the data is corrupt.</summary>
    public static int Decompress(BlittableType type, ReadOnlySpan<byte> payload, Span<byte> destination)
    {
        int decoded;
        if (type == BlittableType.StringLz4)
        {
            decoded = LZ4Codec.Decode(payload, destination);
        }
        else
        {
            decoded = ShortStringCodec.Decode(payload, destination);
        }

        if (decoded != destination.Length)
        {
            BlittableFormat.ThrowFormat("A compressed string ({0}, {1} bytes) does not decode to its stated {2} bytes.", (long)type, payload.Length, destination.Length);
        }

        return decoded;
    }
}
