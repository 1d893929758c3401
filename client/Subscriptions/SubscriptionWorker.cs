using System.Buffers;
using System.Net;
using System.Net.WebSockets;
using System.Text;
using System.Text.Json;
using Jackdaw.Client.Subscriptions;

namespace Jackdaw.Client;

/// <summary>
/// Processes a subscription's batches: connects with a WebSocket to the store's server
/// (<c>ws(s)://.../databases/{db}/subscriptions/connect</c>), hands each batch to the function given to
/// <see cref="Run(Func{SubscriptionBatch{T}, Task}, CancellationToken)"/>, acknowledges it and waits for
/// the server's confirmation (the position is stored durably) before the next batch comes.
/// </summary>
/// <remarks>
/// Lost connections, a server <c>Error</c> message and a dropped connection
/// (<see cref="DocumentSubscriptions.DropConnectionAsync"/>) are retried: the wait starts at
/// <see cref="SubscriptionWorkerOptions.TimeToWaitBeforeConnectionRetry"/> and doubles per failure
/// (at most 30 s, or that value when larger), for at most <see cref="SubscriptionWorkerOptions.MaxErroneousPeriod"/>
/// without a batch going through. The worker stops, and <c>Run</c>'s task fails, as RavenDB's does when
/// retrying cannot help: <see cref="SubscriptionDoesNotExistException"/>, <see cref="SubscriptionInUseException"/>
/// (an <see cref="SubscriptionOpeningStrategy.OpenIfFree"/> worker finding it held: it does not wait, use
/// <see cref="SubscriptionOpeningStrategy.WaitForFree"/> for that), <see cref="SubscriptionClosedException"/>
/// (taken over by another worker, disabled or deleted), <see cref="SubscriberErrorException"/>,
/// <see cref="DatabaseDoesNotExistException"/>, and a secured server's <see cref="AuthorizationException"/>
/// or a failed TLS handshake's <see cref="CertificateException"/> (settings a retry does not change).
/// Disposing closes the connection and ends <c>Run</c>'s task without an error; a batch being processed
/// then is not acknowledged (it is delivered again).
/// </remarks>
public sealed class SubscriptionWorker<T> : IAsyncDisposable, IDisposable
    where T : class
{
    /// <summary>Silence on an open connection longer than this means it is lost (the server sends a heartbeat every 5 s).</summary>
    internal static TimeSpan ReceiveTimeout { get; set; } = TimeSpan.FromSeconds(60);

    private static readonly TimeSpan MaxRetryWait = TimeSpan.FromSeconds(30);
    private static readonly TimeSpan CloseGrace = TimeSpan.FromSeconds(5);
    private const int MaxMessageBytes = 512 * 1024 * 1024;

    private readonly DocumentStore _store;
    private readonly string _database;
    private readonly SubscriptionWorkerOptions _options;

    // _stopping ends waits and connects at once; _abort, after the close handshake had its chance,
    // ends receives (cancelling a receive aborts the WebSocket).
    private readonly CancellationTokenSource _stopping = new();
    private readonly CancellationTokenSource _abort = new();
    private readonly SemaphoreSlim _sendLock = new(1, 1);
    private readonly Lock _runLock = new();
    private volatile ClientWebSocket? _socket;

    // The node the last connection was sent to (a clustered database's subscription is served by
    // one node, its mentor): the next connection goes there, until it cannot be reached.
    private volatile string? _redirectUrl;
    private Task? _task;
    private int _disposed;

    internal SubscriptionWorker(DocumentStore store, string database, SubscriptionWorkerOptions options)
    {
        _store = store;
        _database = database;
        _options = options;
    }

    public string SubscriptionName => _options.SubscriptionName;

    /// <summary>Raised with the failure that ended the last connection, just before the worker connects again.</summary>
    public event Action<Exception>? OnSubscriptionConnectionRetry;

    /// <summary>
    /// Raised for each error the worker goes on after: a connection failure (before it waits to
    /// reconnect) and, with <see cref="SubscriptionWorkerOptions.IgnoreSubscriberErrors"/>, the batch function's exception.
    /// </summary>
    public event Action<Exception>? OnUnexpectedSubscriptionError;

    /// <summary>Raised when the server accepted a connection of this worker.</summary>
    public event Action? OnEstablishedSubscriptionConnection;

    /// <summary>Run after the server confirmed a batch's acknowledgement.</summary>
    public event Func<SubscriptionBatch<T>, Task>? AfterAcknowledgment;

    /// <summary>Starts processing; the task ends when the worker is disposed, or fails when it stops (see the remarks of the class).</summary>
    public Task Run(Func<SubscriptionBatch<T>, Task> processDocuments, CancellationToken token = default)
    {
        ArgumentNullException.ThrowIfNull(processDocuments);
        ObjectDisposedException.ThrowIf(Volatile.Read(ref _disposed) != 0, this);
        lock (_runLock)
        {
            if (_task is not null)
            {
                throw new InvalidOperationException($"The worker of subscription '{SubscriptionName}' is already running; a worker runs once.");
            }

            _task = Task.Run(() => RunAsync(processDocuments, token), CancellationToken.None);
            return _task;
        }
    }

    public Task Run(Action<SubscriptionBatch<T>> processDocuments, CancellationToken token = default)
    {
        ArgumentNullException.ThrowIfNull(processDocuments);
        return Run(batch =>
        {
            processDocuments(batch);
            return Task.CompletedTask;
        }, token);
    }

    private async Task RunAsync(Func<SubscriptionBatch<T>, Task> process, CancellationToken token)
    {
        using var stopping = CancellationTokenSource.CreateLinkedTokenSource(token, _stopping.Token);
        DateTime? failingSince = null;
        var failures = 0;
        var redirects = 0;
        while (true)
        {
            try
            {
                await ConnectAndProcessAsync(process, token, stopping.Token, () =>
                {
                    failingSince = null;
                    failures = 0;
                    redirects = 0;
                }).ConfigureAwait(false);
                return;
            }
            catch (Exception) when (_stopping.IsCancellationRequested)
            {
                return;
            }
            catch (OperationCanceledException) when (token.IsCancellationRequested)
            {
                throw;
            }
            catch (RedirectException e) when (redirects++ < MaxRedirects)
            {
                // A node answered and named the one that serves the subscription: go there at once.
                OnSubscriptionConnectionRetry?.Invoke(e);
            }
            catch (Exception e) when (IsRetryable(e))
            {
                var now = DateTime.UtcNow;
                failingSince ??= now;
                if (now - failingSince.Value > _options.MaxErroneousPeriod)
                {
                    throw new SubscriptionInvalidStateException(
                        $"The worker of subscription '{SubscriptionName}' had no working connection for more than {_options.MaxErroneousPeriod} (SubscriptionWorkerOptions.MaxErroneousPeriod) and stopped; the last failure: {e.Message}", e);
                }

                redirects = 0;
                OnUnexpectedSubscriptionError?.Invoke(e);
                try
                {
                    await Task.Delay(RetryWait(failures++), stopping.Token).ConfigureAwait(false);
                }
                catch (OperationCanceledException) when (_stopping.IsCancellationRequested)
                {
                    return;
                }

                OnSubscriptionConnectionRetry?.Invoke(e);
            }
        }
    }

    private TimeSpan RetryWait(int failures)
    {
        var first = _options.TimeToWaitBeforeConnectionRetry;
        var wait = first * Math.Pow(2, Math.Min(failures, 16));
        var cap = first > MaxRetryWait ? first : MaxRetryWait;
        return wait > cap ? cap : wait;
    }

    private static bool IsRetryable(Exception e) => e is ConnectionLostException or RedirectException or WebSocketException or IOException or HttpRequestException or ServerUnavailableException;

    /// <summary>Redirects followed in a row without a wait (a node that names a dead mentor is then retried with the usual waits).</summary>
    private const int MaxRedirects = 3;

    private async Task ConnectAndProcessAsync(Func<SubscriptionBatch<T>, Task> process, CancellationToken token, CancellationToken stopping, Action connected)
    {
        using var socket = new ClientWebSocket();
        socket.Options.CollectHttpResponseDetails = true;
        _socket = socket;
        using var receiving = CancellationTokenSource.CreateLinkedTokenSource(token, _abort.Token);
        try
        {
            await ConnectAsync(socket, stopping).ConfigureAwait(false);
            var status = await ReceiveAsync(socket, receiving.Token).ConfigureAwait(false)
                ?? throw new ConnectionLostException("The server closed the connection before answering with a ConnectionStatus.");
            ThrowUnlessAccepted(status);
            connected();
            OnEstablishedSubscriptionConnection?.Invoke();

            while (true)
            {
                var message = await ReceiveAsync(socket, receiving.Token).ConfigureAwait(false);
                if (message is null)
                {
                    if (_stopping.IsCancellationRequested)
                    {
                        return;
                    }

                    throw new ConnectionLostException("The server closed the connection.");
                }

                if (message.Value.Type != "Batch")
                {
                    ThrowForUnexpected(message.Value, "a batch");
                }

                var batch = new SubscriptionBatch<T>(_store, _database, ParseBatch(message.Value.Bytes));
                try
                {
                    await process(batch).ConfigureAwait(false);
                }
                catch (Exception e) when (_options.IgnoreSubscriberErrors)
                {
                    OnUnexpectedSubscriptionError?.Invoke(e);
                }
                catch (Exception e)
                {
                    throw new SubscriberErrorException(
                        $"The batch function of subscription '{SubscriptionName}' threw ({e.GetType().Name}: {e.Message}); the worker stopped without acknowledging the batch ending at etag {batch.LastEtag}, which will be delivered again. Set SubscriptionWorkerOptions.IgnoreSubscriberErrors to acknowledge such batches anyway.", e);
                }

                if (_stopping.IsCancellationRequested)
                {
                    return;
                }

                await SendAsync(socket, Encoding.UTF8.GetBytes($"{{\"Type\":\"Acknowledge\",\"Etag\":{batch.LastEtag}}}"), receiving.Token).ConfigureAwait(false);
                var confirm = await ReceiveAsync(socket, receiving.Token).ConfigureAwait(false);
                if (confirm is null)
                {
                    if (_stopping.IsCancellationRequested)
                    {
                        return;
                    }

                    throw new ConnectionLostException($"The server closed the connection before confirming the batch ending at etag {batch.LastEtag}.");
                }

                if (confirm.Value.Type != "Confirm")
                {
                    ThrowForUnexpected(confirm.Value, "the confirmation of an acknowledgement");
                }

                connected();
                if (AfterAcknowledgment is { } after)
                {
                    await after(batch).ConfigureAwait(false);
                }
            }
        }
        finally
        {
            _socket = null;
            await CloseQuietlyAsync(socket).ConfigureAwait(false);
        }
    }

    private async Task ConnectAsync(ClientWebSocket socket, CancellationToken stopping)
    {
        // Each connection goes to the node the database's topology prefers now: after a failover, the next node.
        // Or to the node the last one was sent to (the subscription's mentor on a cluster).
        var redirected = _redirectUrl;
        var url = redirected ?? await _store.Executor.GetPreferredUrlAsync(_database, stopping).ConfigureAwait(false);
        var uri = new Uri("ws" + url[4..] + DocumentStore.DatabasePath(_database) + "/subscriptions/connect?name=" + Uri.EscapeDataString(SubscriptionName)
            + "&strategy=" + _options.Strategy + "&maxDocsPerBatch=" + _options.MaxDocsPerBatch.ToString(System.Globalization.CultureInfo.InvariantCulture));
        using var timeout = CancellationTokenSource.CreateLinkedTokenSource(stopping);
        timeout.CancelAfter(_store.Conventions.RequestTimeout);
        try
        {
            await _store.Executor.ConnectWebSocketAsync(socket, uri, timeout.Token).ConfigureAwait(false);
        }
        catch (OperationCanceledException) when (!stopping.IsCancellationRequested)
        {
            _redirectUrl = null;
            _store.Executor.OnConnectionFailed(_database, url);
            throw new ConnectionLostException($"No answer from {uri} within the request timeout (DocumentConventions.RequestTimeout).");
        }
        catch (WebSocketException) when (socket.HttpStatusCode == HttpStatusCode.NotFound)
        {
            throw new DatabaseDoesNotExistException($"Database '{_database}' does not exist (the subscription connection at {uri} answered 404).", HttpStatusCode.NotFound, ErrorTypes.DatabaseDoesNotExist);
        }
        catch (WebSocketException e) when (socket.HttpStatusCode == HttpStatusCode.BadRequest)
        {
            throw new BadRequestException($"The server refused the subscription connection at {uri} (400): {e.Message}");
        }
        catch (WebSocketException) when (socket.HttpStatusCode == 0)
        {
            // No HTTP answer at all: the node is down, and the next attempt goes to another (which
            // names the subscription's mentor again, or a new one once the cluster moved it).
            _redirectUrl = null;
            _store.Executor.OnConnectionFailed(_database, url);
            throw;
        }
    }

    private void ThrowUnlessAccepted(Received received)
    {
        if (received.Type != "ConnectionStatus")
        {
            ThrowForUnexpected(received, "a ConnectionStatus");
        }

        var status = received.Json;
        var message = GetString(status, "Message") ?? "";
        switch (GetString(status, "Status"))
        {
            case "Accepted":
                return;
            case "NotFound":
                throw new SubscriptionDoesNotExistException($"Subscription '{SubscriptionName}' does not exist in database '{_database}': {message}");
            case "InUse":
                throw new SubscriptionInUseException($"Subscription '{SubscriptionName}' is held by another worker and this one connects with {_options.Strategy}: {message}");
            case "Closed":
                throw new SubscriptionClosedException($"Subscription '{SubscriptionName}' refused the worker: {message}");
            case "Redirect":
                // RavenDB's SubscriptionDoesNotBelongToNodeException: another node serves it.
                _redirectUrl = GetString(status, "RedirectedUrl") is { Length: > 0 } target ? target.TrimEnd('/') : null;
                throw new RedirectException($"Subscription '{SubscriptionName}' is served by node {GetString(status, "RedirectedTag")}: {message}");
            default:
                throw new ConnectionLostException($"The server answered the connection with an unknown status: {status}");
        }
    }

    /// <summary>What a message other than the one expected means: a close (final or to reconnect after), a server error, or a protocol surprise.</summary>
    private void ThrowForUnexpected(Received received, string expected)
    {
        var type = received.Type;
        var message = received.Json;
        if (type == "ConnectionStatus" && GetString(message, "Status") == "Closed")
        {
            var reason = GetString(message, "Message") ?? "";
            if (CanReconnect(message, reason))
            {
                throw new ConnectionLostException($"The server closed the connection of subscription '{SubscriptionName}': {reason}");
            }

            throw new SubscriptionClosedException($"Subscription '{SubscriptionName}' was closed by the server: {reason}");
        }

        if (type == "Error")
        {
            throw new ConnectionLostException($"The server ended the connection of subscription '{SubscriptionName}' with {GetString(message, "Exception")}: {GetString(message, "Message")}");
        }

        throw new ConnectionLostException($"Expected {expected} from the server, got: {Truncate(Encoding.UTF8.GetString(received.Bytes.AsSpan(0, Math.Min(received.Bytes.Length, 300))))}");
    }

    /// <summary>
    /// Whether a close while connected is one to reconnect after: a dropped connection or a closing
    /// database, as opposed to a take-over, a disable or a delete. The server's <c>CanReconnect</c>
    /// decides when it sends one; the current server says it only in its reason's words.
    /// </summary>
    private static bool CanReconnect(JsonElement message, string reason)
    {
        if (message.TryGetProperty("CanReconnect", out var flag) && flag.ValueKind is JsonValueKind.True or JsonValueKind.False)
        {
            return flag.ValueKind == JsonValueKind.True;
        }

        return reason.Contains("dropped", StringComparison.OrdinalIgnoreCase) || reason.Contains("database is closing", StringComparison.OrdinalIgnoreCase);
    }

    private BatchMessage ParseBatch(byte[] message)
    {
        try
        {
            return BatchMessage.Parse(message);
        }
        catch (Exception e) when (e is JsonException or InvalidOperationException or FormatException)
        {
            throw new ConnectionLostException($"A batch of subscription '{SubscriptionName}' cannot be read: {e.Message} ({Truncate(Encoding.UTF8.GetString(message.AsSpan(0, Math.Min(message.Length, 300))))})");
        }
    }

    /// <summary>
    /// The next message that is not a heartbeat; null when the server closed the connection. A batch
    /// (the server writes <c>"Type"</c> first) is left as bytes for <see cref="BatchMessage"/>, not parsed twice.
    /// </summary>
    private async Task<Received?> ReceiveAsync(ClientWebSocket socket, CancellationToken token)
    {
        var buffer = ArrayPool<byte>.Shared.Rent(64 * 1024);
        try
        {
            while (true)
            {
                var message = new ArrayBufferWriter<byte>(16 * 1024);
                using (var idle = CancellationTokenSource.CreateLinkedTokenSource(token))
                {
                    idle.CancelAfter(ReceiveTimeout);
                    ValueWebSocketReceiveResult result;
                    do
                    {
                        try
                        {
                            result = await socket.ReceiveAsync(buffer.AsMemory(), idle.Token).ConfigureAwait(false);
                        }
                        catch (OperationCanceledException) when (!token.IsCancellationRequested)
                        {
                            throw new ConnectionLostException($"Nothing came from the server for {ReceiveTimeout} (it sends a heartbeat every few seconds); the connection is taken as lost.");
                        }

                        if (result.MessageType == WebSocketMessageType.Close)
                        {
                            return null;
                        }

                        if (message.WrittenCount + result.Count > MaxMessageBytes)
                        {
                            throw new ConnectionLostException($"A message from the server is larger than {MaxMessageBytes} bytes.");
                        }

                        message.Write(buffer.AsSpan(0, result.Count));
                    }
                    while (!result.EndOfMessage);
                }

                var bytes = message.WrittenSpan.ToArray();
                if (StartsAsBatch(bytes))
                {
                    return new Received("Batch", default, bytes);
                }

                JsonElement json;
                try
                {
                    using var document = JsonDocument.Parse(bytes);
                    json = document.RootElement.Clone();
                }
                catch (JsonException e)
                {
                    throw new ConnectionLostException($"A message from the server is not JSON: {e.Message}");
                }

                var type = TypeOf(json);
                if (type == "Heartbeat")
                {
                    continue;
                }

                return new Received(type, json, bytes);
            }
        }
        finally
        {
            ArrayPool<byte>.Shared.Return(buffer);
        }
    }

    private async Task SendAsync(ClientWebSocket socket, byte[] message, CancellationToken token)
    {
        await _sendLock.WaitAsync(token).ConfigureAwait(false);
        try
        {
            await socket.SendAsync(message, WebSocketMessageType.Text, true, token).ConfigureAwait(false);
        }
        finally
        {
            _sendLock.Release();
        }
    }

    /// <summary>Sends the close frame when the connection is still open (the server then gives back an unacknowledged batch at once).</summary>
    private async Task CloseQuietlyAsync(ClientWebSocket socket)
    {
        using var timeout = new CancellationTokenSource(CloseGrace);
        try
        {
            await _sendLock.WaitAsync(timeout.Token).ConfigureAwait(false);
            try
            {
                if (socket.State is WebSocketState.Open or WebSocketState.CloseReceived)
                {
                    await socket.CloseOutputAsync(WebSocketCloseStatus.NormalClosure, "worker stopped", timeout.Token).ConfigureAwait(false);
                }
            }
            finally
            {
                _sendLock.Release();
            }
        }
        catch (Exception e) when (e is WebSocketException or OperationCanceledException or ObjectDisposedException)
        {
        }
    }

    private static bool StartsAsBatch(byte[] message)
    {
        var reader = new Utf8JsonReader(message);
        try
        {
            return reader.Read() && reader.TokenType == JsonTokenType.StartObject
                && reader.Read() && reader.TokenType == JsonTokenType.PropertyName && reader.ValueTextEquals("Type"u8)
                && reader.Read() && reader.TokenType == JsonTokenType.String && reader.ValueTextEquals("Batch"u8);
        }
        catch (JsonException)
        {
            return false;
        }
    }

    private static string? TypeOf(JsonElement message) => GetString(message, "Type");

    private static string? GetString(JsonElement message, string name) =>
        message.ValueKind == JsonValueKind.Object && message.TryGetProperty(name, out var value) && value.ValueKind == JsonValueKind.String ? value.GetString() : null;

    private static string Truncate(string text) => text.Length <= 300 ? text : text[..300] + "...";

    /// <summary>
    /// Stops the worker: closes the connection (the server answers the close, and the receive loop
    /// ends), waits for <c>Run</c>'s task, aborting the connection if the close takes more than a few seconds.
    /// </summary>
    public async ValueTask DisposeAsync()
    {
        if (Interlocked.Exchange(ref _disposed, 1) != 0)
        {
            return;
        }

        await _stopping.CancelAsync().ConfigureAwait(false);
        Task? task;
        lock (_runLock)
        {
            task = _task;
        }

        if (_socket is { } socket)
        {
            await CloseQuietlyAsync(socket).ConfigureAwait(false);
        }

        if (task is not null && await Task.WhenAny(task, Task.Delay(CloseGrace)).ConfigureAwait(false) != task)
        {
            await _abort.CancelAsync().ConfigureAwait(false);
        }

        if (task is not null)
        {
            try
            {
                await task.ConfigureAwait(false);
            }
            catch (Exception)
            {
                // Run's caller observes how the worker ended; disposing only stops it.
            }
        }

        _stopping.Dispose();
        _abort.Dispose();
        _sendLock.Dispose();
    }

    public void Dispose() => DisposeAsync().AsTask().GetAwaiter().GetResult();

    /// <summary>A message: its type, its JSON (not parsed for a batch) and its bytes.</summary>
    private readonly record struct Received(string? Type, JsonElement Json, byte[] Bytes);

    /// <summary>A connection that ended in a way reconnecting can fix.</summary>
    private sealed class ConnectionLostException(string message) : Exception(message);

    private sealed class RedirectException(string message) : Exception(message);
}
