using System.Buffers.Binary;
using System.Diagnostics.CodeAnalysis;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;

namespace Jackdaw.Storage.Blittable;

// A blittable document, version 2 (2: the short-string coder's timestamp token). All integers are little-endian; "varint" is unsigned LEB128
// (7 bits per byte, high bit = more follows, at most 5 bytes for 32-bit values, 10 for 64-bit).
//
//   +--------------------+ 0
//   | BlittableHeader    |   16 bytes, see below
//   +--------------------+ 16
//   | values             |   written depth-first in input order: each value is written before the
//   | ...                |   table of the object or array that holds it
//   | root object table  |   the root table is the last value written
//   +--------------------+ NamesOffset
//   | property names     |   each distinct name once, as a String (below), in order of first use
//   +--------------------+ TotalLength
//
// A table refers to its values by *backward* distance, so a value always lies at a lower position
// than its container: a reader can never loop. Names are referred to by their offset in the names
// area, which keeps those offsets (and so the table entries) small.
//
// Shared values: nothing in the layout stops two entries from pointing at the same value, and a
// corrupt or hostile document that nests such sharing makes a few hundred bytes stand for 2^n values.
// A builder never shares: every value has an entry of its own (at least 2 bytes, null/true/false
// too), so a well-formed document has fewer entries than bytes. Every walk over a document (JSON
// writer, comparer, Modify and its block copies) therefore charges each table's count against a
// budget of the document's length before visiting its values, and throws ThrowSharedValues once
// the budget is overdrawn. Code that walks a document through the public reader does the same.
// Entries sharing one long string would still make a walk's output or work grow with the square of
// the document, so each walk also charges the stored bytes of each string and number longer than
// LongValueBytes: those bytes belong to one value each, disjoint from the tables, so a well-formed
// document stays within the same budget (Charge, ChargeLong).
//
// Values (the type lives in the container's entry, not beside the value):
//   Null, True, False    no bytes (back distance 0)
//   Integer              varint of the zig-zag encoded long
//   Double               varint length, ASCII number text exactly as given in the input
//   String               varint (length << 1 | E), UTF-8 bytes (unescaped), EscapeList if E
//   StringDictionary     varint (compressed length << 1 | E), bytes (ShortStringCodec), EscapeList if E
//                        (the decoded length is a cheap scan of the codes, so it is not stored)
//   StringLz4            varint (compressed length << 1 | E), varint decoded length, bytes (LZ4 block), EscapeList if E
//   Object               an ObjectTable (below)
//   Array                an ArrayTable (below)
//   EscapeList           varint count, then count varints: distance of each byte that must be escaped
//                        when written as JSON (< 0x20, '"', '\') from the previous one (first: from 0)
//
// ObjectTable:
//   +-------+---------+------------------------------------------------+----------------------+
//   | flags | count   | count entries, insertion order                 | count sorted indexes |
//   | 1 B   | varint  | nameOffset(N) valueBack(V) type(1)             | (P bytes each)       |
//   +-------+---------+------------------------------------------------+----------------------+
//   flags: bits 0-1 V code, bits 2-3 N code, bits 4-5 P code (code 0 = 1 byte, 1 = 2, 2 = 4),
//          bits 6-7 = 01 (ObjectTag). The sorted indexes list the entries by name (ordinal UTF-8
//          byte order) for binary search; the entries themselves stay in insertion order.
//
// ArrayTable:
//   +-------+---------+---------------------------------------------+
//   | flags | count   | count entries: valueBack(V) type(1)         |
//   +-------+---------+---------------------------------------------+
//   flags: bits 0-1 V code, bits 2-5 zero, bits 6-7 = 10 (ArrayTag).

//  Offset  Size  Field
//  ------  ----  -----------------------------------------------------------
//   0      1     Magic       0xB7
//   1      1     Version     2 (bumped on any layout change; 1 is still read)
//   2      1     Flags       bit 0: built in Disk mode (strings may be compressed)
//   3      1     Reserved    0
//   4      4     TotalLength int32, bytes of the whole document including this header
//   8      4     RootOffset  int32, position of the root ObjectTable
//  12      4     NamesOffset int32, position of the names area
[StructLayout(LayoutKind.Explicit, Size = Size)]
internal struct BlittableHeader
{
    public const int Size = 16;
    public const byte MagicValue = 0xB7;
    public const byte CurrentVersion = 2;

    /// <summary>
    /// Version 1 documents are read too: version 2 only added the timestamp token (0xFF 0x00) to the
    /// short-string coder, and a version 1 payload never holds 0xFF before a byte below 0x80.
    /// </summary>
    public const byte OldestReadableVersion = 1;

    /// <summary>Whether a document of <paramref name="version"/> can be read by this build.</summary>
    [System.Runtime.CompilerServices.MethodImpl(System.Runtime.CompilerServices.MethodImplOptions.AggressiveInlining)]
    public static bool IsReadable(byte version) => (uint)(version - OldestReadableVersion) <= CurrentVersion - OldestReadableVersion;
    public const byte DiskModeFlag = 1;

    [FieldOffset(0)] public byte Magic;
    [FieldOffset(1)] public byte Version;
    [FieldOffset(2)] public byte Flags;
    [FieldOffset(3)] public byte Reserved;
    [FieldOffset(4)] public int TotalLength;
    [FieldOffset(8)] public int RootOffset;
    [FieldOffset(12)] public int NamesOffset;

    public static void Write(Span<byte> destination, byte flags, int totalLength, int rootOffset, int namesOffset)
    {
        destination[0] = MagicValue;
        destination[1] = CurrentVersion;
        destination[2] = flags;
        destination[3] = 0;
        BinaryPrimitives.WriteInt32LittleEndian(destination.Slice(4), totalLength);
        BinaryPrimitives.WriteInt32LittleEndian(destination.Slice(8), rootOffset);
        BinaryPrimitives.WriteInt32LittleEndian(destination.Slice(12), namesOffset);
    }

    public static BlittableHeader Read(ReadOnlySpan<byte> document)
    {
        if (document.Length < Size)
        {
            BlittableFormat.ThrowFormat("A blittable document has at least {0} bytes; got {1}.", Size, document.Length);
        }

        return new BlittableHeader
        {
            Magic = document[0],
            Version = document[1],
            Flags = document[2],
            Reserved = document[3],
            TotalLength = BinaryPrimitives.ReadInt32LittleEndian(document.Slice(4)),
            RootOffset = BinaryPrimitives.ReadInt32LittleEndian(document.Slice(8)),
            NamesOffset = BinaryPrimitives.ReadInt32LittleEndian(document.Slice(12)),
        };
    }
}

/// <summary>Type byte of an entry in an object or array table.</summary>
internal enum BlittableType : byte
{
    Null = 0,
    True = 1,
    False = 2,
    Integer = 3,
    Double = 4,
    String = 5,
    StringDictionary = 6,
    StringLz4 = 7,
    Object = 8,
    Array = 9,
}

internal static class BlittableFormat
{
    public const int MaxDepth = 256;
    public const byte ObjectTag = 0x40;
    public const byte ArrayTag = 0x80;
    public const byte TagMask = 0xC0;
    public const int MaxTypeValue = (int)BlittableType.Array;

    // Indexed by BlittableType: the public token of each stored type.
    private static ReadOnlySpan<byte> Tokens =>
    [
        (byte)BlittableToken.Null, (byte)BlittableToken.True, (byte)BlittableToken.False, (byte)BlittableToken.Integer,
        (byte)BlittableToken.Double, (byte)BlittableToken.String, (byte)BlittableToken.String, (byte)BlittableToken.String,
        (byte)BlittableToken.Object, (byte)BlittableToken.Array, 0, 0, 0, 0, 0, 0,
    ];

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public static BlittableToken ToToken(BlittableType type) => (BlittableToken)Tokens[(int)type & 15];

    /// <summary>Width in bytes of a width code (0, 1 or 2; callers reject 3 when reading flags).</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public static int WidthOf(int code) => 1 << code;

    public static int WidthCodeFor(uint maxValue) => maxValue <= 0xFF ? 0 : maxValue <= 0xFFFF ? 1 : 2;

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public static int ReadWidth(ReadOnlySpan<byte> span, int position, int width)
    {
        // Callers have checked position + width <= span.Length.
        if (width == 1)
        {
            return span[position];
        }

        if (width == 2)
        {
            return BinaryPrimitives.ReadUInt16LittleEndian(span.Slice(position, 2));
        }

        var value = BinaryPrimitives.ReadInt32LittleEndian(span.Slice(position, 4));
        if (value < 0)
        {
            ThrowFormat("Negative offset {0} at position {1}.", value, position);
        }

        return value;
    }

    public static void WriteWidth(Span<byte> span, int position, int width, int value)
    {
        if (width == 1)
        {
            span[position] = (byte)value;
        }
        else if (width == 2)
        {
            BinaryPrimitives.WriteUInt16LittleEndian(span.Slice(position, 2), (ushort)value);
        }
        else
        {
            BinaryPrimitives.WriteInt32LittleEndian(span.Slice(position, 4), value);
        }
    }

    /// <summary>Skips an escape list (a count, then that many position varints) at <paramref name="position"/>.</summary>
    public static void SkipEscapeList(ReadOnlySpan<byte> span, ref int position)
    {
        var count = ReadVarInt32(span, ref position);
        for (var i = 0; i < count; i++)
        {
            ReadVarInt32(span, ref position);
        }
    }

    /// <summary>Reads a varint of at most 32 bits, checking bounds; throws <see cref="BlittableFormatException"/>.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public static int ReadVarInt32(ReadOnlySpan<byte> span, scoped ref int position)
    {
        var p = position;
        if ((uint)p < (uint)span.Length)
        {
            var b = span[p];
            if (b < 0x80)
            {
                position = p + 1;
                return b;
            }

            // Two bytes (up to 16383): the header of every string from 64 bytes on.
            if ((uint)(p + 1) < (uint)span.Length && span[p + 1] < 0x80)
            {
                position = p + 2;
                return (b & 0x7F) | (span[p + 1] << 7);
            }
        }

        return ReadVarInt32Slow(span, ref position);
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    private static int ReadVarInt32Slow(ReadOnlySpan<byte> span, scoped ref int position)
    {
        uint result = 0;
        var shift = 0;
        var p = position;
        while (true)
        {
            if ((uint)p >= (uint)span.Length)
            {
                ThrowFormat("A length runs past the end of the document at position {0}.", p);
            }

            var b = span[p++];
            result |= (uint)(b & 0x7F) << shift;
            if (b < 0x80)
            {
                break;
            }

            shift += 7;
            if (shift > 28)
            {
                ThrowFormat("A length at position {0} is longer than 5 bytes.", position);
            }
        }

        if (result > int.MaxValue)
        {
            ThrowFormat("A length at position {0} is out of range ({1}).", position, result);
        }

        position = p;
        return (int)result;
    }

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public static ulong ReadVarInt64(ReadOnlySpan<byte> span, scoped ref int position)
    {
        var p = position;
        if ((uint)p < (uint)span.Length)
        {
            var b = span[p];
            if (b < 0x80)
            {
                position = p + 1;
                return b;
            }
        }

        return ReadVarInt64Slow(span, ref position);
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    private static ulong ReadVarInt64Slow(ReadOnlySpan<byte> span, scoped ref int position)
    {
        ulong result = 0;
        var shift = 0;
        var p = position;
        while (true)
        {
            if ((uint)p >= (uint)span.Length)
            {
                ThrowFormat("An integer runs past the end of the document at position {0}.", p);
            }

            var b = span[p++];
            result |= (ulong)(b & 0x7F) << shift;
            if (b < 0x80)
            {
                break;
            }

            shift += 7;
            if (shift > 63)
            {
                ThrowFormat("An integer at position {0} is longer than 10 bytes.", position);
            }
        }

        position = p;
        return result;
    }

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public static int WriteVarInt(Span<byte> span, int position, uint value)
    {
        while (value >= 0x80)
        {
            span[position++] = (byte)(value | 0x80);
            value >>= 7;
        }

        span[position++] = (byte)value;
        return position;
    }

    public static int WriteVarInt64(Span<byte> span, int position, ulong value)
    {
        while (value >= 0x80)
        {
            span[position++] = (byte)(value | 0x80);
            value >>= 7;
        }

        span[position++] = (byte)value;
        return position;
    }

    /// <summary>Copies up to 16 bytes without a call into Memmove (most names and many values are this short).</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public static void SmallCopy(ReadOnlySpan<byte> source, Span<byte> destination)
    {
        var length = source.Length;
        if (length >= 8 && length <= 16)
        {
            // Two overlapping 8-byte moves cover 8..16 bytes.
            BinaryPrimitives.WriteUInt64LittleEndian(destination, BinaryPrimitives.ReadUInt64LittleEndian(source));
            BinaryPrimitives.WriteUInt64LittleEndian(destination.Slice(length - 8), BinaryPrimitives.ReadUInt64LittleEndian(source.Slice(length - 8)));
        }
        else if (length >= 4 && length < 8)
        {
            BinaryPrimitives.WriteUInt32LittleEndian(destination, BinaryPrimitives.ReadUInt32LittleEndian(source));
            BinaryPrimitives.WriteUInt32LittleEndian(destination.Slice(length - 4), BinaryPrimitives.ReadUInt32LittleEndian(source.Slice(length - 4)));
        }
        else if (length < 4)
        {
            for (var i = 0; i < length; i++)
            {
                destination[i] = source[i];
            }
        }
        else
        {
            source.CopyTo(destination);
        }
    }

    public static ulong ZigZag(long value) => (ulong)((value << 1) ^ (value >> 63));

    public static long UnZigZag(ulong value) => (long)(value >> 1) ^ -(long)(value & 1);

    /// <summary>Reads the (length, data position) of a length-prefixed byte run, checking bounds.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public static ReadOnlySpan<byte> ReadLengthPrefixed(ReadOnlySpan<byte> span, scoped ref int position)
    {
        var length = ReadVarInt32(span, ref position);
        var start = position;
        if ((uint)length > (uint)(span.Length - start))
        {
            ThrowFormat("A run of {0} bytes at position {1} exceeds the document ({2} bytes).", length, start, span.Length);
        }

        position = start + length;
        return span.Slice(start, length);
    }

    /// <summary>Reads a String header: length and whether an escape list follows the bytes.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public static ReadOnlySpan<byte> ReadStringBytes(ReadOnlySpan<byte> span, scoped ref int position, out bool hasEscapes)
    {
        var header = ReadVarInt32(span, ref position);
        hasEscapes = (header & 1) != 0;
        var length = header >> 1;
        var start = position;
        if ((uint)length > (uint)(span.Length - start))
        {
            ThrowFormat("A string of {0} bytes at position {1} exceeds the document ({2} bytes).", length, start, span.Length);
        }

        position = start + length;
        return span.Slice(start, length);
    }

    /// <summary>Names-area position from the header, checked.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public static int NamesOffset(ReadOnlySpan<byte> document)
    {
        if (document.Length < BlittableHeader.Size)
        {
            ThrowFormat("A blittable document has at least {0} bytes; got {1}.", BlittableHeader.Size, document.Length);
        }

        var offset = BinaryPrimitives.ReadInt32LittleEndian(document.Slice(12));
        if (offset < BlittableHeader.Size || offset > document.Length)
        {
            ThrowFormat("Names offset {0} is outside the document ({1} bytes).", offset, document.Length);
        }

        return offset;
    }

    /// <summary>Strings and numbers stored in more bytes than this are charged by their length (see "Shared values" above).</summary>
    public const int LongValueBytes = 32;

    /// <summary>Takes <paramref name="amount"/> from a walk's budget; throws once it is overdrawn (see "Shared values" above).</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public static void Charge(ref int budget, int amount, int position, int documentLength)
    {
        budget -= amount;
        if (budget < 0)
        {
            ThrowSharedValues(position, documentLength);
        }
    }

    /// <summary>Charges a string's or number's stored bytes when there are more than <see cref="LongValueBytes"/>.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public static void ChargeLong(ref int budget, int storedLength, int position, int documentLength)
    {
        if (storedLength > LongValueBytes)
        {
            Charge(ref budget, storedLength, position, documentLength);
        }
    }

    /// <summary>
    /// Throws for a walk whose budget of <paramref name="length"/> values (the document's length, see
    /// "Shared values" above) was overdrawn by the table at <paramref name="position"/>.
    /// </summary>
    [DoesNotReturn]
    [MethodImpl(MethodImplOptions.NoInlining)]
    public static void ThrowSharedValues(int position, int length) =>
        ThrowFormat("Walking the document reached more values than its {1} bytes can hold (at the table at {0}): its entries share values, which only a corrupt document's do.", position, length);

    /// <summary>Throws with a composite-format message; kept out of line so hot callers stay small.</summary>
    [DoesNotReturn]
    [MethodImpl(MethodImplOptions.NoInlining)]
    public static void ThrowFormat(string format, long a = 0, long b = 0, long c = 0) =>
        throw new BlittableFormatException(string.Format(System.Globalization.CultureInfo.InvariantCulture, format, a, b, c));

}
