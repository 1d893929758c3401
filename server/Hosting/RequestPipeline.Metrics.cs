using System.Diagnostics;
using Jackdaw.Server.Routing;

namespace Jackdaw.Server.Hosting;

/// <summary>The request metrics and trace spans of the pipeline (docs/architecture.md, "Metrics and tracing").</summary>
public sealed partial class RequestPipeline
{
    /// <summary>
    /// Records a finished request: its count, duration and body sizes by route template (a Content-Length,
    /// else the bytes counted: <see cref="RequestContext.RequestBytesRead"/>, <see cref="RequestContext.JsonBytesWritten"/>), and ends its
    /// span when one was started. Allocates nothing when no span is (the tags are the route's).
    /// </summary>
    private void RecordMetrics(HttpContext http, long started, int route, long readBody, long writtenJson)
    {
        var metrics = _server.Metrics;
        var method = HttpMethodKinds.Parse(http.Request.Method);
        var status = http.Response.StatusCode;
        metrics.RequestCompleted(route, method, status, started, http.Request.ContentLength ?? readBody, http.Response.ContentLength ?? writtenJson);
        if (metrics.Requests.HasListeners() && Activity.Current is { } activity && ReferenceEquals(activity.Source, metrics.Requests))
        {
            metrics.CompleteActivity(activity, route, method, status, http.Request.Path.Value ?? "/");
        }
    }

    /// <summary>
    /// A request under a span of <see cref="Diagnostics.ServerMetrics.Requests"/> (only when the span
    /// has a listener: OpenTelemetry is on), its parent the caller's <c>traceparent</c> when sent
    /// (a root span otherwise).
    /// The span is the request's current activity until <see cref="RecordMetrics"/> ends it; the
    /// caller's own is put back here, so that a request answered later does not leave its span
    /// current for the next request on the connection.
    /// </summary>
    private Task DispatchTraced(HttpContext http)
    {
        var previous = Activity.Current;
        // ASP.NET Core's own request activity, which it makes for its logging scopes, is never
        // sampled: as the parent it would have the span dropped. The span's parent is the caller's.
        Activity.Current = null;
        var headers = http.Request.Headers;
        ActivityContext.TryParse(headers.TraceParent.ToString(), headers.TraceState.ToString(), out var parent);
        _server.Metrics.Requests.StartActivity("HTTP", ActivityKind.Server, parent);
        try
        {
            return Dispatch(http, inner: null);
        }
        finally
        {
            Activity.Current = previous;
        }
    }
}
