using System.Buffers;
using System.Globalization;
using System.Runtime.CompilerServices;
using System.Text;

namespace Jackdaw.Storage.Blittable;

/// <summary>A value inside a blittable document: typed accessors, no allocation except <see cref="GetString"/>.</summary>
[SkipLocalsInit]
public readonly ref struct BlittableValue
{
    private readonly ReadOnlySpan<byte> _document;
    private readonly int _position;
    private readonly BlittableType _type;

    private BlittableValue(ReadOnlySpan<byte> document, int position, BlittableType type)
    {
        _document = document;
        _position = position;
        _type = type;
    }

    /// <summary>Builds a value from a table entry, checking the type byte and the back offset.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal static BlittableValue Create(ReadOnlySpan<byte> document, int tablePosition, int back, byte type)
    {
        if (type > BlittableFormat.MaxTypeValue)
        {
            BlittableFormat.ThrowFormat("Unknown value type {0} in the table at {1}.", type, tablePosition);
        }

        if (type <= (byte)BlittableType.False)
        {
            return new BlittableValue(document, 0, (BlittableType)type);
        }

        var position = tablePosition - back;
        if (back <= 0 || position < BlittableHeader.Size)
        {
            BlittableFormat.ThrowFormat("A value offset {0} in the table at {1} points outside the document.", back, tablePosition);
        }

        return new BlittableValue(document, position, (BlittableType)type);
    }

    public BlittableToken Type => BlittableFormat.ToToken(_type);

    internal BlittableType StoredType => _type;

    internal int Position => _position;

    internal ReadOnlySpan<byte> Document => _document;

    /// <summary>True when the value is a string stored compressed (its UTF-8 is not available as a span).</summary>
    public bool IsCompressed => _type is BlittableType.StringDictionary or BlittableType.StringLz4;

    public bool TryGetInt64(out long value)
    {
        if (_type == BlittableType.Integer)
        {
            var p = _position;
            value = BlittableFormat.UnZigZag(BlittableFormat.ReadVarInt64(_document, ref p));
            return true;
        }

        if (_type == BlittableType.Double)
        {
            return long.TryParse(GetNumberText(), NumberStyles.Integer, CultureInfo.InvariantCulture, out value);
        }

        value = 0;
        return false;
    }

    public bool TryGetDouble(out double value)
    {
        if (_type == BlittableType.Integer)
        {
            TryGetInt64(out var integer);
            value = integer;
            return true;
        }

        if (_type == BlittableType.Double)
        {
            return double.TryParse(GetNumberText(), NumberStyles.Float, CultureInfo.InvariantCulture, out value);
        }

        value = 0;
        return false;
    }

    public bool TryGetDecimal(out decimal value)
    {
        if (_type == BlittableType.Integer)
        {
            TryGetInt64(out var integer);
            value = integer;
            return true;
        }

        if (_type == BlittableType.Double)
        {
            return decimal.TryParse(GetNumberText(), NumberStyles.Float, CultureInfo.InvariantCulture, out value);
        }

        value = 0;
        return false;
    }

    /// <summary>The number exactly as written in the input (for Double values).</summary>
    public bool TryGetNumberText(out ReadOnlySpan<byte> text)
    {
        if (_type != BlittableType.Double)
        {
            text = default;
            return false;
        }

        text = GetNumberText();
        return true;
    }

    private ReadOnlySpan<byte> GetNumberText()
    {
        var p = _position;
        return BlittableFormat.ReadLengthPrefixed(_document, ref p);
    }

    public bool GetBoolean()
    {
        if (_type == BlittableType.True)
        {
            return true;
        }

        if (_type != BlittableType.False)
        {
            ThrowWrongType("a boolean");
        }

        return false;
    }

    [System.Diagnostics.CodeAnalysis.DoesNotReturn]
    [MethodImpl(MethodImplOptions.NoInlining)]
    private void ThrowWrongType(string expected) => throw new InvalidOperationException($"The value is {Type}, not {expected}.");

    public BlittableObject GetObject()
    {
        if (_type != BlittableType.Object)
        {
            ThrowWrongType("an object");
        }

        return new BlittableObject(_document, _position);
    }

    public BlittableArray GetArray()
    {
        if (_type != BlittableType.Array)
        {
            ThrowWrongType("an array");
        }

        return new BlittableArray(_document, _position);
    }

    /// <summary>The string as UTF-8 when it is stored uncompressed (always in Memory mode).</summary>
    public bool TryGetRawUtf8(out ReadOnlySpan<byte> utf8)
    {
        if (_type == BlittableType.String)
        {
            var p = _position;
            utf8 = BlittableFormat.ReadStringBytes(_document, ref p, out _);
            return true;
        }

        utf8 = default;
        return false;
    }

    /// <summary>Length in bytes of the string's UTF-8 form.</summary>
    public int GetUtf8Length()
    {
        var str = StringValue.Read(_document, _position, _type);
        return str.DecodedLength;
    }

    /// <summary>Copies (decompressing when needed) the string's UTF-8 into <paramref name="destination"/>.</summary>
    public bool TryGetUtf8(Span<byte> destination, out int written)
    {
        var str = StringValue.Read(_document, _position, _type);
        if (destination.Length < str.DecodedLength)
        {
            written = 0;
            return false;
        }

        written = str.Decode(destination);
        return true;
    }

    /// <summary>The string, or null for a JSON null; throws for other types.</summary>
    public string? GetString()
    {
        if (_type == BlittableType.Null)
        {
            return null;
        }

        var str = StringValue.Read(_document, _position, _type);
        if (!str.IsCompressed)
        {
            return Encoding.UTF8.GetString(str.Payload);
        }

        if (str.DecodedLength <= 512)
        {
            Span<byte> buffer = stackalloc byte[512];
            var n = str.Decode(buffer);
            return Encoding.UTF8.GetString(buffer.Slice(0, n));
        }

        var rented = ArrayPool<byte>.Shared.Rent(str.DecodedLength);
        try
        {
            var n = str.Decode(rented);
            return Encoding.UTF8.GetString(rented, 0, n);
        }
        finally
        {
            ArrayPool<byte>.Shared.Return(rented);
        }
    }

    /// <summary>Compares the string value with UTF-8 text without allocating.</summary>
    public bool ValueEquals(scoped ReadOnlySpan<byte> utf8)
    {
        if (_type is not (BlittableType.String or BlittableType.StringDictionary or BlittableType.StringLz4))
        {
            return false;
        }

        var str = StringValue.Read(_document, _position, _type);
        if (!str.IsCompressed)
        {
            return str.Payload.SequenceEqual(utf8);
        }

        if (str.DecodedLength != utf8.Length)
        {
            return false;
        }

        var rented = ArrayPool<byte>.Shared.Rent(str.DecodedLength);
        try
        {
            var n = str.Decode(rented);
            return rented.AsSpan(0, n).SequenceEqual(utf8);
        }
        finally
        {
            ArrayPool<byte>.Shared.Return(rented);
        }
    }

    public override string ToString() => Type switch
    {
        BlittableToken.String => GetString() ?? string.Empty,
        BlittableToken.Integer => TryGetInt64(out var v) ? v.ToString(CultureInfo.InvariantCulture) : string.Empty,
        BlittableToken.Double => Encoding.ASCII.GetString(GetNumberText()),
        _ => Type.ToString(),
    };
}

/// <summary>A decoded string header: payload (raw or compressed), decoded length, escape list position.</summary>
internal readonly ref struct StringValue
{
    public readonly ReadOnlySpan<byte> Payload;
    public readonly int DecodedLength;
    public readonly int EscapesPosition;   // just after the payload: where the escape list is, if any
    public readonly bool HasEscapes;
    public readonly BlittableType Type;

    private StringValue(ReadOnlySpan<byte> payload, int decodedLength, int escapesPosition, bool hasEscapes, BlittableType type)
    {
        Payload = payload;
        DecodedLength = decodedLength;
        EscapesPosition = escapesPosition;
        HasEscapes = hasEscapes;
        Type = type;
    }

    public bool IsCompressed => Type != BlittableType.String;

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public static StringValue Read(ReadOnlySpan<byte> document, int position, BlittableType type)
    {
        var p = position;
        if (type == BlittableType.String)
        {
            var raw = BlittableFormat.ReadStringBytes(document, ref p, out var escaped);
            return new StringValue(raw, raw.Length, p, escaped, type);
        }

        if (type is not (BlittableType.StringDictionary or BlittableType.StringLz4))
        {
            ThrowNotAString(type);
        }

        var header = BlittableFormat.ReadVarInt32(document, ref p);
        var compressedLength = header >> 1;
        var decodedLength = type == BlittableType.StringLz4 ? BlittableFormat.ReadVarInt32(document, ref p) : 0;
        if ((uint)compressedLength > (uint)(document.Length - p))
        {
            BlittableFormat.ThrowFormat("A compressed string of {0} bytes at {1} runs past the end of the document.", compressedLength, position);
        }

        if (type == BlittableType.StringDictionary)
        {
            decodedLength = ShortStringCodec.DecodedLength(document.Slice(p, compressedLength));
            if (decodedLength < 0)
            {
                BlittableFormat.ThrowFormat("A dictionary-coded string at {0} holds an invalid code.", position);
            }
        }

        if (decodedLength > StringCompression.MaxExpansion * (long)Math.Max(compressedLength, 1))
        {
            BlittableFormat.ThrowFormat("A compressed string at {0} claims {1} bytes from {2}.", position, decodedLength, compressedLength);
        }

        return new StringValue(document.Slice(p, compressedLength), decodedLength, p + compressedLength, (header & 1) != 0, type);
    }

    [System.Diagnostics.CodeAnalysis.DoesNotReturn]
    private static void ThrowNotAString(BlittableType type) =>
        throw new InvalidOperationException($"The value is {BlittableFormat.ToToken(type)}, not a string.");

    /// <summary>Writes the UTF-8 text into <paramref name="destination"/> (at least DecodedLength bytes).</summary>
    public int Decode(Span<byte> destination)
    {
        if (Type == BlittableType.String)
        {
            Payload.CopyTo(destination);
            return Payload.Length;
        }

        return StringCompression.Decompress(Type, Payload, destination.Slice(0, DecodedLength));
    }
}
