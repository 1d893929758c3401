using System.Text.Json;

namespace Jackdaw.Server.Traffic;

/// <summary>
/// One finished request as traffic watch reports it, in the fields of RavenDB's
/// <c>TrafficWatchHttpChange</c> (plus the request and response sizes). Sizes are what the
/// <c>Content-Length</c> headers said; null when a body had none (a chunked answer).
/// </summary>
public sealed record TrafficWatchChange
{
    public required DateTime TimeStamp { get; init; }

    /// <summary>Unique on this server while it runs; counts only the requests someone watched.</summary>
    public required long RequestId { get; init; }

    public required string HttpMethod { get; init; }

    public required long ElapsedMilliseconds { get; init; }

    public required int ResponseStatusCode { get; init; }

    /// <summary>The path and query string, as the client sent them.</summary>
    public required string RequestUri { get; init; }

    /// <summary>The whole URL: scheme, host, path and query string.</summary>
    public required string AbsoluteUri { get; init; }

    /// <summary>The database of a <c>/databases/{name}/...</c> request; null for the server's own routes.</summary>
    public string? DatabaseName { get; init; }

    public string? CustomInfo { get; init; }

    public required TrafficWatchChangeType Type { get; init; }

    public string? ClientIP { get; init; }

    /// <summary>The client certificate's thumbprint, on a secured server.</summary>
    public string? CertificateThumbprint { get; init; }

    public long? RequestSizeInBytes { get; init; }

    public long? ResponseSizeInBytes { get; init; }

    /// <summary>Writes the change as one JSON object.</summary>
    public void WriteTo(Utf8JsonWriter writer)
    {
        writer.WriteStartObject();
        writer.WriteString("TrafficWatchType", "Http");
        writer.WriteString(nameof(TimeStamp), TimeStamp);
        writer.WriteNumber(nameof(RequestId), RequestId);
        writer.WriteString(nameof(HttpMethod), HttpMethod);
        writer.WriteNumber(nameof(ElapsedMilliseconds), ElapsedMilliseconds);
        writer.WriteNumber(nameof(ResponseStatusCode), ResponseStatusCode);
        writer.WriteString(nameof(RequestUri), RequestUri);
        writer.WriteString(nameof(AbsoluteUri), AbsoluteUri);
        writer.WriteString(nameof(DatabaseName), DatabaseName);
        writer.WriteString(nameof(CustomInfo), CustomInfo);
        writer.WriteString(nameof(Type), Type.ToString());
        writer.WriteString(nameof(ClientIP), ClientIP);
        writer.WriteString(nameof(CertificateThumbprint), CertificateThumbprint);
        WriteSize(writer, nameof(RequestSizeInBytes), RequestSizeInBytes);
        WriteSize(writer, nameof(ResponseSizeInBytes), ResponseSizeInBytes);
        writer.WriteEndObject();
    }

    private static void WriteSize(Utf8JsonWriter writer, string name, long? size)
    {
        if (size is { } bytes)
        {
            writer.WriteNumber(name, bytes);
        }
        else
        {
            writer.WriteNull(name);
        }
    }
}
