using System.Buffers;
using System.Net;
using System.Net.WebSockets;
using System.Text.Json;

namespace Jackdaw.Client.Changes;

/// <summary>
/// <see cref="IDatabaseChanges"/> over one WebSocket. A loop connects, sends a watch command for
/// every watched target, reads frames (JSON arrays of messages) and hands each change to the
/// observers whose filter it passes (the connection receives the union of what is watched, as
/// RavenDB's clients do); when the connection drops it waits (250 ms, doubling up to 30 s, with
/// jitter) and connects again.
/// </summary>
internal sealed partial class DatabaseChanges : IDatabaseChanges
{
    private static readonly TimeSpan FirstRetry = TimeSpan.FromMilliseconds(250);
    private static readonly TimeSpan LastRetry = TimeSpan.FromSeconds(30);

    private readonly DocumentStore _store;
    private readonly string _database;
    private readonly Action<DatabaseChanges> _onDispose;
    private readonly Lock _lock = new();
    private readonly Dictionary<string, WatchState> _states = new(StringComparer.OrdinalIgnoreCase);
    private readonly Dictionary<long, TaskCompletionSource> _confirmations = new();
    private readonly SemaphoreSlim _sendLock = new(1, 1);
    private readonly CancellationTokenSource _disposed = new();
    private Registration[] _registrations = [];
    private TaskCompletionSource<IDatabaseChanges> _connected = NewConnected();
    private ClientWebSocket? _socket;
    private long _commandId;

    public DatabaseChanges(DocumentStore store, string database, Action<DatabaseChanges> onDispose)
    {
        _store = store;
        _database = database;
        _onDispose = onDispose;
        _ = Task.Run(RunAsync);
    }

    public string Database => _database;

    public bool Connected => Volatile.Read(ref _socket)?.State == WebSocketState.Open;

    public event EventHandler? ConnectionStatusChanged;

    public event Action<Exception>? OnError;

    public Task<IDatabaseChanges> EnsureConnectedNow()
    {
        lock (_lock)
            return _connected.Task;
    }

    public IChangesObservable<DocumentChange> ForDocument(string docId)
    {
        ArgumentException.ThrowIfNullOrWhiteSpace(docId);
        return new ChangesObservable<DocumentChange>(this, "docs/" + docId, "watch-doc", "unwatch-doc", docId,
            c => string.Equals(c.Id, docId, StringComparison.OrdinalIgnoreCase));
    }

    public IChangesObservable<DocumentChange> ForAllDocuments() =>
        new ChangesObservable<DocumentChange>(this, "all-docs", "watch-docs", "unwatch-docs", null, static _ => true);

    public IChangesObservable<DocumentChange> ForDocumentsStartingWith(string docIdPrefix)
    {
        ArgumentException.ThrowIfNullOrWhiteSpace(docIdPrefix);
        return new ChangesObservable<DocumentChange>(this, "prefixes/" + docIdPrefix, "watch-prefix", "unwatch-prefix", docIdPrefix,
            c => c.Id.StartsWith(docIdPrefix, StringComparison.OrdinalIgnoreCase));
    }

    public IChangesObservable<DocumentChange> ForDocumentsInCollection(string collectionName)
    {
        ArgumentException.ThrowIfNullOrWhiteSpace(collectionName);
        return new ChangesObservable<DocumentChange>(this, "collections/" + collectionName, "watch-collection", "unwatch-collection", collectionName,
            c => string.Equals(c.CollectionName, collectionName, StringComparison.OrdinalIgnoreCase));
    }

    public IChangesObservable<DocumentChange> ForDocumentsInCollection<TEntity>() =>
        ForDocumentsInCollection(_store.Conventions.FindCollectionName(typeof(TEntity)));

    public IChangesObservable<AttachmentChange> ForAttachmentsOfDocument(string docId)
    {
        ArgumentException.ThrowIfNullOrWhiteSpace(docId);
        return new ChangesObservable<AttachmentChange>(this, "attachments/" + docId, "watch-document-attachments", "unwatch-document-attachments", docId,
            c => string.Equals(c.DocumentId, docId, StringComparison.OrdinalIgnoreCase));
    }

    public IChangesObservable<AttachmentChange> ForAllAttachments() =>
        new ChangesObservable<AttachmentChange>(this, "all-attachments", "watch-attachments", "unwatch-attachments", null, static _ => true);

    public IChangesObservable<IndexChange> ForIndex(string indexName)
    {
        ArgumentException.ThrowIfNullOrWhiteSpace(indexName);
        return new ChangesObservable<IndexChange>(this, "indexes/" + indexName, "watch-index", "unwatch-index", indexName,
            c => string.Equals(c.Name, indexName, StringComparison.OrdinalIgnoreCase));
    }

    public IChangesObservable<IndexChange> ForAllIndexes() =>
        new ChangesObservable<IndexChange>(this, "all-indexes", "watch-indexes", "unwatch-indexes", null, static _ => true);

    public IChangesObservable<OperationStatusChange> ForOperationId(long operationId)
    {
        // RavenDB's clients send the id as a string.
        var id = operationId.ToString(System.Globalization.CultureInfo.InvariantCulture);
        return new ChangesObservable<OperationStatusChange>(this, "operations/" + id, "watch-operation", "unwatch-operation", id,
            c => c.OperationId == operationId);
    }

    public IChangesObservable<OperationStatusChange> ForAllOperations() =>
        new ChangesObservable<OperationStatusChange>(this, "all-operations", "watch-operations", "unwatch-operations", null, static _ => true);

    /// <summary>Whether the server confirmed watching a target (<see cref="IChangesObservable{T}.EnsureSubscribedNow"/>).</summary>
    internal Task SubscribedTask(string key)
    {
        lock (_lock)
        {
            if (_states.TryGetValue(key, out var state))
            {
                return state.Subscribed;
            }
        }
        return Task.FromException(new InvalidOperationException("Nothing observes these changes yet: Subscribe an observer first, then EnsureSubscribedNow."));
    }

    /// <summary>Adds an observer; the first one of a target asks the server to watch it.</summary>
    internal IDisposable Add<T>(string key, string watch, string unwatch, string? param, Func<T, bool> filter, IObserver<T> observer)
    {
        ObjectDisposedException.ThrowIf(_disposed.IsCancellationRequested, this);
        var registration = new Registration(this, key, typeof(T), change => filter((T)change), change => observer.OnNext((T)change), observer.OnCompleted);
        WatchState? send = null;
        ClientWebSocket? socket;
        lock (_lock)
        {
            if (!_states.TryGetValue(key, out var state))
            {
                state = new WatchState(watch, unwatch, param);
                _states[key] = state;
                send = state;
            }
            state.Observers++;
            _registrations = [.. _registrations, registration];
            socket = _socket;
        }
        // Connected: watch now. Otherwise the connection, once open, watches every target.
        if (send is not null && socket is not null)
        {
            _ = WatchAsync(socket, send);
        }
        return registration;
    }

    private void Remove(Registration registration)
    {
        WatchState? unwatch = null;
        ClientWebSocket? socket;
        lock (_lock)
        {
            var index = Array.IndexOf(_registrations, registration);
            if (index < 0)
            {
                return;
            }
            _registrations = [.. _registrations[..index], .. _registrations[(index + 1)..]];
            var state = _states[registration.Key];
            if (--state.Observers == 0)
            {
                _states.Remove(registration.Key);
                unwatch = state;
            }
            socket = _socket;
        }
        if (unwatch is not null && socket is not null)
        {
            _ = SendQuietlyAsync(socket, unwatch.Unwatch, unwatch.Param);
        }
    }

    private async Task RunAsync()
    {
        var delay = FirstRetry;
        var token = _disposed.Token;
        while (!token.IsCancellationRequested)
        {
            using var socket = new ClientWebSocket();
            socket.Options.CollectHttpResponseDetails = true;
            Exception? failure = null;
            var opened = false;
            try
            {
                await ConnectAsync(socket, token).ConfigureAwait(false);
                opened = true;
                delay = FirstRetry;
                OnConnected(socket);
                await ReceiveAsync(socket, token).ConfigureAwait(false);
                failure = socket.CloseStatus is WebSocketCloseStatus.NormalClosure or null
                    ? new ChangesException($"The server closed the changes connection ({socket.CloseStatusDescription}); reconnecting.", socket.CloseStatusDescription)
                    : new ChangesException($"The server closed the changes connection: {socket.CloseStatus} {socket.CloseStatusDescription}; reconnecting.", socket.CloseStatusDescription);
            }
            catch (OperationCanceledException) when (token.IsCancellationRequested)
            {
                break;
            }
            catch (Exception e)
            {
                failure = e;
            }
            finally
            {
                OnDisconnected(opened, failure, token.IsCancellationRequested);
            }
            if (token.IsCancellationRequested)
            {
                break;
            }
            if (failure is not null)
            {
                RaiseError(failure);
            }
            try
            {
                await Task.Delay(delay * (0.8 + (0.4 * Random.Shared.NextDouble())), token).ConfigureAwait(false);
            }
            catch (OperationCanceledException)
            {
                break;
            }
            delay = TimeSpan.FromTicks(Math.Min(delay.Ticks * 2, LastRetry.Ticks));
        }
    }

    private async Task ConnectAsync(ClientWebSocket socket, CancellationToken token)
    {
        // Each connection goes to the node the database's topology prefers now: after a failover, the next node.
        var url = await _store.Executor.GetPreferredUrlAsync(_database, token).ConfigureAwait(false);
        var uri = new Uri("ws" + url[4..] + DocumentStore.DatabasePath(_database) + "/changes");
        using var timeout = CancellationTokenSource.CreateLinkedTokenSource(token);
        timeout.CancelAfter(_store.Conventions.RequestTimeout);
        try
        {
            await _store.Executor.ConnectWebSocketAsync(socket, uri, timeout.Token).ConfigureAwait(false);
        }
        catch (OperationCanceledException) when (!token.IsCancellationRequested)
        {
            _store.Executor.OnConnectionFailed(_database, url);
            throw new ServerUnavailableException($"No answer from {uri} within the request timeout (DocumentConventions.RequestTimeout); the changes feed keeps trying.", null);
        }
        catch (WebSocketException) when (socket.HttpStatusCode == HttpStatusCode.NotFound
            || (socket.HttpStatusCode == HttpStatusCode.ServiceUnavailable && socket.HttpResponseHeaders?.ContainsKey("Database-Missing") == true))
        {
            throw new DatabaseDoesNotExistException($"Database '{_database}' does not exist (its changes feed at {uri} answered {(int)socket.HttpStatusCode}); the changes feed keeps trying, in case it is created.");
        }
        catch (WebSocketException e)
        {
            if (socket.HttpStatusCode == 0)
            {
                // No HTTP answer at all: the node is down, and the next attempt goes to another.
                _store.Executor.OnConnectionFailed(_database, url);
            }

            throw new ServerUnavailableException($"Could not open the changes feed at {uri}: {e.Message} The changes feed keeps trying.", e);
        }
    }

    private void OnConnected(ClientWebSocket socket)
    {
        List<WatchState> states;
        TaskCompletionSource<IDatabaseChanges> connected;
        lock (_lock)
        {
            Volatile.Write(ref _socket, socket);
            states = [.. _states.Values];
            connected = _connected;
        }
        foreach (var state in states)
        {
            _ = WatchAsync(socket, state);
        }
        connected.TrySetResult(this);
        ConnectionStatusChanged?.Invoke(this, EventArgs.Empty);
    }

    private void OnDisconnected(bool wasOpen, Exception? failure, bool disposing)
    {
        List<TaskCompletionSource> confirmations;
        lock (_lock)
        {
            Volatile.Write(ref _socket, null);
            confirmations = [.. _confirmations.Values];
            _confirmations.Clear();
            // Waiters of this attempt learn why it failed; later ones wait for the next connection.
            var error = failure ?? new ChangesException("The changes connection closed.", null);
            if (disposing)
            {
                error = new ObjectDisposedException(nameof(IDatabaseChanges));
            }
            if (!_connected.Task.IsCompleted)
            {
                _connected.TrySetException(error);
            }
            if (_connected.Task.IsCompleted && !disposing)
            {
                _connected = NewConnected();
            }
            foreach (var state in _states.Values)
            {
                state.Reset(error);
            }
        }
        foreach (var confirmation in confirmations)
        {
            confirmation.TrySetException(failure ?? new ChangesException("The changes connection closed before the server confirmed the command.", null));
        }
        if (wasOpen)
        {
            ConnectionStatusChanged?.Invoke(this, EventArgs.Empty);
        }
    }

    private async Task WatchAsync(ClientWebSocket socket, WatchState state)
    {
        var subscribed = state.Current;
        try
        {
            await SendAsync(socket, state.Watch, state.Param).ConfigureAwait(false);
            subscribed.TrySetResult();
        }
        catch (Exception e)
        {
            subscribed.TrySetException(e);
            _ = subscribed.Task.Exception;
        }
    }

    private async Task SendQuietlyAsync(ClientWebSocket socket, string command, string? param)
    {
        try
        {
            await SendAsync(socket, command, param).ConfigureAwait(false);
        }
        catch (Exception)
        {
            // The connection dropped: the server forgot everything it watched anyway.
        }
    }

    /// <summary>Sends a command and completes when the server confirms it.</summary>
    private async Task SendAsync(ClientWebSocket socket, string command, string? param)
    {
        var id = Interlocked.Increment(ref _commandId);
        var confirmed = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        lock (_lock)
        {
            if (Volatile.Read(ref _socket) != socket)
            {
                throw new ChangesException("The changes connection closed before the command was sent.", null);
            }
            _confirmations[id] = confirmed;
        }
        var buffer = new ArrayBufferWriter<byte>(128);
        using (var writer = new Utf8JsonWriter(buffer))
        {
            writer.WriteStartObject();
            writer.WriteNumber("CommandId", id);
            writer.WriteString("Command", command);
            if (param is null)
            {
                writer.WriteNull("Param");
            }
            else
            {
                writer.WriteString("Param", param);
            }
            writer.WriteEndObject();
        }
        await _sendLock.WaitAsync(_disposed.Token).ConfigureAwait(false);
        try
        {
            await socket.SendAsync(buffer.WrittenMemory, WebSocketMessageType.Text, true, _disposed.Token).ConfigureAwait(false);
        }
        catch
        {
            lock (_lock)
                _confirmations.Remove(id);
            throw;
        }
        finally
        {
            _sendLock.Release();
        }
        await confirmed.Task.ConfigureAwait(false);
    }

    public void Dispose()
    {
        if (_disposed.IsCancellationRequested)
        {
            return;
        }
        // The loop sees it, aborts the socket and ends (not waited for: Dispose may run in an observer, on the loop).
        _disposed.Cancel();
        Registration[] registrations;
        lock (_lock)
        {
            registrations = _registrations;
            _registrations = [];
            _states.Clear();
            _connected.TrySetException(new ObjectDisposedException(nameof(IDatabaseChanges)));
            _ = _connected.Task.Exception;
        }
        foreach (var registration in registrations)
        {
            registration.OnCompleted();
        }
        _onDispose(this);
    }

    private static TaskCompletionSource<IDatabaseChanges> NewConnected() => new(TaskCreationOptions.RunContinuationsAsynchronously);

    /// <summary>A watched target: its commands, how many observers want it, and whether the server confirmed it on this connection.</summary>
    private sealed class WatchState(string watch, string unwatch, string? param)
    {
        private TaskCompletionSource _subscribed = new(TaskCreationOptions.RunContinuationsAsynchronously);

        public string Watch { get; } = watch;

        public string Unwatch { get; } = unwatch;

        public string? Param { get; } = param;

        public int Observers { get; set; }

        public TaskCompletionSource Current => Volatile.Read(ref _subscribed);

        public Task Subscribed => Current.Task;

        /// <summary>The connection dropped: a pending subscription fails with why; the next one waits for the next connection.</summary>
        public void Reset(Exception error)
        {
            var current = Current;
            if (current.TrySetException(error))
            {
                _ = current.Task.Exception;
            }
            Volatile.Write(ref _subscribed, new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously));
        }
    }

    private sealed class Registration(DatabaseChanges owner, string key, Type type, Func<object, bool> filter, Action<object> onNext, Action onCompleted) : IDisposable
    {
        private int _disposed;

        public string Key { get; } = key;

        public Type Type { get; } = type;

        public Func<object, bool> Filter { get; } = filter;

        public Action<object> OnNext { get; } = onNext;

        public Action OnCompleted { get; } = onCompleted;

        public void Dispose()
        {
            if (Interlocked.Exchange(ref _disposed, 1) == 0)
            {
                owner.Remove(this);
            }
        }
    }
}
