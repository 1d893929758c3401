using System.Text.Json;
using Jackdaw.Server.Wire;

namespace Jackdaw.Server.Hosting;

/// <summary>
/// Writes the <c>{"Type": ..., "Message": ..., "Error": ...}</c> error body every error response
/// uses (<c>Error</c> repeats the message, where RavenDB's clients read it). A request from
/// RavenDB's clients gets the type by RavenDB's full name (<see cref="ErrorTypes.RavenName"/>).
/// </summary>
public static class JsonErrors
{
    public const string JsonContentType = "application/json; charset=utf-8";

    /// <summary>The request header RavenDB's official clients send with every request.</summary>
    public const string RavenClientVersionHeader = "Raven-Client-Version";

    private static readonly JsonEncodedText TypeName = JsonEncodedText.Encode("Type");
    private static readonly JsonEncodedText MessageName = JsonEncodedText.Encode("Message");
    private static readonly JsonEncodedText ErrorName = JsonEncodedText.Encode("Error");

    /// <param name="exception">The error, when it adds fields of its own to the body (<see cref="ErrorMapping.WriteFields"/>).</param>
    public static async ValueTask WriteAsync(HttpContext context, int statusCode, string type, string message, Exception? exception = null)
    {
        var response = context.Response;
        if (response.HasStarted)
        {
            return;
        }
        response.StatusCode = statusCode;
        response.ContentType = JsonContentType;
        if (context.Request.Headers.ContainsKey(RavenClientVersionHeader))
        {
            type = ErrorTypes.RavenName(type);
        }
        // Written whole with its length, not chunked: the answer ends with its last byte, so a client
        // that reads up to the Content-Length has the whole answer (no chunk terminator trails it).
        var body = new System.Buffers.ArrayBufferWriter<byte>(256);
        Write(body, type, message, exception);
        response.ContentLength = body.WrittenCount;
        await response.Body.WriteAsync(body.WrittenMemory, context.RequestAborted).ConfigureAwait(false);
    }

    public static void Write(System.Buffers.IBufferWriter<byte> output, string type, string message, Exception? exception = null)
    {
        using var writer = new Utf8JsonWriter(output, JsonDefaults.WriterOptions);
        writer.WriteStartObject();
        writer.WriteString(TypeName, type);
        writer.WriteString(MessageName, message);
        // RavenDB's clients show "Error" as the message of every error but a 409: the same text.
        writer.WriteString(ErrorName, message);
        if (exception is not null)
        {
            ErrorMapping.WriteFields(writer, exception);
        }
        writer.WriteEndObject();
    }
}
