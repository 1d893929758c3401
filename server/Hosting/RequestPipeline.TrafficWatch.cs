using System.Diagnostics;
using System.Runtime.CompilerServices;
using Jackdaw.Server.Traffic;

namespace Jackdaw.Server.Hosting;

/// <summary>The pipeline's hand-over of finished requests to traffic watch (<see cref="TrafficWatch"/>).</summary>
public sealed partial class RequestPipeline
{
    /// <summary>
    /// Reports a finished request to traffic watch. When nobody watches, this is one volatile read;
    /// requests inside another (<c>multi_get</c> items: the outer one is reported) and the feed's
    /// own connections are not reported.
    /// </summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private void ReportTraffic(HttpContext http, InnerRequest? inner, long started, long readBody, long writtenJson)
    {
        if (_server.TrafficWatch.IsWatched && inner is null)
        {
            PublishTraffic(http, started, readBody, writtenJson);
        }
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    private void PublishTraffic(HttpContext http, long started, long readBody, long writtenJson)
    {
        var request = http.Request;
        var path = request.Path.Value is { Length: > 0 } value ? value : "/";
        if (path.Equals(TrafficWatch.Route, StringComparison.OrdinalIgnoreCase))
        {
            return;
        }
        var requestUri = path + request.QueryString.Value;
        _server.TrafficWatch.Publish(new TrafficWatchChange
        {
            TimeStamp = DateTime.UtcNow,
            RequestId = _server.TrafficWatch.NextRequestId(),
            HttpMethod = request.Method,
            ElapsedMilliseconds = (long)Stopwatch.GetElapsedTime(started).TotalMilliseconds,
            ResponseStatusCode = http.Response.StatusCode,
            RequestUri = requestUri,
            AbsoluteUri = request.Scheme + "://" + request.Host.Value + request.PathBase.Value + requestUri,
            DatabaseName = TrafficWatch.DatabaseOf(path),
            Type = TrafficWatch.TypeOf(path),
            ClientIP = http.Connection.RemoteIpAddress?.ToString(),
            CertificateThumbprint = http.Connection.ClientCertificate?.Thumbprint,
            // Content-Length, else what the handler read of a chunked body (null: no body).
            RequestSizeInBytes = request.ContentLength ?? (readBody > 0 ? readBody : null),
            // Content-Length, else what the handler wrote and counted through the context (null:
            // nothing counted).
            ResponseSizeInBytes = http.Response.ContentLength ?? (writtenJson > 0 ? writtenJson : null),
        });
    }
}
