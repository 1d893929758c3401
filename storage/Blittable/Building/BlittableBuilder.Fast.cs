using System.Buffers;
using System.Runtime.CompilerServices;

namespace Jackdaw.Storage.Blittable;

// Fast path for a whole document in one span: a purpose-built scanner feeding the token API
// directly, about twice as cheap per token as Utf8JsonReader's general state machine. It only has
// to be right on valid JSON and to *notice* anything else: on any doubt it gives up (returns
// false) and the caller re-parses with Utf8JsonReader, which reports the exact error. Errors the
// builder itself raises (TooDeep, DuplicateProperty) are thrown from here directly, at the same
// positions the reader path would report.
public sealed partial class BlittableBuilder
{
    private static readonly SearchValues<byte> StringStops = SearchValues.Create(
        [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, (byte)'"', (byte)'\\']);

    private bool TryParseFast(ReadOnlySpan<byte> json)
    {
        var pos = SkipWhitespace(json, 0);
        if (pos >= json.Length || json[pos] != (byte)'{')
        {
            return false;
        }

        BeginObject(pos);
        pos++;

        // Loop invariant: we are inside the container on top of the frame stack, right after its
        // opening bracket (expectFirst) or after a value.
        var afterOpen = true;
        while (true)
        {
            pos = SkipWhitespace(json, pos);
            if (pos >= json.Length)
            {
                return false;
            }

            var isObject = _frames[_depth - 1].IsObject;
            var c = json[pos];
            if (afterOpen)
            {
                if (c == (byte)(isObject ? '}' : ']'))
                {
                    pos++;
                    if (!CloseFast(isObject))
                    {
                        return IsOnlyWhitespace(json, pos);
                    }

                    afterOpen = false;
                    continue;
                }
            }
            else
            {
                if (c == (byte)',')
                {
                    pos = SkipWhitespace(json, pos + 1);
                    if (pos >= json.Length)
                    {
                        return false;
                    }

                    c = json[pos];
                }
                else if (c == (byte)(isObject ? '}' : ']'))
                {
                    pos++;
                    if (!CloseFast(isObject))
                    {
                        return IsOnlyWhitespace(json, pos);
                    }

                    continue;
                }
                else
                {
                    return false;
                }
            }

            afterOpen = false;
            if (isObject)
            {
                // A property name, a colon, then the value.
                var nameStart = pos;
                if (c != (byte)'"' || !TryScanString(json, ref pos, out var name, out var escaped))
                {
                    return false;
                }

                PropertyName(name, escaped, nameStart);
                pos = SkipWhitespace(json, pos);
                if (pos >= json.Length || json[pos] != (byte)':')
                {
                    return false;
                }

                pos = SkipWhitespace(json, pos + 1);
                if (pos >= json.Length)
                {
                    return false;
                }

                c = json[pos];
            }

            switch (c)
            {
                case (byte)'"':
                    {
                        if (!TryScanString(json, ref pos, out var value, out var escaped))
                        {
                            return false;
                        }

                        WriteString(value, escaped);
                        break;
                    }

                case (byte)'{':
                    BeginObject(pos);
                    pos++;
                    afterOpen = true;
                    break;
                case (byte)'[':
                    BeginArray(pos);
                    pos++;
                    afterOpen = true;
                    break;
                case (byte)'t':
                    if (!json.Slice(pos).StartsWith("true"u8))
                    {
                        return false;
                    }

                    WriteBoolean(true);
                    pos += 4;
                    break;
                case (byte)'f':
                    if (!json.Slice(pos).StartsWith("false"u8))
                    {
                        return false;
                    }

                    WriteBoolean(false);
                    pos += 5;
                    break;
                case (byte)'n':
                    if (!json.Slice(pos).StartsWith("null"u8))
                    {
                        return false;
                    }

                    WriteNull();
                    pos += 4;
                    break;
                default:
                    if (!TryScanNumber(json, ref pos))
                    {
                        return false;
                    }

                    break;
            }
        }
    }

    /// <summary>Closes the container on top; false when that was the root (the document is done).</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private bool CloseFast(bool isObject)
    {
        if (isObject)
        {
            EndObject();
        }
        else
        {
            EndArray();
        }

        return _depth > 0;
    }

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static int SkipWhitespace(ReadOnlySpan<byte> json, int pos)
    {
        while ((uint)pos < (uint)json.Length && json[pos] <= (byte)' ' && json[pos] is (byte)' ' or (byte)'\n' or (byte)'\r' or (byte)'\t')
        {
            pos++;
        }

        return pos;
    }

    private static bool IsOnlyWhitespace(ReadOnlySpan<byte> json, int pos) => SkipWhitespace(json, pos) == json.Length;

    /// <summary>Scans a string starting at its opening quote; pos ends after the closing quote.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private bool TryScanString(ReadOnlySpan<byte> json, ref int pos, out ReadOnlySpan<byte> value, out bool escaped)
    {
        var start = pos + 1;
        var rest = json.Slice(start);
        var k = rest.IndexOfAny(StringStops);
        escaped = false;
        if (k >= 0 && rest[k] == (byte)'"')
        {
            value = rest.Slice(0, k);
            pos = start + k + 1;
            return true;
        }

        return TryScanEscapedString(json, ref pos, out value, out escaped);
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    private bool TryScanEscapedString(ReadOnlySpan<byte> json, ref int pos, out ReadOnlySpan<byte> value, out bool escaped)
    {
        value = default;
        escaped = true;
        var start = pos + 1;
        var rest = json.Slice(start);
        var k = 0;
        while (true)
        {
            var n = rest.Slice(k).IndexOfAny(StringStops);
            if (n < 0)
            {
                return false;
            }

            k += n;
            var c = rest[k];
            if (c == (byte)'"')
            {
                break;
            }

            if (c != (byte)'\\')
            {
                return false;
            }

            k += 2;
            if (k > rest.Length)
            {
                return false;
            }
        }

        if (!TryUnescape(rest.Slice(0, k), out value))
        {
            return false;
        }

        pos = start + k + 1;
        return true;
    }

    private bool TryUnescape(ReadOnlySpan<byte> raw, out ReadOnlySpan<byte> value)
    {
        value = default;
        if (_scratch.Length < raw.Length)
        {
            _scratch = new byte[Math.Max(raw.Length, _scratch.Length * 2)];
        }

        var output = _scratch.AsSpan();
        var o = 0;
        for (var i = 0; i < raw.Length; i++)
        {
            // Copy the run up to the next backslash in one go (text between escapes is the bulk).
            var run = raw.Slice(i).IndexOf((byte)'\\');
            if (run < 0)
            {
                raw.Slice(i).CopyTo(output.Slice(o));
                o += raw.Length - i;
                break;
            }

            raw.Slice(i, run).CopyTo(output.Slice(o));
            o += run;
            i += run;
            if (++i >= raw.Length)
            {
                return false;
            }

            switch (raw[i])
            {
                case (byte)'"':
                    output[o++] = (byte)'"';
                    break;
                case (byte)'\\':
                    output[o++] = (byte)'\\';
                    break;
                case (byte)'/':
                    output[o++] = (byte)'/';
                    break;
                case (byte)'b':
                    output[o++] = (byte)'\b';
                    break;
                case (byte)'f':
                    output[o++] = (byte)'\f';
                    break;
                case (byte)'n':
                    output[o++] = (byte)'\n';
                    break;
                case (byte)'r':
                    output[o++] = (byte)'\r';
                    break;
                case (byte)'t':
                    output[o++] = (byte)'\t';
                    break;
                case (byte)'u':
                    {
                        if (!TryHex4(raw, i + 1, out var code))
                        {
                            return false;
                        }

                        i += 4;
                        if (code is >= 0xDC00 and <= 0xDFFF)
                        {
                            return false;
                        }

                        if (code is >= 0xD800 and <= 0xDBFF)
                        {
                            if (i + 6 >= raw.Length || raw[i + 1] != (byte)'\\' || raw[i + 2] != (byte)'u'
                                || !TryHex4(raw, i + 3, out var low) || low is < 0xDC00 or > 0xDFFF)
                            {
                                return false;
                            }

                            i += 6;
                            code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00);
                        }

                        // An escape is at least 6 bytes and its UTF-8 at most 4: the output never outgrows the input.
                        o += new System.Text.Rune(code).EncodeToUtf8(output.Slice(o));
                        break;
                    }

                default:
                    return false;
            }
        }

        value = output.Slice(0, o);
        return true;
    }

    private static bool TryHex4(ReadOnlySpan<byte> raw, int at, out int value)
    {
        value = 0;
        if (at + 4 > raw.Length)
        {
            return false;
        }

        for (var j = 0; j < 4; j++)
        {
            var h = raw[at + j];
            int d;
            if (h is >= (byte)'0' and <= (byte)'9')
            {
                d = h - '0';
            }
            else if ((h | 0x20) is >= (byte)'a' and <= (byte)'f')
            {
                d = (h | 0x20) - 'a' + 10;
            }
            else
            {
                return false;
            }

            value = (value << 4) | d;
        }

        return true;
    }

    /// <summary>Scans a number by the JSON grammar and writes it; false on anything else.</summary>
    private bool TryScanNumber(ReadOnlySpan<byte> json, ref int pos)
    {
        var start = pos;
        var p = pos;
        if (p < json.Length && json[p] == (byte)'-')
        {
            p++;
        }

        if (p >= json.Length)
        {
            return false;
        }

        if (json[p] == (byte)'0')
        {
            p++;
        }
        else if (IsDigit(json[p]))
        {
            while (p < json.Length && IsDigit(json[p]))
            {
                p++;
            }
        }
        else
        {
            return false;
        }

        var integer = true;
        if (p < json.Length && json[p] == (byte)'.')
        {
            integer = false;
            p++;
            if (p >= json.Length || !IsDigit(json[p]))
            {
                return false;
            }

            while (p < json.Length && IsDigit(json[p]))
            {
                p++;
            }
        }

        if (p < json.Length && (json[p] | 0x20) == (byte)'e')
        {
            integer = false;
            p++;
            if (p < json.Length && json[p] is (byte)'+' or (byte)'-')
            {
                p++;
            }

            if (p >= json.Length || !IsDigit(json[p]))
            {
                return false;
            }

            while (p < json.Length && IsDigit(json[p]))
            {
                p++;
            }
        }

        var text = json.Slice(start, p - start);
        if (integer && TryParseCanonicalInteger(text, out var value))
        {
            WriteInteger(value);
        }
        else
        {
            if (_mode == BlittableMode.Disk && !IsFiniteNumber(text))
            {
                return false;
            }

            WriteNumberText(text);
        }

        pos = p;
        return true;
    }

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static bool IsDigit(byte c) => (uint)(c - '0') <= 9;
}
