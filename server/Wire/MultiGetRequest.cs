using System.Text.Json;
using Jackdaw.Server.Errors;

namespace Jackdaw.Server.Wire;

/// <summary>
/// One item of a <c>multi_get</c> body, RavenDB's <c>GetRequest</c>:
/// <c>{"Url":"/databases/{db}/docs","Query":"?&amp;id=users/1","Method":"GET","Headers":{"If-None-Match":"..."},"Content":...}</c>.
/// <see cref="Content"/> is a slice of the body it was read from (or the unescaped text of a string
/// <c>Content</c>, which is how RavenDB's Node.js client sends a query).
/// </summary>
public sealed record MultiGetRequest(
    string Url,
    string Query,
    string Method,
    IReadOnlyList<KeyValuePair<string, string>>? Headers,
    ReadOnlyMemory<byte> Content)
{
    private const string Shape = "{\"Requests\":[{\"Url\":\"/databases/{db}/docs\",\"Query\":\"?id=users/1\",\"Method\":\"GET\",\"Headers\":{},\"Content\":null}]}";

    /// <summary>
    /// Reads <c>{"Requests":[...]}</c>. Only <c>Url</c> is required; <c>Method</c> defaults to GET, a
    /// <c>Query</c> without its <c>?</c> gets one, header values that are null or blank are left out
    /// (as RavenDB does) and other properties are ignored. Anything else is a 400 naming the item.
    /// </summary>
    public static List<MultiGetRequest> ParseAll(byte[] body)
    {
        var reader = new Utf8JsonReader(body);
        if (!reader.Read() || reader.TokenType != JsonTokenType.StartObject)
        {
            throw new BadRequestException("A multi_get body must be a JSON object: " + Shape + ".");
        }

        List<MultiGetRequest>? requests = null;
        while (reader.Read() && reader.TokenType == JsonTokenType.PropertyName)
        {
            var isRequests = reader.ValueTextEquals("Requests"u8);
            reader.Read();
            if (!isRequests)
            {
                reader.Skip();
                continue;
            }

            if (reader.TokenType != JsonTokenType.StartArray)
            {
                throw new BadRequestException("'Requests' must be an array of requests: " + Shape + ".");
            }

            requests = [];
            while (reader.Read() && reader.TokenType != JsonTokenType.EndArray)
            {
                requests.Add(ReadOne(ref reader, body, requests.Count));
            }
        }

        return requests ?? throw new BadRequestException("A multi_get body must have 'Requests': " + Shape + ".");
    }

    private static MultiGetRequest ReadOne(ref Utf8JsonReader reader, byte[] body, int index)
    {
        if (reader.TokenType != JsonTokenType.StartObject)
        {
            throw Bad(index, "must be an object such as {\"Url\":\"/databases/{db}/docs\",\"Query\":\"?id=users/1\"}");
        }

        string? url = null, query = null, method = null;
        List<KeyValuePair<string, string>>? headers = null;
        ReadOnlyMemory<byte> content = default;
        while (reader.Read() && reader.TokenType == JsonTokenType.PropertyName)
        {
            if (reader.ValueTextEquals("Url"u8))
            {
                url = ReadString(ref reader, index, "Url");
            }
            else if (reader.ValueTextEquals("Query"u8))
            {
                query = ReadString(ref reader, index, "Query");
            }
            else if (reader.ValueTextEquals("Method"u8))
            {
                method = ReadString(ref reader, index, "Method");
            }
            else if (reader.ValueTextEquals("Headers"u8))
            {
                headers = ReadHeaders(ref reader, index);
            }
            else if (reader.ValueTextEquals("Content"u8))
            {
                content = ReadContent(ref reader, body);
            }
            else
            {
                reader.Read();
                reader.Skip();
            }
        }

        if (string.IsNullOrEmpty(url) || url[0] != '/')
        {
            throw Bad(index, "needs a 'Url' starting with '/', such as \"/databases/{db}/docs\"");
        }

        if (!string.IsNullOrEmpty(query) && query[0] != '?')
        {
            query = "?" + query;
        }

        return new MultiGetRequest(url, query ?? string.Empty, string.IsNullOrEmpty(method) ? "GET" : method.ToUpperInvariant(), headers, content);
    }

    private static string? ReadString(ref Utf8JsonReader reader, int index, string name)
    {
        reader.Read();
        return reader.TokenType switch
        {
            JsonTokenType.String => reader.GetString(),
            JsonTokenType.Null => null,
            _ => throw Bad(index, $"has a '{name}' that is not a string"),
        };
    }

    private static List<KeyValuePair<string, string>>? ReadHeaders(ref Utf8JsonReader reader, int index)
    {
        reader.Read();
        if (reader.TokenType == JsonTokenType.Null)
        {
            return null;
        }

        if (reader.TokenType != JsonTokenType.StartObject)
        {
            throw Bad(index, "has 'Headers' that are not an object of names and string values");
        }

        var headers = new List<KeyValuePair<string, string>>();
        while (reader.Read() && reader.TokenType == JsonTokenType.PropertyName)
        {
            var name = reader.GetString()!;
            reader.Read();
            if (reader.TokenType == JsonTokenType.Null)
            {
                continue;
            }

            if (reader.TokenType != JsonTokenType.String)
            {
                throw Bad(index, $"has a header '{name}' whose value is not a string");
            }

            var value = reader.GetString()!;
            if (!string.IsNullOrWhiteSpace(value))
            {
                headers.Add(new(name, value));
            }
        }

        return headers;
    }

    /// <summary>A string is the body's text (unescaped); an object, array or other value is sent as its JSON.</summary>
    private static ReadOnlyMemory<byte> ReadContent(ref Utf8JsonReader reader, byte[] body)
    {
        reader.Read();
        switch (reader.TokenType)
        {
            case JsonTokenType.Null:
                return default;
            case JsonTokenType.String when !reader.ValueIsEscaped:
                // The value sits between its quotes in the body: no copy.
                return body.AsMemory((int)reader.TokenStartIndex + 1, reader.ValueSpan.Length);
            case JsonTokenType.String:
                var text = new byte[reader.ValueSpan.Length];
                return text.AsMemory(0, reader.CopyString(text));
            default:
                var start = (int)reader.TokenStartIndex;
                reader.Skip();
                return body.AsMemory(start, (int)reader.BytesConsumed - start);
        }
    }

    private static BadRequestException Bad(int index, string what) =>
        new($"multi_get: Requests[{index}] {what}.");
}
