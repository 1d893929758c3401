using System.Buffers;
using System.Text;
using Jackdaw.Server.Errors;

namespace Jackdaw.Server.Wire;

/// <summary>
/// Reads a raw query string (<c>?a=1&amp;b=x%20y</c>) without building a dictionary: parameters are
/// found by name on demand and values are percent-decoded (UTF-8, <c>+</c> as space) into a
/// caller-provided buffer. Names compare ordinally, case-insensitively (<c>?ID=</c> = <c>?id=</c>).
/// </summary>
public readonly ref struct UrlQuery
{
    private readonly ReadOnlySpan<char> _raw;

    public UrlQuery(ReadOnlySpan<char> raw) => _raw = raw.StartsWith('?') ? raw[1..] : raw;

    public bool IsEmpty => _raw.IsEmpty;

    /// <summary>Enumerates every <c>name=value</c> pair, raw (not decoded).</summary>
    public Enumerator GetEnumerator() => new(_raw);

    /// <summary>The raw (still encoded) value of the first parameter called <paramref name="name"/>.</summary>
    public bool TryGetRaw(ReadOnlySpan<char> name, out ReadOnlySpan<char> raw)
    {
        foreach (var parameter in this)
        {
            if (parameter.NameEquals(name))
            {
                raw = parameter.RawValue;
                return true;
            }
        }
        raw = default;
        return false;
    }

    /// <summary>The decoded value of the first parameter called <paramref name="name"/>, as a new string; null when absent.</summary>
    public string? GetString(ReadOnlySpan<char> name) => TryGetRaw(name, out var raw) ? Decode(raw, name) : null;

    /// <summary>
    /// A non-negative integer parameter: <paramref name="defaultValue"/> when absent, or throws a
    /// 400 error naming the parameter when it is not a number in [<paramref name="min"/>, <paramref name="max"/>].
    /// </summary>
    public int GetInt32(ReadOnlySpan<char> name, int defaultValue, int min = 0, int max = int.MaxValue) =>
        (int)GetInt64(name, defaultValue, min, max);

    /// <summary>A non-negative 64-bit integer parameter (<see cref="GetInt32"/>'s rules).</summary>
    public long GetInt64(ReadOnlySpan<char> name, long defaultValue, long min = 0, long max = long.MaxValue)
    {
        if (!TryGetRaw(name, out var raw))
        {
            return defaultValue;
        }
        if (!long.TryParse(raw, System.Globalization.NumberStyles.None, System.Globalization.CultureInfo.InvariantCulture, out var value) || value < min || value > max)
        {
            throw new BadRequestException($"Query parameter '{name}' must be an integer from {min} to {max}; got '{raw}'.");
        }
        return value;
    }

    /// <summary>
    /// Percent-decodes a raw value; invalid escapes are kept as typed. Decoded bytes that are not
    /// valid UTF-8 are a 400 error naming the parameter and the byte, never replaced: an id or a
    /// name is stored exactly as the client meant it or not at all.
    /// </summary>
    public static string Decode(ReadOnlySpan<char> raw, ReadOnlySpan<char> name)
    {
        if (raw.IndexOfAny('%', '+') < 0)
        {
            return raw.ToString();
        }
        var rented = ArrayPool<byte>.Shared.Rent(raw.Length * 3);
        try
        {
            var length = 0;
            for (var i = 0; i < raw.Length; i++)
            {
                var c = raw[i];
                if (c == '+')
                {
                    rented[length++] = (byte)' ';
                }
                else if (c == '%' && i + 2 < raw.Length && IsHex(raw[i + 1]) && IsHex(raw[i + 2]))
                {
                    rented[length++] = (byte)((HexValue(raw[i + 1]) << 4) | HexValue(raw[i + 2]));
                    i += 2;
                }
                else
                {
                    length += Encoding.UTF8.GetBytes(raw.Slice(i, char.IsHighSurrogate(c) && i + 1 < raw.Length ? 2 : 1), rented.AsSpan(length));
                    if (char.IsHighSurrogate(c) && i + 1 < raw.Length)
                    {
                        i++;
                    }
                }
            }
            var decoded = rented.AsSpan(0, length);
            if (!System.Text.Unicode.Utf8.IsValid(decoded))
            {
                ThrowInvalidUtf8(name, decoded);
            }
            return Encoding.UTF8.GetString(decoded);
        }
        finally
        {
            ArrayPool<byte>.Shared.Return(rented);
        }
    }

    [System.Diagnostics.CodeAnalysis.DoesNotReturn]
    private static void ThrowInvalidUtf8(ReadOnlySpan<char> name, ReadOnlySpan<byte> decoded)
    {
        System.Text.Unicode.Utf8.ToUtf16(decoded, new char[decoded.Length], out var valid, out _, replaceInvalidSequences: false);
        throw new BadRequestException(
            $"Query parameter '{name}' is not valid UTF-8 once percent-decoded: byte 0x{decoded[valid]:X2} at byte {valid} " +
            "does not start or continue a valid character. Percent-encode the UTF-8 bytes of the text.");
    }

    private static bool IsHex(char c) => char.IsAsciiHexDigit(c);

    private static int HexValue(char c) => c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10;

    public readonly ref struct Parameter(ReadOnlySpan<char> name, ReadOnlySpan<char> rawValue)
    {
        public ReadOnlySpan<char> RawName { get; } = name;

        public ReadOnlySpan<char> RawValue { get; } = rawValue;

        public bool NameEquals(ReadOnlySpan<char> name) => RawName.Equals(name, StringComparison.OrdinalIgnoreCase);
    }

    public ref struct Enumerator(ReadOnlySpan<char> remaining)
    {
        private ReadOnlySpan<char> _remaining = remaining;

        public Parameter Current { get; private set; }

        public bool MoveNext()
        {
            while (!_remaining.IsEmpty)
            {
                var amp = _remaining.IndexOf('&');
                var pair = amp < 0 ? _remaining : _remaining[..amp];
                _remaining = amp < 0 ? default : _remaining[(amp + 1)..];
                if (pair.IsEmpty)
                {
                    continue;
                }
                var eq = pair.IndexOf('=');
                Current = eq < 0 ? new Parameter(pair, default) : new Parameter(pair[..eq], pair[(eq + 1)..]);
                return true;
            }
            return false;
        }
    }
}
