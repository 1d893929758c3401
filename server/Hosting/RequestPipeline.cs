using System.Diagnostics;
using Jackdaw.Server.Wire;
using Jackdaw.Server.Routing;
using Jackdaw.Storage.Blittable;
using Microsoft.Extensions.ObjectPool;

namespace Jackdaw.Server.Hosting;

/// <summary>
/// The server's single terminal <see cref="RequestDelegate"/>: route, dispatch, and turn every
/// failure into a JSON error. A handler that completes synchronously costs no state machine.
/// </summary>
public sealed partial class RequestPipeline
{
    private readonly TrieRouter<RequestHandler> _router;
    private readonly ServerContext _server;
    private readonly ILogger _logger;
    private readonly ObjectPool<RequestContext> _contexts;

    public RequestPipeline(TrieRouter<RequestHandler> router, ServerContext server)
    {
        _router = router;
        _server = server;
        _logger = server.LoggerFactory.CreateLogger("Jackdaw.Requests");
        server.Metrics.UseRoutes(router.Endpoints.Select(endpoint => endpoint.Template));
        // Enough contexts for every request in flight at a high connection count; a context the
        // pool cannot keep is disposed (its pooled buffers go back to the shared pool) rather than
        // left to the GC with them.
        _contexts = new DefaultObjectPoolProvider { MaximumRetained = Math.Max(256, Environment.ProcessorCount * 64) }
            .Create(new ContextPolicy(server, this));
    }

    public Task InvokeAsync(HttpContext http)
    {
        _server.Statistics.RequestStarted();
        return _server.Metrics.Requests.HasListeners() ? DispatchTraced(http) : Dispatch(http, inner: null);
    }

    /// <summary>
    /// Runs a request that arrived inside another (<see cref="InnerRequest"/>): routed, handled and
    /// mapped to an error exactly as one from the network, but not counted in the statistics (the
    /// outer request is the one served).
    /// </summary>
    internal Task InvokeInnerAsync(HttpContext http, InnerRequest inner) => Dispatch(http, inner);

    private Task Dispatch(HttpContext http, InnerRequest? inner)
    {
        var started = Stopwatch.GetTimestamp();
        var path = http.Request.Path.Value;
        if (string.IsNullOrEmpty(path))
        {
            path = "/";
        }

        if (!_router.TryMatch(path, out var match))
        {
            // Under a database, RavenDB's clients read a 404 as "no such item" (an attachment, a
            // counter): a feature Jackdaw does not have must say so, as a 501.
            return path.StartsWith("/databases/", StringComparison.Ordinal) && path.IndexOf('/', "/databases/".Length) > 0
                ? Finish(http, inner, started, JsonErrors.WriteAsync(http, StatusCodes.Status501NotImplemented, ErrorTypes.FeatureNotSupported, $"'{http.Request.Method} {path}' is not supported by Jackdaw (yet): no route matches it. docs/architecture.md lists the routes and the RavenDB features that exist."), failed: true, route: -1)
                : Finish(http, inner, started, JsonErrors.WriteAsync(http, StatusCodes.Status404NotFound, ErrorTypes.RouteNotFound, $"No route matches '{http.Request.Method} {path}'."), failed: true, route: -1);
        }

        var handler = match.Endpoint!.GetHandler(HttpMethodKinds.Parse(http.Request.Method));
        if (handler is null)
        {
            var endpoint = match.Endpoint;
            http.Response.Headers.Allow = endpoint.Allow;
            return Finish(http, inner, started, JsonErrors.WriteAsync(http, StatusCodes.Status405MethodNotAllowed, ErrorTypes.MethodNotAllowed, $"'{endpoint.Template}' does not support {http.Request.Method}; allowed: {endpoint.Allow}."), failed: true, route: endpoint.Id);
        }

        // A member between Kestrel's start and Raft's would take the paths of a lone server (a
        // delete that bypasses the cluster, an index put locally): changes wait until it runs.
        if (_server.Cluster.IsStarting && !HttpMethods.IsGet(http.Request.Method) && !HttpMethods.IsHead(http.Request.Method))
        {
            return Finish(http, inner, started, JsonErrors.WriteAsync(http, StatusCodes.Status503ServiceUnavailable, ErrorTypes.NotLeader,
                $"Node {_server.Cluster.NodeTag} is starting and has not joined its cluster yet: retry shortly, or on another node."), failed: true, route: match.Endpoint!.Id);
        }

        TellOfNewerClientConfiguration(http, path);
        var context = _contexts.Get();
        context.Initialize(http, path, match, inner is not null);
        ValueTask pending;
        try
        {
            pending = handler(context);
        }
        catch (Exception e)
        {
            pending = ValueTask.FromException(e);
        }

        if (pending.IsCompletedSuccessfully)
        {
            var (route, read, written) = (context.RouteId, context.RequestBytesRead, context.JsonBytesWritten);
            _contexts.Return(context);
            Completed(http, inner, started, failed: false, route, read, written);
            return Task.CompletedTask;
        }
        return AwaitHandler(http, inner, context, pending, started);
    }

    private async Task AwaitHandler(HttpContext http, InnerRequest? inner, RequestContext context, ValueTask pending, long started)
    {
        var failed = false;
        try
        {
            await pending.ConfigureAwait(false);
        }
        catch (Exception e)
        {
            failed = true;
            // An inner request's partial answer is only in its buffer: the error replaces it whole.
            inner?.ClearResponse();
            await WriteFailureAsync(http, context.ExplainLimit(e)).ConfigureAwait(false);
        }
        finally
        {
            var (route, read, written) = (context.RouteId, context.RequestBytesRead, context.JsonBytesWritten);
            _contexts.Return(context);
            // Whatever happened, also if the answer could not be written: every request counted
            // active is counted finished.
            Completed(http, inner, started, failed, route, read, written);
        }
    }

    private async Task Finish(HttpContext http, InnerRequest? inner, long started, ValueTask pending, bool failed, int route)
    {
        try
        {
            await pending.ConfigureAwait(false);
        }
        catch (OperationCanceledException) when (http.RequestAborted.IsCancellationRequested)
        {
            // The client went away before its error answer was written.
        }
        finally
        {
            Completed(http, inner, started, failed, route, readBody: 0, writtenJson: 0);
        }
    }

    private async ValueTask WriteFailureAsync(HttpContext http, Exception e)
    {
        try
        {
            await WriteFailureAnswerAsync(http, e).ConfigureAwait(false);
        }
        catch (OperationCanceledException) when (http.RequestAborted.IsCancellationRequested)
        {
            // The client went away before the answer was written (its flush is cancelled with the
            // request): nobody to answer, and nothing for the host to log as unhandled.
        }
    }

    private async ValueTask WriteFailureAnswerAsync(HttpContext http, Exception e)
    {
        if (ErrorMapping.Map(e) is var (status, type))
        {
            if (!http.Response.HasStarted)
            {
                ErrorMapping.AddHeaders(http.Response, e);
            }
            await JsonErrors.WriteAsync(http, status, type, ErrorMapping.MessageOf(e), e).ConfigureAwait(false);
            return;
        }

        switch (e)
        {
            case OperationCanceledException when http.RequestAborted.IsCancellationRequested:
                // The client went away: nobody to answer.
                break;
            default:
                LogHandlerFailure(_logger, e, http.Request.Method, http.Request.Path.Value ?? "/", http.TraceIdentifier);
                await JsonErrors.WriteAsync(
                    http,
                    StatusCodes.Status500InternalServerError,
                    ErrorTypes.InternalServerError,
                    $"{e.GetType().Name}: {e.Message} (trace id {http.TraceIdentifier}; details are in the server log).").ConfigureAwait(false);
                break;
        }
    }

    private void Completed(HttpContext http, InnerRequest? inner, long started, bool failed, int route, long readBody, long writtenJson)
    {
        if (inner is null)
        {
            _server.Statistics.RequestFinished(failed);
            RecordMetrics(http, started, route, readBody, writtenJson);
        }
        ReportTraffic(http, inner, started, readBody, writtenJson);
        if (_logger.IsEnabled(LogLevel.Debug))
        {
            LogRequest(_logger, http.Request.Method, http.Request.Path.Value ?? "/", http.Response.StatusCode, Stopwatch.GetElapsedTime(started).TotalMilliseconds);
        }
    }

    [LoggerMessage(EventId = 1, Level = LogLevel.Debug, Message = "{Method} {Path} -> {StatusCode} in {ElapsedMs:0.000} ms")]
    private static partial void LogRequest(ILogger logger, string method, string path, int statusCode, double elapsedMs);

    [LoggerMessage(EventId = 2, Level = LogLevel.Error, Message = "Request {Method} {Path} failed (trace id {TraceId})")]
    private static partial void LogHandlerFailure(ILogger logger, Exception exception, string method, string path, string traceId);

    private sealed class ContextPolicy(ServerContext server, RequestPipeline pipeline) : IPooledObjectPolicy<RequestContext>
    {
        public RequestContext Create() => new(server, pipeline);

        public bool Return(RequestContext obj)
        {
            obj.Reset();
            return true;
        }
    }
}
