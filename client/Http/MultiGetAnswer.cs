using System.Text;
using System.Text.Json;

namespace Jackdaw.Client.Http;

/// <summary>Where the items of a <c>multi_get</c> answer go, one call per item, in order.</summary>
internal interface IMultiGetResultReader
{
    /// <summary>
    /// Item <paramref name="index"/> answered <paramref name="statusCode"/> and its <c>Result</c>
    /// follows: <paramref name="reader"/> (over all of <paramref name="body"/>) is on its first
    /// token, an object or array, and must be left on its last one, whatever happens.
    /// </summary>
    void ReadResult(int index, int statusCode, ref Utf8JsonReader reader, ReadOnlyMemory<byte> body);

    /// <summary>Item <paramref name="index"/>, whole: its <c>Result</c> as a slice of the body (empty when null or absent).</summary>
    void TakeResult(int index, int statusCode, ReadOnlyMemory<byte> result);
}

/// <summary>
/// Reads <c>{"Results":[{"StatusCode":200,"Headers":{...},"Result":...}, ...]}</c> in one pass.
/// Jackdaw's server writes each item's status before its result, so the result is read where it
/// lies, by whoever asked for it, and the body is walked once; from a server that writes the
/// result first (RavenDB's order) the result is located, then handed over as a slice.
/// </summary>
internal static class MultiGetAnswer
{
    /// <exception cref="JackdawException">The body is not a <c>multi_get</c> answer of <paramref name="expected"/> items.</exception>
    public static void Read(ReadOnlyMemory<byte> body, int expected, IMultiGetResultReader target)
    {
        var count = 0;
        try
        {
            var reader = new Utf8JsonReader(body.Span);
            if (!reader.Read() || reader.TokenType != JsonTokenType.StartObject)
            {
                throw Unexpected(body.Span, expected);
            }

            while (reader.Read() && reader.TokenType == JsonTokenType.PropertyName)
            {
                var isResults = reader.ValueTextEquals("Results"u8);
                reader.Read();
                if (!isResults)
                {
                    reader.Skip();
                    continue;
                }

                if (reader.TokenType != JsonTokenType.StartArray)
                {
                    throw Unexpected(body.Span, expected);
                }

                while (reader.Read() && reader.TokenType == JsonTokenType.StartObject)
                {
                    if (count == expected)
                    {
                        throw Unexpected(body.Span, expected);
                    }

                    ReadItem(ref reader, body, count++, expected, target);
                }
            }
        }
        catch (JsonException e)
        {
            throw new JackdawException($"The server's answer to multi_get is not JSON: {e.Message}", e);
        }

        if (count != expected)
        {
            throw Unexpected(body.Span, expected);
        }
    }

    private static void ReadItem(ref Utf8JsonReader reader, ReadOnlyMemory<byte> body, int index, int expected, IMultiGetResultReader target)
    {
        int? status = null;
        Range? result = null;
        var handedOver = false;
        while (reader.Read() && reader.TokenType == JsonTokenType.PropertyName)
        {
            if (reader.ValueTextEquals("StatusCode"u8))
            {
                reader.Read();
                status = reader.TokenType == JsonTokenType.Number && reader.TryGetInt32(out var value) ? value : throw Unexpected(body.Span, expected);
            }
            else if (reader.ValueTextEquals("Result"u8))
            {
                reader.Read();
                if (status is { } known && reader.TokenType is JsonTokenType.StartObject or JsonTokenType.StartArray)
                {
                    target.ReadResult(index, known, ref reader, body);
                    handedOver = true;
                }
                else if (reader.TokenType != JsonTokenType.Null)
                {
                    var start = (int)reader.TokenStartIndex;
                    reader.Skip();
                    result = start..(int)reader.BytesConsumed;
                }
            }
            else
            {
                reader.Read();
                reader.Skip();
            }
        }

        if (status is not { } statusCode)
        {
            throw Unexpected(body.Span, expected);
        }

        if (!handedOver)
        {
            target.TakeResult(index, statusCode, result is { } range ? body[range] : default);
        }
    }

    private static JackdawException Unexpected(ReadOnlySpan<byte> body, int expected)
    {
        var text = Encoding.UTF8.GetString(body[..Math.Min(body.Length, 200)]);
        return new JackdawException($"multi_get answered with {text}{(body.Length > 200 ? "..." : "")} instead of one result per request ({expected}).");
    }
}
