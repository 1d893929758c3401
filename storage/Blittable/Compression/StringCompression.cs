using K4os.Compression.LZ4;

namespace Jackdaw.Storage.Blittable;

/// <summary>
/// Disk-mode string compression: the shared-dictionary coder for short text, LZ4 for strings of
/// <see cref="Lz4Threshold"/> bytes or more that the dictionary did not shrink by a quarter (and for
/// all strings from <see cref="Lz4AlwaysThreshold"/>); the smallest result wins, and the caller
/// keeps the raw form unless the compressed one is strictly smaller.
/// </summary>
[System.Runtime.CompilerServices.SkipLocalsInit]
internal static class StringCompression
{
    /// <summary>Strings shorter than this are never worth a compressed header.</summary>
    public const int MinLength = 4;

    public const int Lz4Threshold = 128;

    /// <summary>From this length LZ4 is tried even when the dictionary coder did well.</summary>
    public const int Lz4AlwaysThreshold = 2048;

    /// <summary>Upper bound of decoded/encoded size for both coders (LZ4 tops out near 255).</summary>
    public const int MaxExpansion = 256;

    /// <summary>Compresses into <paramref name="destination"/> (as long as the input); returns String when nothing smaller was found.</summary>
    public static BlittableType TryCompress(ReadOnlySpan<byte> value, Span<byte> destination, out int written)
    {
        written = 0;
        var best = BlittableType.String;
        var bestSize = value.Length;
        var dictionarySize = ShortStringCodec.TryEncode(value, destination);
        if (dictionarySize > 0 && dictionarySize < bestSize)
        {
            best = BlittableType.StringDictionary;
            bestSize = dictionarySize;
        }

        // LZ4 only gains on text that repeats itself, and each call clears a 16 KiB hash table: it is
        // tried where the dictionary did poorly, or where the string is long enough to repeat.
        if (value.Length >= Lz4AlwaysThreshold || (value.Length >= Lz4Threshold && bestSize > value.Length - (value.Length >> 2)))
        {
            Span<byte> lz4 = value.Length <= 4096 ? stackalloc byte[value.Length] : new byte[value.Length];
            var lz4Size = LZ4Codec.Encode(value, lz4, LZ4Level.L00_FAST);
            if (lz4Size > 0 && lz4Size < bestSize)
            {
                lz4.Slice(0, lz4Size).CopyTo(destination);
                best = BlittableType.StringLz4;
                bestSize = lz4Size;
            }
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
