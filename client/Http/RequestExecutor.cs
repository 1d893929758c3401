using System.Collections.Concurrent;
using System.Net;
using System.Net.Http.Headers;
using System.Net.WebSockets;
using System.Text.Json;

namespace Jackdaw.Client.Http;

/// <summary>
/// The store's HTTP client: sends each request to a node of its database's topology, fails over to
/// the next node when one is down, applies the request timeout and turns every failure into a
/// <see cref="JackdawException"/>. It also opens the store's WebSockets, through a handler of
/// their own with the same TLS settings. Thread-safe.
/// </summary>
/// <remarks>
/// A request's database is read from its path (<c>/databases/{name}/...</c>, as
/// <see cref="DocumentStore.DatabasePath"/> writes it); such a request goes to the node its
/// database's topology prefers (<see cref="DatabaseNodes"/>). Other requests (server-wide ones:
/// <c>/admin/databases</c>, <c>/topology</c>) go to the store's URLs, and to every node a
/// topology named, starting with the last one that answered.
/// </remarks>
internal sealed partial class RequestExecutor : IDisposable
{
    /// <summary>What a plain-http request closed without an answer may mean: the address is a secured server's.</summary>
    private const string SecuredServerHint = "A secured Jackdaw server closes plain-http connections so: if this one is secured, use its https:// URL.";

    /// <summary>RavenDB's request header with the topology etag the client holds.</summary>
    public const string TopologyEtagHeaderName = "Topology-Etag";

    /// <summary>RavenDB's response header saying the client's topology is out of date.</summary>
    public const string RefreshTopologyHeaderName = "Refresh-Topology";

    /// <summary>RavenDB's request header with the etag of the client configuration the client holds.</summary>
    public const string ClientConfigurationEtagHeaderName = "Client-Configuration-Etag";

    /// <summary>RavenDB's response header saying the client configuration changed.</summary>
    public const string RefreshClientConfigurationHeaderName = "Refresh-Client-Configuration";

    private static readonly MediaTypeHeaderValue JsonContentType = MediaTypeHeaderValue.Parse("application/json; charset=utf-8");
    private readonly HttpClient _client;
    private readonly HttpClient _streamingClient;
    private readonly HttpMessageInvoker _webSockets;
    private readonly ClientTls _tls;
    private readonly DocumentConventions _conventions;
    private readonly string[] _initialUrls;
    private readonly ConcurrentDictionary<string, DatabaseNodes> _databases = new(StringComparer.OrdinalIgnoreCase);
    private readonly ConcurrentDictionary<string, DatabaseNodes>.AlternateLookup<ReadOnlySpan<char>> _databasesByName;
    private readonly CancellationTokenSource _disposing = new();
    private string[] _serverUrls;
    private int _preferredServerUrl;
    private int _sessions;

    public RequestExecutor(string[] urls, DocumentConventions conventions, HttpMessageHandler handler, ClientTls tls)
    {
        _initialUrls = urls;
        _serverUrls = urls;
        _conventions = conventions;
        _tls = tls;
        _databasesByName = _databases.GetAlternateLookup<ReadOnlySpan<char>>();

        // Two clients over one handler (one connection pool). Ordinary requests use HttpClient's own
        // timeout: it links the caller's token to the timer in the one token source HttpClient makes
        // per request anyway, where a linked source of ours would be a second one (plus a second
        // timer) on every load. Bulk insert streams for as long as it takes, so its client has none.
        _client = new HttpClient(handler, disposeHandler: false) { Timeout = conventions.RequestTimeout };
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

    /// <summary>The store's URLs, in the order given.</summary>
    public IReadOnlyList<string> InitialUrls => _initialUrls;

    public bool TopologyUpdatesDisabled => _conventions.DisableTopologyUpdates;

    public ReadBalanceBehavior ReadBalanceBehavior => _conventions.ReadBalanceBehavior;

    /// <summary>Cancelled when the store is disposed: ends health checks and refreshes.</summary>
    public CancellationToken Disposing => _disposing.Token;

    /// <summary>A new session's identity: consecutive numbers, so that round-robin reads spread sessions over the nodes.</summary>
    public SessionInfo NewSession() => new(Interlocked.Increment(ref _sessions));

    /// <summary>
    /// What a request that asks the server to wait (for non-stale results) is given on top of that
    /// wait, for the work after it and the answer (RavenDB's clients add the same 10 s).
    /// </summary>
    public static readonly TimeSpan ServerWaitMargin = TimeSpan.FromSeconds(10);

    /// <summary>The nodes of <paramref name="database"/>: its topology, failures and health checks.</summary>
    internal DatabaseNodes NodesOf(string database) =>
        _databases.TryGetValue(database, out var nodes) ? nodes : _databases.GetOrAdd(database, static (name, self) => new DatabaseNodes(self, name), this);

    /// <summary>The topology of <paramref name="database"/> as the store knows it now (asked for first if it was not yet).</summary>
    public async Task<Topology> GetTopologyAsync(string database, CancellationToken token) =>
        (await NodesOf(database).GetSelectorAsync(token).ConfigureAwait(false)).Topology;

    /// <summary>
    /// The URL of the node the database's topology prefers now, for a connection the executor does
    /// not send itself (a WebSocket, a bulk insert): each new connection follows failovers.
    /// </summary>
    public async Task<string> GetPreferredUrlAsync(string database, CancellationToken token) =>
        (await NodesOf(database).GetSelectorAsync(token).ConfigureAwait(false)).GetPreferredNode().Node.Url;

    /// <summary>
    /// A connection to <paramref name="url"/> failed outside the executor (a WebSocket): the node
    /// is marked failed and checked, as if a request had failed there.
    /// </summary>
    public void OnConnectionFailed(string database, string url)
    {
        var nodes = NodesOf(database);
        if (nodes.Selector is { } selector && selector.Topology.Nodes.FirstOrDefault(n => string.Equals(n.Url, url, StringComparison.OrdinalIgnoreCase)) is { } node)
        {
            nodes.OnFailed(selector, node);
        }
    }

    /// <summary>The store's URLs as a topology, for a database no server gave one of.</summary>
    internal Topology TopologyFromUrls(string database) =>
        new(-1, [.. _initialUrls.Select(url => new ServerNode(url, database, "?", ServerNode.Role.Member))]);

    /// <summary>
    /// Sends a request with an optional JSON body and returns the buffered successful response
    /// (the caller disposes it). A node that is down (no connection, a broken connection, no
    /// answer within the request timeout, or 502, 503, 504) is marked failed and the request is
    /// sent again to the next node; a non-2xx answer throws the exception its error body names.
    /// The request timeout applies to each attempt.
    /// </summary>
    public Task<HttpResponseMessage> SendAsync(HttpMethod method, string pathAndQuery, ReadOnlyMemory<byte>? jsonBody, CancellationToken token) =>
        SendAsync(method, pathAndQuery, jsonBody, serverWait: null, session: null, token);

    /// <summary>
    /// As <see cref="SendAsync(HttpMethod, string, ReadOnlyMemory{byte}?, CancellationToken)"/>, for
    /// a session's request (its reads are balanced over the nodes by
    /// <see cref="DocumentConventions.ReadBalanceBehavior"/>) that may ask the server to wait up to
    /// <paramref name="serverWait"/> before it answers (<c>WaitForNonStaleResultsTimeout</c>,
    /// write assurance): its time limit is that wait plus <see cref="ServerWaitMargin"/> when this
    /// is longer than the request timeout, so that the server's answer (or its own timeout error)
    /// arrives instead of a cancelled request.
    /// </summary>
    public Task<HttpResponseMessage> SendAsync(HttpMethod method, string pathAndQuery, ReadOnlyMemory<byte>? jsonBody, TimeSpan? serverWait, SessionInfo? session, CancellationToken token)
    {
        var longer = serverWait is { } wait && wait + ServerWaitMargin > _client.Timeout ? wait + ServerWaitMargin : (TimeSpan?)null;
        return SendAsync(new Attempt(_client, HttpCompletionOption.ResponseContentRead, longer, method, pathAndQuery, JsonContentFactory(jsonBody), null), session, token);
    }

    /// <summary>
    /// A request whose body the caller composes (an attachment's bytes, a multipart batch) or whose
    /// answer is read as a stream (an attachment), with request headers of its own. A body or a
    /// streamed answer takes as long as its bytes, so neither has the request timeout; a request with
    /// neither has it. <paramref name="createContent"/> is called once per attempt (a failover sends
    /// the body again to the next node).
    /// </summary>
    /// <param name="streamAnswer">Return once the headers arrived, the body still to be read.</param>
    public Task<HttpResponseMessage> SendAsync(HttpMethod method, string pathAndQuery, Func<HttpContent>? createContent, Action<HttpRequestHeaders>? headers, bool streamAnswer, CancellationToken token) =>
        SendAsync(method, pathAndQuery, createContent, headers, streamAnswer, serverWait: null, session: null, canResend: null, token);

    /// <summary>As <see cref="SendAsync(HttpMethod, string, Func{HttpContent}?, Action{HttpRequestHeaders}?, bool, CancellationToken)"/>, for a session's request.</summary>
    /// <param name="canResend">
    /// Whether the body can be made again for another attempt: false once a forward-only stream in it
    /// was read. Such a request is not failed over; it throws the node's failure, saying why. Null: always.
    /// </param>
    public Task<HttpResponseMessage> SendAsync(HttpMethod method, string pathAndQuery, Func<HttpContent>? createContent, Action<HttpRequestHeaders>? headers, bool streamAnswer, TimeSpan? serverWait, SessionInfo? session, Func<bool>? canResend, CancellationToken token)
    {
        var client = createContent is null && !streamAnswer && serverWait is null ? _client : _streamingClient;
        var completion = streamAnswer ? HttpCompletionOption.ResponseHeadersRead : HttpCompletionOption.ResponseContentRead;
        return SendAsync(new Attempt(client, completion, null, method, pathAndQuery, createContent, headers, canResend), session, token);
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
    /// stream takes as long as its reader. A failover happens before the headers only: a stream
    /// that breaks once started throws.
    /// </summary>
    public Task<HttpResponseMessage> SendForStreamAsync(HttpMethod method, string pathAndQuery, ReadOnlyMemory<byte>? jsonBody, SessionInfo? session, CancellationToken token) =>
        SendAsync(new Attempt(_streamingClient, HttpCompletionOption.ResponseHeadersRead, null, method, pathAndQuery, JsonContentFactory(jsonBody), null), session, token);

    /// <summary>
    /// A database's request for the node tagged <paramref name="nodeTag"/> alone (RavenDB's
    /// <c>SelectedNodeTag</c>: an operation's state, on the node that runs it), not failed over: no
    /// other node could answer it. Without a tag, or when the topology has no node of that tag (the
    /// store's URLs standing in for it, say), it is an ordinary request.
    /// </summary>
    public async Task<HttpResponseMessage> SendToNodeAsync(HttpMethod method, string pathAndQuery, string? nodeTag, CancellationToken token)
    {
        if (nodeTag is null || DatabaseOf(pathAndQuery) is not { } database)
        {
            return await SendAsync(method, pathAndQuery, null, token).ConfigureAwait(false);
        }

        var nodes = NodesOf(database);
        var selector = await nodes.GetSelectorAsync(token).ConfigureAwait(false);
        if (selector.Topology.Nodes.FirstOrDefault(n => string.Equals(n.ClusterTag, nodeTag, StringComparison.OrdinalIgnoreCase)) is not { } node)
        {
            return await SendAsync(method, pathAndQuery, null, token).ConfigureAwait(false);
        }

        return await SendToUrlAsync(database, node.Url, method, pathAndQuery, token).ConfigureAwait(false);
    }

    /// <summary>
    /// A database's request for the node at <paramref name="url"/> alone, not failed over (the
    /// operation id of a bulk insert, which streams to that node next). A node that cannot be
    /// reached is marked failed, for the requests after it.
    /// </summary>
    public async Task<HttpResponseMessage> SendToUrlAsync(string database, string url, HttpMethod method, string pathAndQuery, CancellationToken token)
    {
        var attempt = new Attempt(_client, HttpCompletionOption.ResponseContentRead, null, method, pathAndQuery, null, null);
        var (response, failure) = await TrySendOnceAsync(url, attempt, NodesOf(database), token).ConfigureAwait(false);
        if (response is null)
        {
            OnConnectionFailed(database, url);
            throw failure!;
        }

        if (response.IsSuccessStatusCode)
        {
            return response;
        }

        using (response)
        {
            throw await CreateErrorAsync(response, attempt.Method, attempt.PathAndQuery, token).ConfigureAwait(false);
        }
    }

    /// <summary>One request, as sent to each node it is tried on.</summary>
    /// <param name="Limit">A time limit longer than the request timeout: the request goes through the client without one, cancelled after it.</param>
    /// <param name="CanResend">Whether <paramref name="CreateContent"/> can make the body again (null: always).</param>
    internal readonly record struct Attempt(HttpClient Client, HttpCompletionOption Completion, TimeSpan? Limit, HttpMethod Method, string PathAndQuery, Func<HttpContent>? CreateContent, Action<HttpRequestHeaders>? Headers, Func<bool>? CanResend = null)
    {
        /// <summary>The body cannot be sent (again): a forward-only stream in it was read by an attempt.</summary>
        public bool Spent => CanResend is { } canResend && !canResend();
    }

    /// <summary>Why a request whose body is <see cref="Attempt.Spent"/> is not sent (again).</summary>
    private const string SpentBodyExplanation =
        "its body holds a forward-only stream (an attachment's) that an attempt already read, which cannot be sent again; give a seekable stream (a file, a MemoryStream) to have such a request retried";

    private Task<HttpResponseMessage> SendAsync(Attempt attempt, SessionInfo? session, CancellationToken token) =>
        NodesFor(attempt.PathAndQuery) is { } nodes
            ? SendToDatabaseAsync(nodes, attempt, session, token)
            : SendToServerAsync(attempt, token);

    /// <summary>
    /// The nodes of the database a <c>/databases/{name}/...</c> path names, or null for a
    /// server-wide path. Every request asks: a known name not escaped in the path is looked up as
    /// it stands there, without a string made for it.
    /// </summary>
    private DatabaseNodes? NodesFor(string pathAndQuery)
    {
        var name = DatabaseSegment(pathAndQuery);
        if (name.IsEmpty)
        {
            return null;
        }

        if (!name.Contains('%') && _databasesByName.TryGetValue(name, out var nodes))
        {
            return nodes;
        }

        return NodesOf(Uri.UnescapeDataString(name.ToString()));
    }

    /// <summary>The database a <c>/databases/{name}/...</c> path names, or null for a server-wide path.</summary>
    internal static string? DatabaseOf(string pathAndQuery)
    {
        var name = DatabaseSegment(pathAndQuery);
        return name.IsEmpty ? null : Uri.UnescapeDataString(name.ToString());
    }

    /// <summary>The <c>{name}</c> of a <c>/databases/{name}/...</c> path as it stands there (escaped); empty for another path.</summary>
    private static ReadOnlySpan<char> DatabaseSegment(string pathAndQuery)
    {
        const string prefix = "/databases/";
        if (!pathAndQuery.StartsWith(prefix, StringComparison.Ordinal))
        {
            return [];
        }

        var rest = pathAndQuery.AsSpan(prefix.Length);
        var end = rest.IndexOfAny('/', '?');
        return end < 0 ? rest : rest[..end];
    }

    private static bool Says(HttpResponseMessage response, string header) =>
        response.Headers.TryGetValues(header, out var values) && values.Any(v => v.Equals("true", StringComparison.OrdinalIgnoreCase));

    /// <summary>RavenDB's clients fail over on these: the node is down or cannot serve the database now.</summary>
    private static bool IsNodeDown(HttpStatusCode status) =>
        status is HttpStatusCode.BadGateway or HttpStatusCode.ServiceUnavailable or HttpStatusCode.GatewayTimeout;

    /// <summary>
    /// A read, for read balancing (RavenDB's <c>IsReadRequest</c>): a GET or HEAD, a query, a
    /// streamed query, or an attachment asked for by POST. <c>multi_get</c> is not one, as in RavenDB.
    /// </summary>
    private static bool IsRead(in Attempt attempt)
    {
        if (attempt.Method == HttpMethod.Get || attempt.Method == HttpMethod.Head)
        {
            return true;
        }

        if (attempt.Method != HttpMethod.Post)
        {
            return false;
        }

        var path = attempt.PathAndQuery.AsSpan();
        var query = path.IndexOf('?');
        if (query >= 0)
        {
            path = path[..query];
        }

        return path.EndsWith("/queries", StringComparison.Ordinal) || path.EndsWith("/attachments", StringComparison.Ordinal) || path.EndsWith("/attachments/bulk", StringComparison.Ordinal);
    }

    /// <summary>
    /// Sends <paramref name="attempt"/> to one URL. Returns the response (whatever its status), or
    /// the failure when the node could not be reached or did not answer (no connection, a connection
    /// broken before the answer, the request timeout): the caller may try another node. A failed TLS
    /// handshake throws: it is the store's settings (or the server's certificate), the same at every
    /// node. So does the caller's cancellation.
    /// </summary>
    /// <param name="nodes">The database's nodes, for a database's request: the request carries the etags of its topology and client configuration.</param>
    private async Task<(HttpResponseMessage? Response, JackdawException? Failure)> TrySendOnceAsync(string url, Attempt attempt, DatabaseNodes? nodes, CancellationToken token)
    {
        using var request = new HttpRequestMessage(attempt.Method, url + attempt.PathAndQuery);
        request.Content = attempt.CreateContent?.Invoke();
        attempt.Headers?.Invoke(request.Headers);
        if (nodes is not null)
        {
            if (nodes.TopologyEtagHeader is { } topologyEtag)
            {
                request.Headers.TryAddWithoutValidation(TopologyEtagHeaderName, topologyEtag);
            }

            request.Headers.TryAddWithoutValidation(ClientConfigurationEtagHeaderName, nodes.ClientConfigurationEtagHeader);
        }

        try
        {
            var response = attempt.Limit is { } longer
                ? await SendWithLimitAsync(request, longer, token).ConfigureAwait(false)
                : await attempt.Client.SendAsync(request, attempt.Completion, token).ConfigureAwait(false);
            return (response, null);
        }
        catch (Exception e) when (e is not OperationCanceledException || !token.IsCancellationRequested)
        {
            var target = url + attempt.PathAndQuery;
            var translated = Translate(e, attempt.Method, target);
            if (translated is CertificateException || !IsNetworkFailure(e))
            {
                throw translated;
            }

            return (null, translated);
        }
    }

    /// <summary>The request never left: the connection was refused or the name not resolved.</summary>
    private static bool NothingWasSent(JackdawException failure) =>
        failure.InnerException is HttpRequestException { HttpRequestError: HttpRequestError.ConnectionError or HttpRequestError.NameResolutionError };

    /// <summary>No answer from the node: no connection, a connection broken before the answer, or the request timeout.</summary>
    private static bool IsNetworkFailure(Exception e) => e switch
    {
        OperationCanceledException or IOException => true,
        HttpRequestException { HttpRequestError: HttpRequestError.ConnectionError or HttpRequestError.NameResolutionError or HttpRequestError.ResponseEnded } => true,
        HttpRequestException { InnerException: IOException or System.Net.Sockets.SocketException } => true,
        _ => false,
    };

    /// <summary>A request with a time limit of its own, longer than the request timeout (on the client without one).</summary>
    private async Task<HttpResponseMessage> SendWithLimitAsync(HttpRequestMessage request, TimeSpan limit, CancellationToken token)
    {
        using var timeout = CancellationTokenSource.CreateLinkedTokenSource(token);
        timeout.CancelAfter(limit);
        return await _streamingClient.SendAsync(request, HttpCompletionOption.ResponseContentRead, timeout.Token).ConfigureAwait(false);
    }

    /// <summary>
    /// Sends a request whose content streams while the call runs (bulk insert): no timeout, no
    /// retry on another node (the stream cannot be sent twice), headers-read completion.
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
    /// Opens <paramref name="socket"/> to <paramref name="uri"/> (<c>ws(s)://</c> of the node chosen for it)
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

    public void Dispose()
    {
        _disposing.Cancel();
        _client.Dispose();
        _streamingClient.Dispose();
        _webSockets.Dispose();
    }
}
