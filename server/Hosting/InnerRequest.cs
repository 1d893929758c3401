using System.Buffers;
using System.IO.Pipelines;
using Microsoft.AspNetCore.Http.Features;

namespace Jackdaw.Server.Hosting;

/// <summary>
/// Requests that arrive inside another one (the items of <c>multi_get</c>), run one at a time
/// through the same router, handlers and error mapping as requests from the network, without a
/// loopback connection. Each item gets a pooled <see cref="RequestContext"/> of its own and an
/// <see cref="HttpContext"/> over the features this class implements: the request comes from the
/// item, the response goes into a <see cref="ResponseBuffer"/>, and the connection (with its client
/// certificate), services and cancellation are the outer request's. One instance serves every item of one outer request, reset
/// between them (a multi_get of many items allocates one context, not one per item).
/// </summary>
/// <remarks>
/// The features are the whole context: nothing falls through to the outer request's features, so an
/// item cannot see or change the outer request's body, size limit or WebSocket upgrade.
/// </remarks>
public sealed class InnerRequest :
    IHttpRequestFeature,
    IHttpResponseFeature,
    IHttpResponseBodyFeature,
    IRequestBodyPipeFeature,
    IHttpRequestLifetimeFeature,
    IHttpRequestIdentifierFeature,
    IDisposable
{
    private readonly RequestPipeline _pipeline;
    private readonly HttpContext _outer;
    private readonly DefaultHttpContext _http;
    private readonly ResponseBuffer _body = new();
    private readonly IHeaderDictionary _requestHeaders = new HeaderDictionary();
    private readonly IHeaderDictionary _responseHeaders = new HeaderDictionary();
    private readonly string _outerHost;
    private ReadOnlyMemory<byte> _requestBody;
    private PipeReader? _requestReader;
    private Stream? _requestStream;
    private Stream? _responseStream;
    private List<(Func<object, Task> Callback, object State)>? _onCompleted;
    private string? _traceIdentifier;
    private int _sequence;

    internal InnerRequest(RequestPipeline pipeline, HttpContext outer)
    {
        _pipeline = pipeline;
        _outer = outer;
        var features = new FeatureCollection(initialCapacity: 8);
        features.Set<IHttpRequestFeature>(this);
        features.Set<IHttpResponseFeature>(this);
        features.Set<IHttpResponseBodyFeature>(this);
        features.Set<IRequestBodyPipeFeature>(this);
        features.Set<IHttpRequestLifetimeFeature>(this);
        features.Set<IHttpRequestIdentifierFeature>(this);
        if (outer.Features.Get<IHttpConnectionFeature>() is { } connection)
        {
            features.Set(connection);
        }

        // The client certificate is the connection's: without it every item of a secured server's
        // multi_get would be refused as anonymous. Its cached identity comes along too.
        if (outer.Features.Get<ITlsConnectionFeature>() is { } tls)
        {
            features.Set(tls);
        }

        if (outer.Features.Get<TlsConnection>() is { } tlsConnection)
        {
            features.Set(tlsConnection);
        }

        if (outer.Features.Get<IServiceProvidersFeature>() is { } services)
        {
            features.Set(services);
        }

        _http = new DefaultHttpContext(features);
        Scheme = outer.Request.Scheme;
        _outerHost = outer.Request.Host.Value ?? string.Empty;
    }

    /// <summary>The status the item was answered with.</summary>
    public int StatusCode { get; set; } = StatusCodes.Status200OK;

    /// <summary>The item's response headers (<c>ETag</c>, <c>Content-Type</c>, ...).</summary>
    public IHeaderDictionary ResponseHeaders => _responseHeaders;

    /// <summary>The item's response body as the handler wrote it; valid until the next item runs.</summary>
    public ReadOnlySpan<byte> ResponseBody => _body.Written;

    /// <summary>
    /// Runs one request: <paramref name="path"/> is decoded (as Kestrel gives a path),
    /// <paramref name="queryString"/> is empty or starts with <c>?</c>, and <paramref name="body"/>
    /// must stay valid until the returned task completes. Failures become the item's status and
    /// <c>{"Type","Message"}</c> body, as they would for a request from the network.
    /// </summary>
    public Task RunAsync(string method, string path, string queryString, IEnumerable<KeyValuePair<string, string>>? headers, ReadOnlyMemory<byte> body)
    {
        Prepare(method, path, queryString, body);
        if (headers is not null)
        {
            foreach (var (name, value) in headers)
            {
                _requestHeaders.Append(name, value);
            }
        }

        if (!body.IsEmpty)
        {
            _requestHeaders.ContentLength = body.Length;
        }

        var run = _pipeline.InvokeInnerAsync(_http, this);
        return run.IsCompletedSuccessfully && _onCompleted is null ? Task.CompletedTask : FinishAsync(run);
    }

    /// <summary>Answers the current item with an error without running anything (an item the caller refuses).</summary>
    public void Reject(string method, string path, int statusCode, string type, string message)
    {
        Prepare(method, path, string.Empty, default);
        StatusCode = statusCode;
        _responseHeaders.ContentType = JsonErrors.JsonContentType;
        JsonErrors.Write(_body, type, message);
    }

    /// <summary>Forgets what a failed handler wrote, so the error is the whole answer.</summary>
    internal void ClearResponse()
    {
        StatusCode = StatusCodes.Status200OK;
        ReasonPhrase = null;
        _responseHeaders.Clear();
        _body.Reset();
    }

    public void Dispose() => _body.Dispose();

    private void Prepare(string method, string path, string queryString, ReadOnlyMemory<byte> body)
    {
        _sequence++;
        _traceIdentifier = null;
        Method = method;
        Path = path;
        QueryString = queryString;
        RawTarget = path + queryString;
        _requestHeaders.Clear();
        _requestHeaders.Host = _outerHost;
        _requestBody = body;
        _requestReader = null;
        _requestStream = null;
        ClearResponse();
    }

    private async Task FinishAsync(Task run)
    {
        try
        {
            await run.ConfigureAwait(false);
        }
        finally
        {
            if (_onCompleted is { } callbacks)
            {
                _onCompleted = null;
                for (var i = callbacks.Count - 1; i >= 0; i--)
                {
                    await callbacks[i].Callback(callbacks[i].State).ConfigureAwait(false);
                }
            }
        }
    }

    // IHttpRequestFeature: what the item asked.
    public string Protocol { get; set; } = "HTTP/1.1";

    public string Scheme { get; set; }

    public string Method { get; set; } = HttpMethods.Get;

    public string PathBase { get; set; } = string.Empty;

    public string Path { get; set; } = "/";

    public string QueryString { get; set; } = string.Empty;

    public string RawTarget { get; set; } = "/";

    IHeaderDictionary IHttpRequestFeature.Headers
    {
        get => _requestHeaders;
        set => throw new NotSupportedException("An inner request's headers cannot be replaced.");
    }

    Stream IHttpRequestFeature.Body
    {
        get => _requestStream ??= ((IRequestBodyPipeFeature)this).Reader.AsStream(leaveOpen: true);
        set => throw new NotSupportedException("An inner request's body cannot be replaced.");
    }

    // IRequestBodyPipeFeature: the body handlers read.
    PipeReader IRequestBodyPipeFeature.Reader => _requestReader ??= PipeReader.Create(new ReadOnlySequence<byte>(_requestBody));

    // IHttpResponseFeature: what the handler answered.
    public string? ReasonPhrase { get; set; }

    IHeaderDictionary IHttpResponseFeature.Headers
    {
        get => _responseHeaders;
        set => throw new NotSupportedException("An inner request's response headers cannot be replaced.");
    }

    [Obsolete("Use IHttpResponseBodyFeature.Stream.")]
    Stream IHttpResponseFeature.Body
    {
        get => ((IHttpResponseBodyFeature)this).Stream;
        set => throw new NotSupportedException("An inner request's response body cannot be replaced.");
    }

    // Nothing is ever sent: the outer request copies the answer once the item is done.
    public bool HasStarted => false;

    public void OnStarting(Func<object, Task> callback, object state)
    {
    }

    public void OnCompleted(Func<object, Task> callback, object state) => (_onCompleted ??= []).Add((callback, state));

    // IHttpResponseBodyFeature
    Stream IHttpResponseBodyFeature.Stream => _responseStream ??= _body.AsStream(leaveOpen: true);

    PipeWriter IHttpResponseBodyFeature.Writer => _body;

    void IHttpResponseBodyFeature.DisableBuffering()
    {
    }

    Task IHttpResponseBodyFeature.StartAsync(CancellationToken cancellationToken) => Task.CompletedTask;

    Task IHttpResponseBodyFeature.SendFileAsync(string path, long offset, long? count, CancellationToken cancellationToken) =>
        SendFileFallback.SendFileAsync(((IHttpResponseBodyFeature)this).Stream, path, offset, count, cancellationToken);

    Task IHttpResponseBodyFeature.CompleteAsync() => Task.CompletedTask;

    // IHttpRequestLifetimeFeature: the outer request's connection is the item's.
    CancellationToken IHttpRequestLifetimeFeature.RequestAborted
    {
        get => _outer.RequestAborted;
        set => throw new NotSupportedException("An inner request is aborted with its outer request.");
    }

    void IHttpRequestLifetimeFeature.Abort() => _outer.Abort();

    // IHttpRequestIdentifierFeature: the outer trace id and the item's number, for log lines.
    string IHttpRequestIdentifierFeature.TraceIdentifier
    {
        get => _traceIdentifier ??= string.Concat(_outer.TraceIdentifier, "/", _sequence.ToString(System.Globalization.CultureInfo.InvariantCulture));
        set => _traceIdentifier = value;
    }
}
