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

    public static async ValueTask WriteAsync(HttpContext context, int statusCode, string type, string message)
    {
        var response = context.Response;
        if (response.HasStarted)
            return;
        response.StatusCode = statusCode;
        response.ContentType = JsonContentType;
        if (context.Request.Headers.ContainsKey(RavenClientVersionHeader))
            type = ErrorTypes.RavenName(type);
        Write(response.BodyWriter, type, message);
        await response.BodyWriter.FlushAsync(context.RequestAborted).ConfigureAwait(false);
    }

    public static void Write(System.Buffers.IBufferWriter<byte> output, string type, string message)
    {
        using var writer = new Utf8JsonWriter(output, JsonDefaults.WriterOptions);
        writer.WriteStartObject();
        writer.WriteString(TypeName, type);
        writer.WriteString(MessageName, message);
        // RavenDB's clients show "Error" as the message of every error but a 409: the same text.
        writer.WriteString(ErrorName, message);
        writer.WriteEndObject();
    }
}
