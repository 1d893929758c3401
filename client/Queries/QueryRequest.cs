using System.Buffers;
using System.Globalization;
using System.Text.Encodings.Web;
using System.Text.Json;

namespace Jackdaw.Client.Queries;

/// <summary>
/// The body of <c>POST /databases/{db}/queries</c>, RavenDB's shape:
/// <c>{"Query":"from 'Orders' where Company = $p0","QueryParameters":{"p0":"companies/1-A"},"WaitForNonStaleResults":false}</c>,
/// plus <c>"WaitForNonStaleResultsTimeout":"00:00:15"</c> when waiting.
/// </summary>
internal sealed record QueryRequest(string Query, IReadOnlyList<KeyValuePair<string, object?>> Parameters, bool WaitForNonStaleResults, TimeSpan? WaitTimeout)
{
    /// <summary>How long the server waits for non-stale results when no timeout is given (RavenDB's default).</summary>
    public static readonly TimeSpan DefaultWaitTimeout = TimeSpan.FromSeconds(15);

    /// <summary>How long the server may wait before it answers (null when the query does not wait).</summary>
    public TimeSpan? ServerWait => WaitForNonStaleResults ? WaitTimeout ?? DefaultWaitTimeout : null;

    /// <summary>
    /// The JSON body. Parameter values go through the documents' serializer options, so a
    /// parameter compares with a stored value written the same way (enums as strings, ISO dates).
    /// </summary>
    public ReadOnlyMemory<byte> ToJson(JsonSerializerOptions options)
    {
        var buffer = new ArrayBufferWriter<byte>(256);
        // The body goes to the server, never into HTML: quotes in the RQL stay readable instead of \u0027.
        using (var writer = new Utf8JsonWriter(buffer, new JsonWriterOptions { Encoder = options.Encoder ?? JavaScriptEncoder.UnsafeRelaxedJsonEscaping }))
        {
            writer.WriteStartObject();
            writer.WriteString("Query", Query);
            writer.WriteStartObject("QueryParameters");
            foreach (var (name, value) in Parameters)
            {
                writer.WritePropertyName(name);
                if (value is null)
                {
                    writer.WriteNullValue();
                }
                else
                {
                    JsonSerializer.Serialize(writer, value, value.GetType(), options);
                }
            }

            writer.WriteEndObject();
            writer.WriteBoolean("WaitForNonStaleResults", WaitForNonStaleResults);
            if (WaitForNonStaleResults)
            {
                writer.WriteString("WaitForNonStaleResultsTimeout", ServerWait!.Value.ToString("c", CultureInfo.InvariantCulture));
            }

            writer.WriteEndObject();
        }

        return buffer.WrittenMemory;
    }
}
