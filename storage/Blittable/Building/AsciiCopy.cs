using System.Buffers.Binary;
using System.Runtime.CompilerServices;
using System.Runtime.Intrinsics;

namespace Jackdaw.Storage.Blittable;

/// <summary>Copies short strings and tells on the way whether they are ASCII (then valid UTF-8 without a second pass).</summary>
internal static class AsciiCopy
{
    private const ulong HighBits64 = 0x8080808080808080UL;

    /// <summary>
    /// Copies <paramref name="source"/> to <paramref name="destination"/> (of the same length or
    /// longer); true when every byte is below 0x80.
    /// </summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public static bool TryCopy(ReadOnlySpan<byte> source, Span<byte> destination)
    {
        var length = source.Length;
        if (length >= 8 && length <= 16)
        {
            // Two overlapping 8-byte moves cover 8..16 bytes.
            var a = BinaryPrimitives.ReadUInt64LittleEndian(source);
            var b = BinaryPrimitives.ReadUInt64LittleEndian(source.Slice(length - 8));
            BinaryPrimitives.WriteUInt64LittleEndian(destination, a);
            BinaryPrimitives.WriteUInt64LittleEndian(destination.Slice(length - 8), b);
            return ((a | b) & HighBits64) == 0;
        }

        if (length > 16)
        {
            return CopyLong(source, destination);
        }

        if (length >= 4)
        {
            var a = BinaryPrimitives.ReadUInt32LittleEndian(source);
            var b = BinaryPrimitives.ReadUInt32LittleEndian(source.Slice(length - 4));
            BinaryPrimitives.WriteUInt32LittleEndian(destination, a);
            BinaryPrimitives.WriteUInt32LittleEndian(destination.Slice(length - 4), b);
            return ((a | b) & 0x80808080u) == 0;
        }

        var bits = 0;
        for (var i = 0; i < length; i++)
        {
            bits |= destination[i] = source[i];
        }

        return bits < 0x80;
    }

    private static bool CopyLong(ReadOnlySpan<byte> source, Span<byte> destination)
    {
        // 16-byte moves, the last one overlapping the one before it.
        var length = source.Length;
        var seen = Vector128<byte>.Zero;
        var i = 0;
        for (; i < length - 16; i += 16)
        {
            var chunk = Vector128.Create(source.Slice(i, 16));
            chunk.CopyTo(destination.Slice(i));
            seen |= chunk;
        }

        var last = Vector128.Create(source.Slice(length - 16, 16));
        last.CopyTo(destination.Slice(length - 16));
        seen |= last;
        return seen.ExtractMostSignificantBits() == 0;
    }
}
