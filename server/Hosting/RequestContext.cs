using System.IO.Pipelines;
using System.Net.WebSockets;
using System.Text.Json;
using Jackdaw.Server.Errors;
using Jackdaw.Server.Wire;
using Jackdaw.Server.Routing;
using Jackdaw.Storage.Blittable;
using Microsoft.AspNetCore.Http.Features;

namespace Jackdaw.Server.Hosting;

/// <summary>A handler: one method of a handler class, bound once at startup.</summary>
public delegate ValueTask RequestHandler(RequestContext context);

/// <summary>
/// What a handler sees of a request: the <see cref="HttpContext"/>, the raw path and the route
/// captures. Pooled by the pipeline and reset between requests, along with its JSON writer.
/// </summary>
public sealed class RequestContext : IDisposable
{
    private RouteMatch<RequestHandler> _match;
    private Utf8JsonWriter? _json;
    private JsonOperationContext? _documents;
    private RequestBodyKind _body;
    private readonly RequestPipeline _pipeline;

    internal RequestContext(ServerContext server, RequestPipeline pipeline)
    {
        Server = server;
        _pipeline = pipeline;
    }

    public ServerContext Server { get; }

    public HttpContext HttpContext { get; private set; } = null!;

    public HttpRequest Request => HttpContext.Request;

    public HttpResponse Response => HttpContext.Response;

    public CancellationToken RequestAborted => HttpContext.RequestAborted;

    /// <summary>Who sent the request, on a secured server (null on an unsecured one, and on routes open to anyone).</summary>
    public Security.Caller? Caller { get; internal set; }

    /// <summary>True for a request that arrived inside another (an item of <c>multi_get</c>).</summary>
    public bool IsInnerRequest { get; private set; }

    /// <summary>
    /// Where this request builds and reads blittable documents; its buffers are pooled with this
    /// context and returned in bulk when the request ends.
    /// </summary>
    public JsonOperationContext Documents => _documents ??= new JsonOperationContext();

    /// <summary>The raw path as Kestrel gave it (<c>Request.Path.Value</c>).</summary>
    public string Path { get; private set; } = string.Empty;

    public string RouteTemplate => _match.Endpoint?.Template ?? string.Empty;

    public int CaptureCount => _match.CaptureCount;

    /// <summary>The route's <see cref="RouteEndpoint{THandler}.Id"/>, for the request metrics.</summary>
    internal int RouteId => _match.Endpoint?.Id ?? -1;

    /// <summary>
    /// Bytes of the bodies without a Content-Length written through this context: the JSON completed
    /// with <see cref="CompleteJsonAsync"/> and what the document writers counted in
    /// <see cref="ResponseBytes"/> (the response metrics and traffic watch).
    /// </summary>
    internal long JsonBytesWritten => _jsonBytesWritten + ResponseBytes.Bytes;

    private long _jsonBytesWritten;

    /// <summary>
    /// Bytes the handler read of a request body without a Content-Length (a chunked bulk insert,
    /// attachment upload or smuggler import), counted by the <see cref="ByteCountingStream"/> it was
    /// given in place of <c>Request.Body</c>, or by the <see cref="ByteCountingPipeReader"/> given in
    /// place of <c>Request.BodyReader</c> (over Kestrel's own pipe); 0 for a body with a
    /// Content-Length or none (the request metrics and traffic watch).
    /// </summary>
    internal long RequestBytesRead => (_countedBody?.Bytes ?? 0) + (_countedPipe?.Bytes ?? 0);

    private ByteCountingStream? _countedBody;
    private ByteCountingPipeReader? _countedPipe;

    /// <summary>Where a handler that writes to the body itself (documents from their blittable form) counts what it wrote, just before each flush.</summary>
    public ResponseByteCount ResponseBytes { get; } = new();

    /// <summary>The text of capture <paramref name="index"/> (a <c>*</c> segment or the <c>$</c> rest), without copying.</summary>
    public ReadOnlySpan<char> GetCapture(int index) => Path.AsSpan()[_match.GetCapture(index)];

    /// <summary>The same as <see cref="GetCapture"/>, as memory over the path string (for keys that outlive a span).</summary>
    public ReadOnlyMemory<char> GetCaptureMemory(int index) => Path.AsMemory()[_match.GetCapture(index)];

    /// <summary>
    /// Starts a JSON response: sets status and content type and returns a writer over the response
    /// body. Finish with <see cref="CompleteJsonAsync"/>.
    /// </summary>
    public Utf8JsonWriter StartJson(int statusCode = StatusCodes.Status200OK)
    {
        Response.StatusCode = statusCode;
        Response.ContentType = JsonErrors.JsonContentType;
        if (_json is null)
        {
            _json = new Utf8JsonWriter(Response.BodyWriter, JsonDefaults.WriterOptions);
        }
        else
        {
            _json.Reset(Response.BodyWriter);
        }
        return _json;
    }

    public ValueTask CompleteJsonAsync()
    {
        _json!.Flush();
        _jsonBytesWritten += _json.BytesCommitted;
        var flush = Response.BodyWriter.FlushAsync(RequestAborted);
        return flush.IsCompletedSuccessfully ? ValueTask.CompletedTask : AwaitFlush(flush);

        static async ValueTask AwaitFlush(ValueTask<System.IO.Pipelines.FlushResult> pending) => await pending.ConfigureAwait(false);
    }

    /// <summary>Writes a body prepared in advance (constant responses), with its length.</summary>
    public ValueTask WriteBytesAsync(ReadOnlyMemory<byte> body, string contentType, int statusCode = StatusCodes.Status200OK)
    {
        Response.StatusCode = statusCode;
        Response.ContentType = contentType;
        Response.ContentLength = body.Length;
        var write = Response.BodyWriter.WriteAsync(body, RequestAborted);
        return write.IsCompletedSuccessfully ? ValueTask.CompletedTask : AwaitWrite(write);

        static async ValueTask AwaitWrite(ValueTask<System.IO.Pipelines.FlushResult> pending) => await pending.ConfigureAwait(false);
    }

    /// <summary>
    /// Accepts the WebSocket this request asks to upgrade to. A plain request (an item of a
    /// <c>multi_get</c> is one) is refused with a 400: "This route is a WebSocket: " and
    /// <paramref name="howToConnect"/>. Ending the connection is <c>WebSockets.WebSocketClosing</c>'s.
    /// </summary>
    /// <exception cref="BadRequestException">The request is not a WebSocket upgrade.</exception>
    public Task<WebSocket> AcceptWebSocketAsync(string howToConnect)
    {
        if (!HttpContext.WebSockets.IsWebSocketRequest)
        {
            throw new BadRequestException("This route is a WebSocket: " + howToConnect);
        }
        return HttpContext.WebSockets.AcceptWebSocketAsync();
    }

    /// <summary>
    /// Holds this request's body to the limit of <paramref name="kind"/> (<c>Limits:MaxDocumentBodySize</c>
    /// ...) rather than <c>Limits:MaxOtherBodySize</c>, which every route gets unless it says; call
    /// it before reading the body. A body over it fails the read with a 413 that names the setting.
    /// </summary>
    public void LimitBody(RequestBodyKind kind)
    {
        _body = kind;
        // An inner request's body is part of its outer one's, already read.
        if (!IsInnerRequest && HttpContext.Features.Get<IHttpMaxRequestBodySizeFeature>() is { IsReadOnly: false } feature)
        {
            feature.MaxRequestBodySize = Server.Options.Limits.BodyLimit(kind, Server.Options.MaxRequestBodySize).Bytes;
        }
    }

    /// <summary>
    /// <paramref name="exception"/>, or, for the server's own error about this request's body (too
    /// large for its limit, or arriving too slowly), the same error with a message naming the setting.
    /// </summary>
    public Exception ExplainLimit(Exception exception) =>
        Server.Options.Limits.Explain(exception, _body, Server.Options.MaxRequestBodySize);

    /// <summary>
    /// Requests to run inside this one, through the same router and handlers (see
    /// <see cref="InnerRequest"/>); dispose it before this request ends.
    /// </summary>
    public InnerRequest CreateInnerRequest() => new(_pipeline, HttpContext);

    internal void Initialize(HttpContext httpContext, string path, in RouteMatch<RequestHandler> match, bool isInner)
    {
        HttpContext = httpContext;
        Path = path;
        _match = match;
        IsInnerRequest = isInner;
        // Only a body of unknown length is counted (a few small objects for that request: a GET or a
        // PUT with a Content-Length allocates nothing here), and only when someone reads the count.
        // Handlers reading Body read the counting stream; those reading BodyReader (a bulk insert)
        // read Kestrel's pipe through the counting reader, without the stream's copy.
        if (!isInner && httpContext.Request.ContentLength is null
            && (Server.Metrics.Options.Enabled || Server.TrafficWatch.IsWatched)
            && httpContext.Features.Get<IHttpRequestBodyDetectionFeature>() is { CanHaveBody: true })
        {
            // Kestrel's pipe is taken first: once Body is replaced, its BodyReader reads through the new Body.
            _countedPipe = new ByteCountingPipeReader(httpContext.Request.BodyReader);
            _countedBody = new ByteCountingStream(httpContext.Request.Body);
            httpContext.Request.Body = _countedBody;
            httpContext.Features.Set<IRequestBodyPipeFeature>(new CountedPipeFeature(_countedPipe));
        }
    }

    /// <summary>Returns the document buffers for good (the pool drops this context).</summary>
    public void Dispose()
    {
        _documents?.Dispose();
        _documents = null;
        _json?.Dispose();
        _json = null;
    }

    internal void Reset()
    {
        HttpContext = null!;
        Path = string.Empty;
        _match = default;
        IsInnerRequest = false;
        Caller = null;
        _body = RequestBodyKind.Other;
        _jsonBytesWritten = 0;
        _countedBody = null;
        _countedPipe = null;
        ResponseBytes.Reset();
        _json?.Reset(Stream.Null);
        _documents?.Reset();
    }

    /// <summary>Makes the counting reader the request's <c>BodyReader</c>.</summary>
    private sealed class CountedPipeFeature(PipeReader reader) : IRequestBodyPipeFeature
    {
        public PipeReader Reader => reader;
    }
}
