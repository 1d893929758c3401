using System.Text;
using System.Text.Json;

namespace Jackdaw.Client.Http;

/// <summary>One item of a <c>multi_get</c> answer: its status and where its <c>Result</c> is (null when it has none, a 304 say).</summary>
internal readonly record struct MultiGetItem(int StatusCode, Range? Result);

/// <summary>
/// Reads <c>{"Results":[{"Result":...,"StatusCode":200,"Headers":{...}}, ...]}</c>, locating each
/// result in the body without copying it.
/// </summary>
internal static class MultiGetAnswer
{
    /// <exception cref="JackdawException">The body is not a <c>multi_get</c> answer of <paramref name="expected"/> items.</exception>
    public static MultiGetItem[] Parse(ReadOnlySpan<byte> body, int expected)
    {
        var items = new List<MultiGetItem>(expected);
        try
        {
            var reader = new Utf8JsonReader(body);
            if (!reader.Read() || reader.TokenType != JsonTokenType.StartObject)
            {
                throw Unexpected(body, expected);
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
                    throw Unexpected(body, expected);
                }

                while (reader.Read() && reader.TokenType == JsonTokenType.StartObject)
                {
                    items.Add(ReadItem(ref reader, body, expected));
                }
            }
        }
        catch (JsonException e)
        {
            throw new JackdawException($"The server's answer to multi_get is not JSON: {e.Message}", e);
        }

        return items.Count == expected ? [.. items] : throw Unexpected(body, expected);
    }

    private static MultiGetItem ReadItem(ref Utf8JsonReader reader, ReadOnlySpan<byte> body, int expected)
    {
        int? status = null;
        Range? result = null;
        while (reader.Read() && reader.TokenType == JsonTokenType.PropertyName)
        {
            if (reader.ValueTextEquals("Result"u8))
            {
                reader.Read();
                var start = (int)reader.TokenStartIndex;
                reader.Skip();
                result = reader.TokenType == JsonTokenType.Null ? null : start..(int)reader.BytesConsumed;
            }
            else if (reader.ValueTextEquals("StatusCode"u8))
            {
                reader.Read();
                status = reader.TokenType == JsonTokenType.Number && reader.TryGetInt32(out var value) ? value : throw Unexpected(body, expected);
            }
            else
            {
                reader.Read();
                reader.Skip();
            }
        }

        return new MultiGetItem(status ?? throw Unexpected(body, expected), result);
    }

    private static JackdawException Unexpected(ReadOnlySpan<byte> body, int expected)
    {
        var text = Encoding.UTF8.GetString(body[..Math.Min(body.Length, 200)]);
        return new JackdawException($"multi_get answered with {text}{(body.Length > 200 ? "..." : "")} instead of one result per request ({expected}).");
    }
}
