using System.Net;
using System.Net.Http.Headers;
using System.Net.WebSockets;
using System.Text.Json;

namespace Jackdaw.Client.Http;

/// <summary>
/// The store's one <see cref="HttpClient"/>: sends requests to the first URL that answers, applies
/// the request timeout and turns every failure into a <see cref="JackdawException"/>. It also opens
/// the store's WebSockets, through a handler of their own with the same TLS settings. Thread-safe.
/// </summary>
internal sealed class RequestExecutor : IDisposable
{
    /// <summary>What a plain-http request closed without an answer may mean: the address is a secured server's.</summary>
    private const string SecuredServerHint = "A secured Jackdaw server closes plain-http connections so: if this one is secured, use its https:// URL.";

    private static readonly MediaTypeHeaderValue JsonContentType = MediaTypeHeaderValue.Parse("application/json; charset=utf-8");
    private readonly HttpClient _client;
    private readonly HttpClient _streamingClient;
    private readonly HttpMessageInvoker _webSockets;
    private readonly ClientTls _tls;
    private readonly string[] _urls;
    private int _preferredUrl;

    public RequestExecutor(string[] urls, TimeSpan timeout, HttpMessageHandler handler, ClientTls tls)
    {
        _urls = urls;
        _tls = tls;

        // Two clients over one handler (one connection pool). Ordinary requests use HttpClient's own
        // timeout: it links the caller's token to the timer in the one token source HttpClient makes
        // per request anyway, where a linked source of ours would be a second one (plus a second
        // timer) on every load. Bulk insert streams for as long as it takes, so its client has none.
        _client = new HttpClient(handler, disposeHandler: false) { Timeout = timeout };
        _client.DefaultRequestHeaders.Accept.Add(new MediaTypeWithQualityHeaderValue("application/json"));
        _streamingClient = new HttpClient(handler, disposeHandler: true) { Timeout = Timeout.InfiniteTimeSpan };
        _streamingClient.DefaultRequestHeaders.Accept.Add(new MediaTypeWithQualityHeaderValue("application/json"));

        // Upgraded connections leave the pool, so WebSockets get a handler of their own (the one
        // above may also be a test's fake), with the same certificates.
        _webSockets = new HttpMessageInvoker(CreateDefaultHandler(tls), disposeHandler: true);
    }

    public static SocketsHttpHandler CreateDefaultHandler(ClientTls tls)
    {
        var handler = new SocketsHttpHandler
        {
            PooledConnectionLifetime = TimeSpan.FromMinutes(10),
            PooledConnectionIdleTimeout = TimeSpan.FromMinutes(2),
            MaxConnectionsPerServer = int.MaxValue,
            AutomaticDecompression = DecompressionMethods.None,
            UseCookies = false,
            ConnectTimeout = TimeSpan.FromSeconds(10),
        };
        tls.Apply(handler);
        return handler;
    }

    /// <summary>URL requests go to now (the last one that answered).</summary>
    public string CurrentUrl => _urls[Volatile.Read(ref _preferredUrl)];

    /// <summary>
    /// What a request that asks the server to wait (for non-stale results) is given on top of that
    /// wait, for the work after it and the answer (RavenDB's clients add the same 10 s).
    /// </summary>
    public static readonly TimeSpan ServerWaitMargin = TimeSpan.FromSeconds(10);

    /// <summary>
    /// Sends a request with an optional JSON body and returns the buffered successful response
    /// (the caller disposes it). Connection failures move on to the store's next URL; a non-2xx
    /// answer throws the exception its error body names. The request timeout applies to each
    /// attempt (a refused connection fails at once, so failing over rarely adds to it).
    /// </summary>
    public Task<HttpResponseMessage> SendAsync(HttpMethod method, string pathAndQuery, ReadOnlyMemory<byte>? jsonBody, CancellationToken token) =>
        SendAsync(method, pathAndQuery, jsonBody, serverWait: null, token);

    /// <summary>
    /// As <see cref="SendAsync(HttpMethod, string, ReadOnlyMemory{byte}?, CancellationToken)"/>, for
    /// a request that asks the server to wait up to <paramref name="serverWait"/> before it answers
    /// (<c>WaitForNonStaleResultsTimeout</c>): its time limit is that wait plus
    /// <see cref="ServerWaitMargin"/> when this is longer than the request timeout, so that the
    /// server's answer (or its own timeout error) arrives instead of a cancelled request.
    /// </summary>
    public Task<HttpResponseMessage> SendAsync(HttpMethod method, string pathAndQuery, ReadOnlyMemory<byte>? jsonBody, TimeSpan? serverWait, CancellationToken token)
    {
        var longer = serverWait is { } wait && wait + ServerWaitMargin > _client.Timeout ? wait + ServerWaitMargin : (TimeSpan?)null;
        return SendAsync(_client, HttpCompletionOption.ResponseContentRead, longer, method, pathAndQuery, JsonContentFactory(jsonBody), null, token);
    }

    /// <summary>
    /// A request whose body the caller composes (an attachment's bytes, a multipart batch) or whose
    /// answer is read as a stream (an attachment), with request headers of its own. A body or a
    /// streamed answer takes as long as its bytes, so neither has the request timeout; a request with
    /// neither has it. <paramref name="createContent"/> is called once per attempt (a connection
    /// failure moves on to the next URL before anything was sent).
    /// </summary>
    /// <param name="streamAnswer">Return once the headers arrived, the body still to be read.</param>
    public Task<HttpResponseMessage> SendAsync(HttpMethod method, string pathAndQuery, Func<HttpContent>? createContent, Action<HttpRequestHeaders>? headers, bool streamAnswer, CancellationToken token)
    {
        var client = createContent is null && !streamAnswer ? _client : _streamingClient;
        var completion = streamAnswer ? HttpCompletionOption.ResponseHeadersRead : HttpCompletionOption.ResponseContentRead;
        return SendAsync(client, completion, null, method, pathAndQuery, createContent, headers, token);
    }

    private static Func<HttpContent>? JsonContentFactory(ReadOnlyMemory<byte>? jsonBody)
    {
        if (jsonBody is not { } body)
        {
            return null;
        }

        return () =>
        {
            var content = new ReadOnlyMemoryContent(body);
            content.Headers.ContentType = JsonContentType;
            return content;
        };
    }

    /// <summary>
    /// As <see cref="SendAsync(HttpMethod, string, ReadOnlyMemory{byte}?, CancellationToken)"/>, but returns once the
    /// headers arrived, the body still to be read (streams), and without the request timeout: a
    /// stream takes as long as its reader.
    /// </summary>
    public Task<HttpResponseMessage> SendForStreamAsync(HttpMethod method, string pathAndQuery, ReadOnlyMemory<byte>? jsonBody, CancellationToken token) =>
        SendAsync(_streamingClient, HttpCompletionOption.ResponseHeadersRead, null, method, pathAndQuery, JsonContentFactory(jsonBody), null, token);

    /// <param name="limit">A time limit longer than the request timeout: the request goes through the client without one, cancelled after it.</param>
    private async Task<HttpResponseMessage> SendAsync(HttpClient client, HttpCompletionOption completion, TimeSpan? limit, HttpMethod method, string pathAndQuery, Func<HttpContent>? createContent, Action<HttpRequestHeaders>? headers, CancellationToken token)
    {
        var first = Volatile.Read(ref _preferredUrl);
        HttpRequestException? lastConnectionError = null;
        for (var attempt = 0; attempt < _urls.Length; attempt++)
        {
            var index = (first + attempt) % _urls.Length;
            using var request = new HttpRequestMessage(method, _urls[index] + pathAndQuery);
            request.Content = createContent?.Invoke();
            headers?.Invoke(request.Headers);

            HttpResponseMessage response;
            try
            {
                response = limit is { } longer
                    ? await SendWithLimitAsync(request, longer, token).ConfigureAwait(false)
                    : await client.SendAsync(request, completion, token).ConfigureAwait(false);
            }
            catch (HttpRequestException e) when (e.HttpRequestError is HttpRequestError.ConnectionError or HttpRequestError.NameResolutionError)
            {
                // Nothing reached that server, so trying the next one cannot apply a write twice.
                lastConnectionError = e;
                continue;
            }
            catch (Exception e) when (e is not OperationCanceledException || !token.IsCancellationRequested)
            {
                // A failed TLS handshake is not failed over: it is the store's settings (or the
                // server's certificate), the same at every URL.
                throw Translate(e, method, _urls[index] + pathAndQuery);
            }

            if (index != first)
                Volatile.Write(ref _preferredUrl, index);
            if (response.IsSuccessStatusCode)
                return response;
            using (response)
                throw await CreateErrorAsync(response, method, pathAndQuery, token).ConfigureAwait(false);
        }

        throw new ServerUnavailableException(
            $"Could not connect to the Jackdaw server at {string.Join(", ", _urls)} ({lastConnectionError?.Message}). Check that the server is running and that DocumentStore.Urls points at it.",
            lastConnectionError);
    }

    /// <summary>A request with a time limit of its own, longer than the request timeout (on the client without one).</summary>
    private async Task<HttpResponseMessage> SendWithLimitAsync(HttpRequestMessage request, TimeSpan limit, CancellationToken token)
    {
        using var timeout = CancellationTokenSource.CreateLinkedTokenSource(token);
        timeout.CancelAfter(limit);
        return await _streamingClient.SendAsync(request, HttpCompletionOption.ResponseContentRead, timeout.Token).ConfigureAwait(false);
    }

    /// <summary>
    /// Sends a request whose content streams while the call runs (bulk insert): no timeout, no
    /// retry on another URL, headers-read completion.
    /// </summary>
    public async Task<HttpResponseMessage> SendStreamingAsync(HttpRequestMessage request, CancellationToken token)
    {
        try
        {
            return await _streamingClient.SendAsync(request, HttpCompletionOption.ResponseHeadersRead, token).ConfigureAwait(false);
        }
        catch (Exception e) when (e is not OperationCanceledException || !token.IsCancellationRequested)
        {
            throw Translate(e, request.Method, request.RequestUri?.ToString() ?? "");
        }
    }

    /// <summary>
    /// Opens <paramref name="socket"/> to <paramref name="uri"/> (<c>ws(s)://</c> of the current URL)
    /// with the store's TLS settings. A failed handshake throws <see cref="CertificateException"/>,
    /// and a refused upgrade (401, 403) the <see cref="AuthorizationException"/> with the server's
    /// message; any other failure is the socket's own, for the caller to name.
    /// </summary>
    public async Task ConnectWebSocketAsync(ClientWebSocket socket, Uri uri, CancellationToken token)
    {
        socket.Options.CollectHttpResponseDetails = true;
        try
        {
            await socket.ConnectAsync(uri, _webSockets, token).ConfigureAwait(false);
        }
        catch (WebSocketException e) when (_tls.Explain(e, uri) is { } failed)
        {
            throw failed;
        }
        catch (WebSocketException e) when (socket.HttpStatusCode is HttpStatusCode.Unauthorized or HttpStatusCode.Forbidden)
        {
            throw await ExplainRefusalAsync(uri, socket.HttpStatusCode, e, token).ConfigureAwait(false);
        }
        catch (WebSocketException e) when (uri.Scheme == Uri.UriSchemeWs && ClientTls.InnerOf<HttpRequestException>(e) is { HttpRequestError: HttpRequestError.ResponseEnded })
        {
            throw new ServerUnavailableException($"The server closed the connection without answering the WebSocket request to {uri}. {SecuredServerHint}", e);
        }
    }

    /// <summary>
    /// <c>ClientWebSocket</c> keeps no body of a refused upgrade, so the same path is asked again
    /// as a plain GET: the server checks access before the route runs, so it refuses that one the
    /// same way, with its message in the body.
    /// </summary>
    private async Task<JackdawException> ExplainRefusalAsync(Uri uri, HttpStatusCode status, WebSocketException refused, CancellationToken token)
    {
        try
        {
            using var response = await SendAsync(HttpMethod.Get, uri.PathAndQuery, null, token).ConfigureAwait(false);
        }
        catch (AuthorizationException e)
        {
            return e;
        }
        catch (JackdawException)
        {
            // Answered otherwise this time (access granted meanwhile, say): the upgrade's status says enough.
        }

        return new AuthorizationException($"The server refused the WebSocket connection to {uri} with {(int)status} {status} ({refused.Message}).", status, ErrorTypes.Authorization);
    }

    /// <summary>A failed TLS handshake as a <see cref="CertificateException"/>, anything else as <see cref="TranslateTransportFailure"/> says.</summary>
    private JackdawException Translate(Exception e, HttpMethod method, string url) =>
        (Uri.TryCreate(url, UriKind.Absolute, out var uri) ? _tls.Explain(e, uri) : null) ?? TranslateTransportFailure(e, method, url);

    public string UrlFor(string pathAndQuery) => CurrentUrl + pathAndQuery;

    /// <summary>Reads a non-2xx response's <c>{"Type","Message"}</c> body into the matching exception.</summary>
    public static async Task<JackdawException> CreateErrorAsync(HttpResponseMessage response, HttpMethod method, string pathAndQuery, CancellationToken token)
    {
        byte[] body;
        try
        {
            body = await response.Content.ReadAsByteArrayAsync(token).ConfigureAwait(false);
        }
        catch (Exception e) when (e is HttpRequestException or IOException)
        {
            body = [];
        }

        return CreateError(response.StatusCode, body, method, pathAndQuery);
    }

    public static JackdawException CreateError(HttpStatusCode status, ReadOnlySpan<byte> body, HttpMethod method, string pathAndQuery)
    {
        string? type = null, message = null;
        try
        {
            var reader = new Utf8JsonReader(body);
            if (reader.Read() && reader.TokenType == JsonTokenType.StartObject)
            {
                while (reader.Read() && reader.TokenType == JsonTokenType.PropertyName)
                {
                    var isType = reader.ValueTextEquals("Type"u8);
                    var isMessage = reader.ValueTextEquals("Message"u8);
                    reader.Read();
                    if (isType && reader.TokenType == JsonTokenType.String)
                        type = reader.GetString();
                    else if (isMessage && reader.TokenType == JsonTokenType.String)
                        message = reader.GetString();
                    else
                        reader.Skip();
                }
            }
        }
        catch (JsonException)
        {
            // Not our JSON error body (a proxy's HTML page, say): the raw text below says what it was.
        }

        message ??= $"{method} {pathAndQuery} failed with {(int)status} {status}: {System.Text.Encoding.UTF8.GetString(body[..Math.Min(body.Length, 500)])}";
        return type switch
        {
            ErrorTypes.Concurrency => new ConcurrencyException(message, status, type),
            ErrorTypes.DocumentDoesNotExist => new DocumentDoesNotExistException(message, status, type),
            ErrorTypes.DatabaseDoesNotExist => new DatabaseDoesNotExistException(message, status, type),
            ErrorTypes.DatabaseAlreadyExists => new DatabaseAlreadyExistsException(message, status, type),
            ErrorTypes.BadRequest or ErrorTypes.InvalidJson => new BadRequestException(message, status, type),
            ErrorTypes.InvalidQuery => new InvalidQueryException(message, status, type),
            ErrorTypes.IndexDoesNotExist => new IndexDoesNotExistException(message, status, type),
            ErrorTypes.IndexCompilation => new IndexCompilationException(message, status, type),
            ErrorTypes.IndexLocked => new IndexLockedException(message, status, type),
            ErrorTypes.Timeout => new ServerTimeoutException(message, status, type),
            ErrorTypes.AnalyzerCompilation => new AnalyzerCompilationException(message, status, type),
            ErrorTypes.AnalyzerInUse => new AnalyzerInUseException(message, status, type),
            ErrorTypes.Authorization => new AuthorizationException(message, status, type),
            _ => new JackdawException(message, status, type),
        };
    }

    public static JackdawException TranslateTransportFailure(Exception e, HttpMethod method, string url) => e switch
    {
        OperationCanceledException => new ServerUnavailableException($"{method} {url} got no answer within the request timeout (DocumentConventions.RequestTimeout).", e),
        HttpRequestException { HttpRequestError: HttpRequestError.ConnectionError or HttpRequestError.NameResolutionError } =>
            new ServerUnavailableException($"Could not connect to the Jackdaw server for {method} {url} ({e.Message}). Check that the server is running and that DocumentStore.Urls points at it.", e),
        HttpRequestException { HttpRequestError: HttpRequestError.ResponseEnded } when url.StartsWith("http://", StringComparison.OrdinalIgnoreCase) =>
            new ServerUnavailableException($"The Jackdaw server closed the connection without answering {method} {url}; a write may or may not have been applied. {SecuredServerHint}", e),
        HttpRequestException or IOException =>
            new ServerUnavailableException($"The connection to the Jackdaw server broke during {method} {url} ({e.Message}); a write may or may not have been applied.", e),
        JackdawException j => j,
        _ => new JackdawException($"{method} {url} failed: {e.Message}", e),
    };

    public void Dispose()
    {
        _client.Dispose();
        _streamingClient.Dispose();
        _webSockets.Dispose();
    }
}
