using System.Buffers;
using System.Buffers.Text;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using System.Runtime.Intrinsics;

namespace Jackdaw.Storage.Blittable;

/// <summary>
/// Writes blittable documents as minified JSON in original property order: strings are copied
/// between their recorded escape positions, so the common case is one memcpy per string.
/// Escapes follow JSON.stringify: \" \\ \b \f \n \r \t, other control characters as \u00xx.
/// </summary>
[SkipLocalsInit]
public static class BlittableJsonWriter
{
    public static void WriteTo(ReadOnlySpan<byte> blittable, IBufferWriter<byte> output)
    {
        WriteTo(BlittableReader.Open(blittable), output);
    }

    public static void WriteTo(BlittableObject obj, IBufferWriter<byte> output)
    {
        ArgumentNullException.ThrowIfNull(output);
        var writer = new JsonOutput(output, obj.Document.Length);
        try
        {
            WriteObject(ref writer, obj, 0);
        }
        catch (Exception e) when (e is IndexOutOfRangeException or ArgumentOutOfRangeException)
        {
            // Safety net: every offset is checked where it is read, but a corrupt document must never surface as these.
            throw new BlittableFormatException("The document is corrupt: " + e.Message, e);
        }

        writer.Flush();
    }

    /// <summary>Writes one value (for callers composing their own JSON around documents).</summary>
    public static void WriteValue(BlittableValue value, IBufferWriter<byte> output)
    {
        ArgumentNullException.ThrowIfNull(output);
        var writer = new JsonOutput(output, value.Document.Length);
        try
        {
            WriteValue(ref writer, value, 0);
        }
        catch (Exception e) when (e is IndexOutOfRangeException or ArgumentOutOfRangeException)
        {
            throw new BlittableFormatException("The document is corrupt: " + e.Message, e);
        }

        writer.Flush();
    }

    private static void WriteObject(ref JsonOutput writer, in BlittableObject obj, int depth)
    {
        if (depth > BlittableFormat.MaxDepth)
        {
            BlittableFormat.ThrowFormat("The document nests deeper than {0} levels.", BlittableFormat.MaxDepth);
        }

        writer.WriteByte((byte)'{');
        var count = obj.Count;
        writer.Charge(count, obj.Position, obj.Document.Length);

        var document = obj.Document;
        var position = obj.Position;
        var names = obj.NamesOffset;
        var entries = obj.EntriesOffset;
        var nameWidth = obj.NameWidth;
        var valueWidth = obj.ValueWidth;
        var entrySize = nameWidth + valueWidth + 1;
        var span = writer.Buffer;
        var pos = writer.Position;
        for (var i = 0; i < count; i++)
        {
            // The table entry read in place: name offset, value back distance, type.
            var entry = entries + (i * entrySize);
            var namePosition = names + BlittableFormat.ReadWidth(document, entry, nameWidth);
            var back = BlittableFormat.ReadWidth(document, entry + nameWidth, valueWidth);
            var type = document[entry + nameWidth + valueWidth];
            var nameHeader = BlittableFormat.ReadVarInt32(document, ref namePosition);
            var nameLength = nameHeader >> 1;
            if ((uint)nameLength > (uint)(document.Length - namePosition))
            {
                BlittableFormat.ThrowFormat("A string of {0} bytes at position {1} exceeds the document ({2} bytes).", nameLength, namePosition, document.Length);
            }

            // The output span and position live in locals through the loop: written through the
            // JsonOutput they would be stored and reloaded around every write (it is passed by reference).
            if (span.Length - pos < LoopRoom)
            {
                writer.Position = pos;
                writer.Reserve(LoopRoom);
                span = writer.Buffer;
                pos = writer.Position;
            }

            if ((nameHeader & 1) == 0 && nameLength <= ShortCopy && document.Length - namePosition >= ShortCopy)
            {
                // Safe: 32 bytes are readable at namePosition (checked) and LoopRoom writable at pos: a comma,
                // a quote, the 32-byte move, then the closing quote and colon inside it (nameLength <= 32).
                pos += StoreShortName(ref Unsafe.Add(ref MemoryMarshal.GetReference(span), pos), document, namePosition, nameLength, comma: i > 0);
            }
            else
            {
                writer.Position = pos;
                if ((nameHeader & 1) == 0)
                {
                    // Only names the vector move above cannot take (long, or near the document's end) get here.
                    writer.WriteName(document.Slice(namePosition, nameLength), comma: i > 0);
                }
                else
                {
                    if (i > 0)
                    {
                        writer.WriteByte((byte)',');
                    }

                    var escapesAt = namePosition + nameLength;
                    WriteEscaped(ref writer, document.Slice(namePosition, nameLength), BlittableFormat.ReadVarInt32(document, ref escapesAt), document, escapesAt);
                    writer.WriteByte((byte)':');
                }

                span = writer.Buffer;
                pos = writer.Position;
            }

            // Strings, small numbers and literals are written here too; the rest (long or escaped
            // strings, containers, LZ4) through the JsonOutput.
            var valuePosition = position - back;
            if (back > 0 && valuePosition >= BlittableHeader.Size)
            {
                var p = valuePosition;
                if (type == (byte)BlittableType.String)
                {
                    var header = BlittableFormat.ReadVarInt32(document, ref p);
                    var length = header >> 1;
                    if ((header & 1) == 0 && length <= ShortCopy && document.Length - p >= ShortCopy && span.Length - pos >= ShortCopy + 2)
                    {
                        // Safe: 32 bytes are readable at p (checked, so the string is inside the document) and
                        // 34 writable at pos (checked: after a long name written the slow way, fewer may be left).
                        pos += StoreShortQuoted(ref Unsafe.Add(ref MemoryMarshal.GetReference(span), pos), document, p, length);
                        continue;
                    }
                }
                else if (type == (byte)BlittableType.StringDictionary)
                {
                    var header = BlittableFormat.ReadVarInt32(document, ref p);
                    var length = header >> 1;
                    if ((header & 1) == 0 && (uint)length <= 2048 && document.Length - p - ShortStringCodec.UncheckedReadSlack >= length)
                    {
                        // Decoded straight into the output, room checked once for the whole string (a string
                        // is never the last bytes of a document, so the decoder's 16-byte reads stay inside it).
                        writer.ChargeLong(length, valuePosition, document.Length);
                        if (span.Length - pos < DecodeRoom(length) + 2)
                        {
                            writer.Position = pos;
                            writer.Reserve(DecodeRoom(length) + 2);
                            span = writer.Buffer;
                            pos = writer.Position;
                        }

                        // Safe: 16 bytes are readable after the payload (checked) and DecodeRoom + 2 writable at pos.
                        ref var quote = ref Unsafe.Add(ref MemoryMarshal.GetReference(span), pos);
                        quote = (byte)'"';
                        var n = ShortStringCodec.DecodeUnchecked(ref MemoryMarshal.GetReference(document), p, p + length, ref Unsafe.Add(ref quote, 1));
                        if (n < 0)
                        {
                            ThrowInvalidCode(valuePosition);
                        }

                        Unsafe.Add(ref quote, n + 1) = (byte)'"';
                        pos += n + 2;
                        continue;
                    }
                }
                else if (type == (byte)BlittableType.Integer)
                {
                    var value = BlittableFormat.UnZigZag(BlittableFormat.ReadVarInt64(document, ref p));
                    if (span.Length - pos >= 20)
                    {
                        pos += FormatInteger(value, span.Slice(pos));
                        continue;
                    }
                }
                else if (type == (byte)BlittableType.Double)
                {
                    var length = BlittableFormat.ReadVarInt32(document, ref p);
                    if ((uint)length <= ShortCopy && document.Length - p >= ShortCopy && span.Length - pos >= ShortCopy)
                    {
                        // Safe: 32 bytes are readable at p and writable at pos (both checked).
                        Vector256.StoreUnsafe(
                            Vector256.LoadUnsafe(ref MemoryMarshal.GetReference(document), (nuint)p),
                            ref Unsafe.Add(ref MemoryMarshal.GetReference(span), pos));
                        pos += length;
                        continue;
                    }
                }
            }
            else if (type <= (byte)BlittableType.False && span.Length - pos >= 5)
            {
                var literal = type == (byte)BlittableType.Null ? "null"u8 : type == (byte)BlittableType.True ? "true"u8 : "false"u8;
                literal.CopyTo(span.Slice(pos));
                pos += literal.Length;
                continue;
            }

            writer.Position = pos;
            WriteMember(ref writer, document, position, names, back, type, depth);
            span = writer.Buffer;
            pos = writer.Position;
        }

        writer.Position = pos;
        writer.WriteByte((byte)'}');
    }

    /// <summary>Writes an integer (at least 20 bytes of room); returns its length.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static int FormatInteger(long value, Span<byte> destination)
    {
        if ((ulong)value < 10)
        {
            destination[0] = (byte)('0' + value);
            return 1;
        }

        if ((ulong)value < 100)
        {
            // Small counts, ages, quantities: no call into the formatter.
            destination[0] = (byte)('0' + (value / 10));
            destination[1] = (byte)('0' + (value % 10));
            return 2;
        }

        Utf8Formatter.TryFormat(value, destination, out var written);
        return written;
    }

    // Room reserved at the top of each property of the object loop: name (at most 36 bytes) and a
    // short string (at most 34).
    private const int LoopRoom = 72;
    private const int ShortCopy = 32;

    /// <summary>
    /// Writes "document[start, start + length)" at <paramref name="destination"/> with one 32-byte move;
    /// returns length + 2. The caller has checked that 32 bytes are readable at start and 34 writable
    /// at destination (length is at most 32).
    /// </summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static int StoreShortQuoted(ref byte destination, ReadOnlySpan<byte> document, int start, int length)
    {
        destination = (byte)'"';
        Vector256.StoreUnsafe(Vector256.LoadUnsafe(ref MemoryMarshal.GetReference(document), (nuint)start), ref Unsafe.Add(ref destination, 1));
        Unsafe.Add(ref destination, 1 + length) = (byte)'"';
        return length + 2;
    }

    /// <summary>Output room a dictionary-coded payload of <paramref name="length"/> bytes may need: its longest decoding plus the decoder's 32-byte slack.</summary>
    private static int DecodeRoom(int length) => (length * ShortStringCodec.MaxEntryLength) + 32;

    /// <summary>Decodes the dictionary-coded document[start, start + length) into <paramref name="destination"/>; throws for an invalid code in the string at <paramref name="position"/>.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static int DecodeOrThrow(ReadOnlySpan<byte> document, int start, int length, Span<byte> destination, int position)
    {
        // The unchecked decoder when its read slack and room are there (always, but for a corrupt document).
        var n = (uint)start <= (uint)document.Length && length >= 0 && document.Length - ShortStringCodec.UncheckedReadSlack - start >= length
            && destination.Length >= DecodeRoom(length)
            ? ShortStringCodec.DecodeUnchecked(ref MemoryMarshal.GetReference(document), start, start + length, ref MemoryMarshal.GetReference(destination))
            : ShortStringCodec.Decode(document, start, length, destination);
        if (n < 0)
        {
            ThrowInvalidCode(position);
        }

        return n;
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    [System.Diagnostics.CodeAnalysis.DoesNotReturn]
    private static void ThrowInvalidCode(int position) =>
        BlittableFormat.ThrowFormat("A dictionary-coded string at {0} holds an invalid code.", position);

    /// <summary>
    /// Writes the unescaped dictionary-coded document[start, start + length) quoted at the start of
    /// <paramref name="span"/> (at least <see cref="DecodeRoom"/> + 2 bytes); returns the bytes written.
    /// The decoder is handed the whole document, so literal runs near the string's end still move 8 or
    /// 16 bytes a step.
    /// </summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static int WriteDecodedQuoted(Span<byte> span, ReadOnlySpan<byte> document, int start, int length, int position)
    {
        span[0] = (byte)'"';
        var n = DecodeOrThrow(document, start, length, span.Slice(1, DecodeRoom(length)), position);
        span[n + 1] = (byte)'"';
        return n + 2;
    }

    /// <summary>
    /// Writes [,]"document[start, start + length)": with one 32-byte move; returns the bytes written. The
    /// caller has checked that 32 bytes are readable at start and 36 writable at destination.
    /// </summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static int StoreShortName(ref byte destination, ReadOnlySpan<byte> document, int start, int length, bool comma)
    {
        destination = (byte)',';
        var at = comma ? 1 : 0;
        at += StoreShortQuoted(ref Unsafe.Add(ref destination, at), document, start, length);
        Unsafe.Add(ref destination, at) = (byte)':';
        return at + 1;
    }

    private static void WriteArray(ref JsonOutput writer, in BlittableArray array, int depth, int names)
    {
        if (depth > BlittableFormat.MaxDepth)
        {
            BlittableFormat.ThrowFormat("The document nests deeper than {0} levels.", BlittableFormat.MaxDepth);
        }

        writer.WriteByte((byte)'[');
        var count = array.Length;
        writer.Charge(count, array.Position, array.Document.Length);

        var document = array.Document;
        var position = array.Position;
        var entries = array.EntriesOffset;
        var width = array.ValueWidth;
        for (var i = 0; i < count; i++)
        {
            if (i > 0)
            {
                writer.WriteByte((byte)',');
            }

            // The table entry read in place (the constructor checked the table fits): back distance, type.
            var entry = entries + (i * (width + 1));
            WriteMember(ref writer, document, position, names, BlittableFormat.ReadWidth(document, entry, width), document[entry + width], depth);
        }

        writer.WriteByte((byte)']');
    }

    /// <summary>One value of an object or array table: scalars and strings here, containers by recursion.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static void WriteMember(ref JsonOutput writer, ReadOnlySpan<byte> document, int tablePosition, int names, int back, byte type, int depth)
    {
        var valuePosition = tablePosition - back;
        if (back > 0 && valuePosition >= BlittableHeader.Size)
        {
            switch (type)
            {
                case (byte)BlittableType.String:
                    WriteRawString(ref writer, document, valuePosition);
                    return;
                case (byte)BlittableType.StringDictionary:
                    WriteDictionaryString(ref writer, document, valuePosition);
                    return;
                case (byte)BlittableType.Integer:
                    writer.WriteInteger(BlittableFormat.UnZigZag(BlittableFormat.ReadVarInt64(document, ref valuePosition)));
                    return;
                case (byte)BlittableType.Double:
                    var number = BlittableFormat.ReadLengthPrefixed(document, ref valuePosition);
                    writer.ChargeLong(number.Length, tablePosition - back, document.Length);
                    writer.WriteBytes(number);
                    return;
                case (byte)BlittableType.Object:
                    WriteObject(ref writer, new BlittableObject(document, valuePosition, names), depth + 1);
                    return;
                case (byte)BlittableType.Array:
                    WriteArray(ref writer, new BlittableArray(document, valuePosition), depth + 1, names);
                    return;
            }
        }
        else if (type <= (byte)BlittableType.False)
        {
            writer.WriteBytes(type == (byte)BlittableType.Null ? "null"u8 : type == (byte)BlittableType.True ? "true"u8 : "false"u8);
            return;
        }

        // LZ4 strings, and the checks and messages for anything malformed.
        WriteValue(ref writer, BlittableValue.Create(document, tablePosition, back, type), depth);
    }

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static void WriteRawString(ref JsonOutput writer, ReadOnlySpan<byte> document, int position)
    {
        var p = position;
        var header = BlittableFormat.ReadVarInt32(document, ref p);
        var length = header >> 1;
        if ((uint)length > (uint)(document.Length - p))
        {
            BlittableFormat.ThrowFormat("A string of {0} bytes at position {1} exceeds the document ({2} bytes).", length, p, document.Length);
        }

        writer.ChargeLong(length, position, document.Length);
        if ((header & 1) == 0)
        {
            writer.WriteQuoted(document, p, length);
            return;
        }

        var escapesAt = p + length;
        WriteEscaped(ref writer, document.Slice(p, length), BlittableFormat.ReadVarInt32(document, ref escapesAt), document, escapesAt);
    }

    private static void WriteDictionaryString(ref JsonOutput writer, ReadOnlySpan<byte> document, int position)
    {
        var start = position;
        var header = BlittableFormat.ReadVarInt32(document, ref start);
        var length = header >> 1;
        writer.ChargeLong(length, position, document.Length);
        if ((header & 1) == 0 && (uint)length <= (uint)(document.Length - start) && length <= 2048)
        {
            // Decode straight into the output: no length pre-scan, no intermediate buffer. The decoder
            // is handed the whole document so literal runs near the string's end still move 8 or 16
            // bytes a step.
            writer.Advance(WriteDecodedQuoted(writer.Reserve(DecodeRoom(length) + 2), document, start, length, position));
            return;
        }

        if ((header & 1) != 0 && (uint)length <= (uint)(document.Length - start) && length <= 2048 && TryWriteEscapedInPlace(ref writer, document, position, start, length))
        {
            return;
        }

        WriteCompressedString(ref writer, document, position, BlittableType.StringDictionary);
    }

    /// <summary>
    /// A dictionary-coded string with a few escapes: decoded straight into the output, then each escaped
    /// byte is widened in place from the last to the first, moving only the text after it.
    /// </summary>
    private static bool TryWriteEscapedInPlace(ref JsonOutput writer, ReadOnlySpan<byte> document, int position, int start, int length)
    {
        const int MaxEscapes = 16;
        var escapesAt = start + length;
        var count = BlittableFormat.ReadVarInt32(document, ref escapesAt);
        if (count > MaxEscapes)
        {
            return false;
        }

        var room = DecodeRoom(length);
        var span = writer.Reserve(room + 2 + (count * 5));
        span[0] = (byte)'"';
        var text = span.Slice(1);
        var n = DecodeOrThrow(document, start, length, text.Slice(0, room), position);

        Span<int> positions = stackalloc int[MaxEscapes];
        var at = 0;
        var done = 0;
        var extra = 0;
        for (var k = 0; k < count; k++)
        {
            at += BlittableFormat.ReadVarInt32(document, ref escapesAt);
            if (at < done || at >= n)
            {
                BlittableFormat.ThrowFormat("An escape position {0} is outside its string of {1} bytes.", at, n);
            }

            positions[k] = at;
            extra += EscapeSequenceLength(text[at]) - 1;
            done = at + 1;
        }

        var end = n;
        var shift = extra;
        for (var k = count - 1; k >= 0; k--)
        {
            var p = positions[k];
            var c = text[p];
            text.Slice(p + 1, end - p - 1).CopyTo(text.Slice(p + 1 + shift));
            shift -= EscapeSequenceLength(c) - 1;
            WriteEscapeSequence(c, text.Slice(p + shift));
            end = p;
        }

        text[n + extra] = (byte)'"';
        writer.Advance(n + extra + 2);
        return true;
    }

    private static void WriteValue(ref JsonOutput writer, BlittableValue value, int depth)
    {
        switch (value.StoredType)
        {
            case BlittableType.Null:
                writer.WriteBytes("null"u8);
                break;
            case BlittableType.True:
                writer.WriteBytes("true"u8);
                break;
            case BlittableType.False:
                writer.WriteBytes("false"u8);
                break;
            case BlittableType.Integer:
                value.TryGetInt64(out var integer);
                writer.WriteInteger(integer);
                break;
            case BlittableType.Double:
                value.TryGetNumberText(out var text);
                writer.WriteBytes(text);
                break;
            case BlittableType.Object:
                WriteObject(ref writer, value.GetObject(), depth + 1);
                break;
            case BlittableType.Array:
                WriteArray(ref writer, value.GetArray(), depth + 1, BlittableFormat.NamesOffset(value.Document));
                break;
            default:
                WriteString(ref writer, value.Document, value.Position, value.StoredType);
                break;
        }
    }

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static void WriteString(ref JsonOutput writer, ReadOnlySpan<byte> document, int position, BlittableType type)
    {
        if (type == BlittableType.String)
        {
            WriteRawString(ref writer, document, position);
            return;
        }

        if (type == BlittableType.StringDictionary)
        {
            WriteDictionaryString(ref writer, document, position);
            return;
        }

        WriteCompressedString(ref writer, document, position, type);
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    private static void WriteCompressedString(ref JsonOutput writer, ReadOnlySpan<byte> document, int position, BlittableType type)
    {
        if (type == BlittableType.StringDictionary)
        {
            // Reached from WriteDictionaryString for what its in-place paths do not take: many escapes,
            // long text, or a header that does not fit the document.
            var start = position;
            var header = BlittableFormat.ReadVarInt32(document, ref start);
            var length = header >> 1;
            if ((header & 1) != 0 && (uint)length <= (uint)(document.Length - start) && length <= 2048)
            {
                // With escapes: decode once into scratch (no length pre-scan), then copy between escapes.
                var room = DecodeRoom(length);
                byte[]? rentedScratch = null;
                var scratch = room <= 2048 ? stackalloc byte[2048] : (rentedScratch = ArrayPool<byte>.Shared.Rent(room));
                try
                {
                    var n = DecodeOrThrow(document, start, length, scratch.Slice(0, room), position);

                    var escapesAt = start + length;
                    var escapeCount = BlittableFormat.ReadVarInt32(document, ref escapesAt);
                    WriteEscaped(ref writer, scratch.Slice(0, n), escapeCount, document, escapesAt);
                }
                finally
                {
                    if (rentedScratch is not null)
                    {
                        ArrayPool<byte>.Shared.Return(rentedScratch);
                    }
                }

                return;
            }
        }

        var str = StringValue.Read(document, position, type);
        if (type != BlittableType.StringDictionary)
        {
            // Dictionary strings were charged by WriteDictionaryString, the one way here for them.
            writer.ChargeLong(str.Payload.Length, position, document.Length);
        }

        var p = str.EscapesPosition;
        var escapes = str.HasEscapes ? BlittableFormat.ReadVarInt32(document, ref p) : 0;
        if (!str.IsCompressed)
        {
            WriteStringText(ref writer, str.Payload, escapes, document, p);
            return;
        }

        if (str.DecodedLength <= 1024)
        {
            Span<byte> buffer = stackalloc byte[1024];
            var n = str.Decode(buffer);
            WriteStringText(ref writer, buffer.Slice(0, n), escapes, document, p);
            return;
        }

        var rented = ArrayPool<byte>.Shared.Rent(str.DecodedLength);
        try
        {
            var n = str.Decode(rented);
            WriteStringText(ref writer, rented.AsSpan(0, n), escapes, document, p);
        }
        finally
        {
            ArrayPool<byte>.Shared.Return(rented);
        }
    }

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static void WriteStringText(ref JsonOutput writer, scoped ReadOnlySpan<byte> text, int escapes, ReadOnlySpan<byte> document, int escapePosition)
    {
        if (escapes == 0)
        {
            writer.WriteQuoted(text);
            return;
        }

        WriteEscaped(ref writer, text, escapes, document, escapePosition);
    }

    private static void WriteEscaped(ref JsonOutput writer, scoped ReadOnlySpan<byte> text, int escapes, ReadOnlySpan<byte> document, int p)
    {
        writer.WriteByte((byte)'"');
        var done = 0;
        var at = 0;
        for (var i = 0; i < escapes; i++)
        {
            at += BlittableFormat.ReadVarInt32(document, ref p);
            if (at < done || at >= text.Length)
            {
                BlittableFormat.ThrowFormat("An escape position {0} is outside its string of {1} bytes.", at, text.Length);
            }

            writer.WriteBytes(text.Slice(done, at - done));
            writer.WriteEscape(text[at]);
            done = at + 1;
        }

        writer.WriteBytes(text.Slice(done));
        writer.WriteByte((byte)'"');
    }

    /// <summary>The letter of the two-byte escape of <paramref name="c"/> (<c>\n</c> gives <c>n</c>), or 0 when it has none.</summary>
    private static byte ShortEscape(byte c) => c switch
    {
        (byte)'"' => (byte)'"',
        (byte)'\\' => (byte)'\\',
        (byte)'\n' => (byte)'n',
        (byte)'\r' => (byte)'r',
        (byte)'\t' => (byte)'t',
        (byte)'\b' => (byte)'b',
        (byte)'\f' => (byte)'f',
        _ => 0,
    };

    /// <summary>Length of the JSON text <see cref="WriteEscapeSequence"/> writes for <paramref name="c"/>.</summary>
    private static int EscapeSequenceLength(byte c) => ShortEscape(c) != 0 ? 2 : c >= 0x20 ? 1 : 6;

    /// <summary>Writes the escape for <paramref name="c"/> (at least 6 bytes of room); returns its length.</summary>
    private static int WriteEscapeSequence(byte c, Span<byte> span)
    {
        var letter = ShortEscape(c);
        if (letter != 0)
        {
            span[0] = (byte)'\\';
            span[1] = letter;
            return 2;
        }

        if (c >= 0x20)
        {
            // Not a character that needs escaping (only a corrupt escape list points here).
            span[0] = c;
            return 1;
        }

        span[0] = (byte)'\\';
        span[1] = (byte)'u';
        span[2] = (byte)'0';
        span[3] = (byte)'0';
        span[4] = (byte)"0123456789abcdef"[c >> 4];
        span[5] = (byte)"0123456789abcdef"[c & 0xF];
        return 6;
    }

    /// <summary>Batches small writes into spans obtained from the IBufferWriter; holds the walk's budget of values.</summary>
    private ref struct JsonOutput
    {
        private const int MinimumBuffer = 4096;
        private readonly IBufferWriter<byte> _output;
        private Span<byte> _span;
        private int _pos;
        private int _budget;

        /// <param name="documentLength">Length of the document written: the most values a well-formed one holds.</param>
        public JsonOutput(IBufferWriter<byte> output, int documentLength)
        {
            _output = output;
            _span = default;
            _pos = 0;
            _budget = documentLength;
        }

        /// <summary>Takes a table's <paramref name="count"/> values from the walk's budget (see "Shared values" in BlittableFormat.cs).</summary>
        [MethodImpl(MethodImplOptions.AggressiveInlining)]
        public void Charge(int count, int position, int documentLength) => BlittableFormat.Charge(ref _budget, count, position, documentLength);

        /// <summary>
        /// Takes a string's or number's stored bytes from the walk's budget when longer than
        /// <see cref="BlittableFormat.LongValueBytes"/>: this bounds what a document whose entries share
        /// one long value can write to a few hundred times its length.
        /// </summary>
        [MethodImpl(MethodImplOptions.AggressiveInlining)]
        public void ChargeLong(int storedLength, int position, int documentLength) => BlittableFormat.ChargeLong(ref _budget, storedLength, position, documentLength);

        [MethodImpl(MethodImplOptions.AggressiveInlining)]
        public void WriteByte(byte value)
        {
            if (_pos >= _span.Length)
            {
                Refill(1);
            }

            _span[_pos++] = value;
        }

        [MethodImpl(MethodImplOptions.AggressiveInlining)]
        public void WriteBytes(scoped ReadOnlySpan<byte> bytes)
        {
            if (bytes.Length <= _span.Length - _pos)
            {
                bytes.CopyTo(_span.Slice(_pos));
                _pos += bytes.Length;
                return;
            }

            WriteBytesSlow(bytes);
        }

        /// <summary>A span of at least <paramref name="size"/> bytes at the current position; follow with <see cref="Advance"/>.</summary>
        public Span<byte> Reserve(int size)
        {
            if (_span.Length - _pos < size)
            {
                Refill(size);
            }

            return _span.Slice(_pos);
        }

        public void Advance(int count) => _pos += count;

        /// <summary>The whole current span and the position in it, for loops that keep both in locals.</summary>
        public readonly Span<byte> Buffer => _span;

        public int Position
        {
            readonly get => _pos;
            set => _pos = value;
        }

        /// <summary>Writes "text" for the unescaped document[start, start + length).</summary>
        [MethodImpl(MethodImplOptions.AggressiveInlining)]
        public void WriteQuoted(ReadOnlySpan<byte> document, int start, int length)
        {
            if (length <= ShortCopy && document.Length - start >= ShortCopy)
            {
                if (_span.Length - _pos < ShortCopy + 2)
                {
                    Refill(ShortCopy + 2);
                }

                // Safe: 32 bytes are readable at start (checked) and ShortCopy + 2 writable at _pos (checked).
                _pos += StoreShortQuoted(ref Unsafe.Add(ref MemoryMarshal.GetReference(_span), _pos), document, start, length);
                return;
            }

            WriteQuoted(document.Slice(start, length));
        }

        /// <summary>Writes [,]"name": in one step.</summary>
        [MethodImpl(MethodImplOptions.AggressiveInlining)]
        public void WriteName(scoped ReadOnlySpan<byte> name, bool comma)
        {
            if (name.Length + 4 > _span.Length - _pos)
            {
                Refill(name.Length + 4);
            }

            var span = _span;
            var pos = _pos;
            if (comma)
            {
                span[pos++] = (byte)',';
            }

            span[pos] = (byte)'"';
            BlittableFormat.SmallCopy(name, span.Slice(pos + 1));
            pos += name.Length + 1;
            span[pos] = (byte)'"';
            span[pos + 1] = (byte)':';
            _pos = pos + 2;
        }

        [MethodImpl(MethodImplOptions.AggressiveInlining)]
        public void WriteQuoted(scoped ReadOnlySpan<byte> bytes)
        {
            if (bytes.Length + 2 <= _span.Length - _pos)
            {
                var span = _span;
                var pos = _pos;
                span[pos] = (byte)'"';
                BlittableFormat.SmallCopy(bytes, span.Slice(pos + 1));
                pos += bytes.Length + 1;
                span[pos] = (byte)'"';
                _pos = pos + 1;
                return;
            }

            WriteByte((byte)'"');
            WriteBytesSlow(bytes);
            WriteByte((byte)'"');
        }

        private void WriteBytesSlow(scoped ReadOnlySpan<byte> bytes)
        {
            while (bytes.Length > 0)
            {
                if (_pos >= _span.Length)
                {
                    Refill(Math.Min(bytes.Length, 64 * 1024));
                }

                var n = Math.Min(bytes.Length, _span.Length - _pos);
                bytes.Slice(0, n).CopyTo(_span.Slice(_pos));
                _pos += n;
                bytes = bytes.Slice(n);
            }
        }

        public void WriteInteger(long value)
        {
            if (_span.Length - _pos < 20)
            {
                Refill(20);
            }

            _pos += FormatInteger(value, _span.Slice(_pos));
        }

        public void WriteEscape(byte c)
        {
            if (_span.Length - _pos < 6)
            {
                Refill(6);
            }

            _pos += WriteEscapeSequence(c, _span.Slice(_pos));
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        private void Refill(int needed)
        {
            if (_pos > 0)
            {
                _output.Advance(_pos);
            }

            _span = _output.GetSpan(Math.Max(needed, MinimumBuffer));
            _pos = 0;
        }

        public void Flush()
        {
            if (_pos > 0)
            {
                _output.Advance(_pos);
            }

            _span = default;
            _pos = 0;
        }
    }
}
