using Jackdaw.Storage.Blittable;
using System.Net.WebSockets;
using System.Text.Json;
using System.Threading.Channels;
using Jackdaw.Server.Errors;
using Jackdaw.Server.WebSockets;
using Jackdaw.Storage.Engine;
using Microsoft.Extensions.Logging;

namespace Jackdaw.Server.Subscriptions;

/// <summary>
/// A worker's WebSocket connection to a subscription, from the accepted session to the close:
/// <list type="bullet">
/// <item>the batch loop sends a batch, waits for its acknowledgement (a silent worker is dropped
///   after <see cref="SubscriptionStore.AckTimeout"/> and its batch goes to the next one), has the
///   session store it durably, answers <c>Confirm</c>, then sends the next; that one is read and
///   written meanwhile, by the other of two <see cref="SubscriptionBatchWriter"/>s;</item>
/// <item>the reader takes the worker's acknowledgements and heartbeats; anything else is an
///   <c>Error</c> and the end of the connection;</item>
/// <item>one send at a time (the loop and the reader's errors share the socket); the batch being
///   prepared is awaited before the session goes, so a leaving session gives back every range.</item>
/// </list>
/// </summary>
public sealed class SubscriptionConnection : IDisposable
{
    /// <summary>The most document bytes in one batch.</summary>
    public const long MaxBatchBytes = 16L * 1024 * 1024;

    /// <summary>How often an idle connection gets a heartbeat.</summary>
    public static readonly TimeSpan HeartbeatInterval = TimeSpan.FromSeconds(5);

    /// <summary>How long a send may still take once the connection is ending (a worker that stopped reading is cut off then).</summary>
    public static readonly TimeSpan SendGrace = TimeSpan.FromSeconds(5);

    private readonly WebSocket _socket;
    private readonly SubscriptionSession _session;
    private readonly TimeSpan _ackTimeout;
    private readonly int _maxDocs;
    private readonly int _maxMessageBytes;
    private readonly CancellationToken _aborted;
    private readonly ILogger _logger;
    private readonly CancellationTokenSource _connection;
    private readonly SemaphoreSlim _sending = new(1, 1);
    private readonly Channel<long> _acks = Channel.CreateBounded<long>(4);
    private readonly SubscriptionBatchWriter[] _writers;
    private int _turn;
    private Task<SubscriptionBatch?>? _next;
    private Task _reading = Task.CompletedTask;

    // Sends wait for the worker to read (a slow worker slows only itself), until the connection
    // ends: then for SendGrace more, after which the send is cancelled (which aborts the socket).
    // Without it a worker that stopped reading kept a TakeOver, drop or disable waiting for ever.
    private readonly CancellationTokenSource _sendLimit;
    private readonly CancellationTokenRegistration _ending;

    // What ended the connection, told to the worker after its session left.
    private (string Type, string Message)? _error;

    private SubscriptionConnection(WebSocket socket, SubscriptionSession session, TimeSpan ackTimeout, int maxDocs, int maxMessageBytes, string databaseId, ILogger logger, CancellationToken aborted)
    {
        _maxMessageBytes = maxMessageBytes;
        _logger = logger;
        _socket = socket;
        _session = session;
        _ackTimeout = ackTimeout;
        _maxDocs = maxDocs;
        _aborted = aborted;
        _connection = CancellationTokenSource.CreateLinkedTokenSource(aborted, session.Closed);
        _sendLimit = CancellationTokenSource.CreateLinkedTokenSource(aborted);
        _ending = _connection.Token.Register(static s => ((CancellationTokenSource)s!).CancelAfter(SendGrace), _sendLimit);
        var query = session.Subscription.Query;
        _writers = [new(query), new(query)];
    }

    /// <summary>Serves an accepted session until the worker, the subscription or the server ends it; then closes the socket.</summary>
    /// <param name="maxMessageBytes">The largest message the worker may send (an acknowledgement is a few dozen bytes): the server's <c>Limits:MaxWebSocketMessageSize</c>.</param>
    public static async Task RunAsync(WebSocket socket, SubscriptionSession session, TimeSpan ackTimeout, int maxDocs, int maxMessageBytes, string databaseId, ILogger logger, CancellationToken aborted)
    {
        using var connection = new SubscriptionConnection(socket, session, ackTimeout, maxDocs, maxMessageBytes, databaseId, logger, aborted);
        await connection.RunAsync().ConfigureAwait(false);
    }

    /// <summary>Answers a worker that cannot have the subscription (<c>ConnectionStatus</c> with the reason) and closes.</summary>
    public static async Task RefuseAsync(WebSocket socket, Exception reason, CancellationToken aborted)
    {
        var status = reason switch
        {
            SubscriptionDoesNotExistException => "NotFound",
            SubscriptionInUseException => "InUse",
            SubscriptionDoesNotBelongToNodeException => "Redirect",
            _ => "Closed",
        };
        // Redirect (RavenDB's status for SubscriptionDoesNotBelongToNodeException): the node that
        // serves it, for the worker to connect there.
        var message = reason is SubscriptionDoesNotBelongToNodeException redirect
            ? JsonSerializer.SerializeToUtf8Bytes(new { Type = "ConnectionStatus", Status = status, Exception = reason.GetType().Name, reason.Message, CanReconnect = true, RedirectedTag = redirect.AppropriateNode, RedirectedUrl = redirect.AppropriateUrl })
            : JsonSerializer.SerializeToUtf8Bytes(new { Type = "ConnectionStatus", Status = status, Exception = reason.GetType().Name, reason.Message, CanReconnect = reason is SubscriptionInUseException });
        await socket.SendAsync(message, WebSocketMessageType.Text, true, aborted).ConfigureAwait(false);
        await WebSocketClosing.SendCloseAsync(socket, WebSocketCloseStatus.PolicyViolation, status, CancellationToken.None).ConfigureAwait(false);
        await WebSocketClosing.DrainAsync(socket, WebSocketClosing.Grace, aborted).ConfigureAwait(false);
    }

    private async Task RunAsync()
    {
        var reading = _reading = ReadAsync();
        try
        {
            try
            {
                await SendAsync(new { Type = "ConnectionStatus", Status = "Accepted", Strategy = _session.Strategy.ToString() }).ConfigureAwait(false);
                await ServeBatchesAsync().ConfigureAwait(false);
            }
            catch (Exception e) when (e is OperationCanceledException or WebSocketException or ChannelClosedException)
            {
            }
            catch (Exception e) when (e is DatabaseUnavailableException or SubscriptionDoesNotExistException)
            {
                _error = (e.GetType().Name, e.Message);
            }
            catch (Exception e) when (e is ClusterException or NotLeaderException)
            {
                // A clustered database's acknowledgement the cluster did not commit (no leader, or
                // this node no longer serves the subscription): the worker connects again, and is
                // sent to the node that does.
                _logger.LogWarning("Subscription {Subscription}: the connection of {Address} ends: {Error}", _session.Subscription.Record.Name, _session.Address, e.Message);
                _error = (e.GetType().Name, e.Message);
            }
            catch (StorageException e)
            {
                // Storing an acknowledgement (or reading a batch) failed, a full disk most often:
                // the position did not move, and the worker connects again when it can.
                _logger.LogWarning("Subscription {Subscription}: the connection of {Address} ends: {Error}", _session.Subscription.Record.Name, _session.Address, e.Message);
                _error = (e.GetType().Name, e.Message);
            }
            catch (Exception e)
            {
                _logger.LogError(e, "Subscription {Subscription}: the connection of {Address} failed", _session.Subscription.Record.Name, _session.Address);
                _error = ("InternalServerErrorException", $"{e.GetType().Name}: {e.Message} (details are in the server log).");
            }
            // The worker's place is free before it is told why: a worker that connects again at
            // once (before its old socket has closed) is not refused as in use. It is told one
            // thing: why the server closed it, else what went wrong.
            await LeaveAsync().ConfigureAwait(false);
            if (_session.CloseReason is { } reason)
            {
                await TrySendAsync(new { Type = "ConnectionStatus", Status = "Closed", Exception = nameof(SubscriptionClosedException), Message = reason, _session.CanReconnect }).ConfigureAwait(false);
            }
            else if (_error is var (type, message))
            {
                await SendErrorAsync(type, message).ConfigureAwait(false);
            }
            await _connection.CancelAsync().ConfigureAwait(false);
            await CloseOutputAsync(WebSocketCloseStatus.NormalClosure, "closed").ConfigureAwait(false);
            // The reader ends at the client's close frame (or a broken connection); a client that
            // never answers the close is left after a few seconds.
            await Task.WhenAny(reading, Task.Delay(WebSocketClosing.Grace)).ConfigureAwait(false);
        }
        finally
        {
            await LeaveAsync().ConfigureAwait(false);
        }
    }

    /// <summary>Ends the session (it gives back every range it holds); again is nothing.</summary>
    private async Task LeaveAsync()
    {
        await _connection.CancelAsync().ConfigureAwait(false);
        // The batch being prepared is held (or was not taken) before the session goes.
        if (_next is { } next)
        {
            _next = null;
            await next.ContinueWith(static t => _ = t.Exception, CancellationToken.None, TaskContinuationOptions.ExecuteSynchronously, TaskScheduler.Default).ConfigureAwait(false);
        }
        _session.Dispose();
    }

    // The next batch, read and written by the writer whose turn it is.
    private void PrepareNext() =>
        _next = _session.NextBatchAsync(_maxDocs, MaxBatchBytes, HeartbeatInterval, _writers[_turn], _connection.Token);

    private async Task ServeBatchesAsync()
    {
        PrepareNext();
        while (!_connection.IsCancellationRequested)
        {
            var batch = await _next!.ConfigureAwait(false);
            if (batch is null)
            {
                PrepareNext();
                await SendAsync(new { Type = "Heartbeat" }).ConfigureAwait(false);
                continue;
            }
            _session.MarkSent(batch);
            await SendRawAsync(batch.Message).ConfigureAwait(false);
            _turn ^= 1;
            PrepareNext();

            // Only an acknowledgement of this batch moves on; a silent worker is dropped and its
            // batch goes to the next one.
            long etag;
            using (var timeout = CancellationTokenSource.CreateLinkedTokenSource(_connection.Token))
            {
                timeout.CancelAfter(_ackTimeout);
                try
                {
                    etag = await _acks.Reader.ReadAsync(timeout.Token).ConfigureAwait(false);
                }
                catch (OperationCanceledException) when (!_connection.IsCancellationRequested)
                {
                    _error = ("TimeoutException", $"No acknowledgement of the batch ending at etag {batch.LastEtag} within {_ackTimeout}; the batch goes to the next worker.");
                    return;
                }
                catch (ChannelClosedException)
                {
                    return;
                }
            }
            try
            {
                await _session.AcknowledgeAsync(etag).ConfigureAwait(false);
            }
            catch (BadRequestException e)
            {
                _error = ("BadRequestException", e.Message);
                return;
            }
            await SendAsync(new { Type = "Confirm", Etag = etag }).ConfigureAwait(false);
        }
    }

    /// <summary>Reads the worker's messages: acknowledgements go to the batch loop; anything bad is an error message and the end of the connection.</summary>
    private async Task ReadAsync()
    {
        using var reader = new WebSocketMessageReader(_socket, _maxMessageBytes);
        try
        {
            // Receives use only the request's token: cancelling a pending receive aborts a WebSocket,
            // and a closing connection must still deliver its last message and close frame.
            while (true)
            {
                var read = await reader.ReadAsync(_aborted).ConfigureAwait(false);
                if (read == WebSocketRead.Closed)
                {
                    return;
                }
                if (read == WebSocketRead.TooBig)
                {
                    await SendErrorAsync("BadRequestException", $"A worker message may have at most {_maxMessageBytes} bytes (the server's Limits:MaxWebSocketMessageSize).").ConfigureAwait(false);
                    return;
                }
                if (reader.MessageType == WebSocketMessageType.Binary)
                {
                    await SendErrorAsync("BadRequestException", "Binary frames are not accepted: send JSON text such as {\"Type\":\"Acknowledge\",\"Etag\":12}.").ConfigureAwait(false);
                    return;
                }
                long etag;
                try
                {
                    using var json = JsonDocument.Parse(reader.Message);
                    var root = json.RootElement;
                    var type = root.ValueKind == JsonValueKind.Object && root.TryGetProperty("Type", out var t) && t.ValueKind == JsonValueKind.String ? t.GetString() : null;
                    if (type == "Heartbeat")
                    {
                        continue;
                    }
                    if (type != "Acknowledge" || !root.TryGetProperty("Etag", out var e) || !e.TryGetInt64(out etag))
                    {
                        await SendErrorAsync("BadRequestException", "Expected {\"Type\":\"Acknowledge\",\"Etag\":<the batch's LastEtag>} or {\"Type\":\"Heartbeat\"}.").ConfigureAwait(false);
                        return;
                    }
                }
                catch (JsonException e)
                {
                    await SendErrorAsync("InvalidJsonException", "A worker message is not JSON: " + JsonSyntaxErrors.Describe(e)).ConfigureAwait(false);
                    return;
                }
                if (!_acks.Writer.TryWrite(etag))
                {
                    await SendErrorAsync("BadRequestException", "Acknowledgements came faster than batches: acknowledge each batch once.").ConfigureAwait(false);
                    return;
                }
            }
        }
        catch (Exception e) when (e is OperationCanceledException or WebSocketException)
        {
        }
        finally
        {
            _acks.Writer.TryComplete();
            await _connection.CancelAsync().ConfigureAwait(false);
        }
    }

    private Task SendAsync(object message) => SendRawAsync(JsonSerializer.SerializeToUtf8Bytes(message));

    private async Task SendRawAsync(ReadOnlyMemory<byte> bytes)
    {
        var token = _sendLimit.Token;
        await _sending.WaitAsync(token).ConfigureAwait(false);
        try
        {
            await _socket.SendAsync(bytes, WebSocketMessageType.Text, true, token).ConfigureAwait(false);
        }
        finally
        {
            _sending.Release();
        }
    }

    /// <summary>A last message: nothing when the socket is gone, or the worker does not read it within the grace.</summary>
    private async Task TrySendAsync(object message)
    {
        try
        {
            if (_socket.State == WebSocketState.Open)
            {
                await SendAsync(message).ConfigureAwait(false);
            }
        }
        catch (Exception e) when (e is WebSocketException or OperationCanceledException)
        {
        }
    }

    private Task SendErrorAsync(string type, string message) => TrySendAsync(new { Type = "Error", Exception = type, Message = message });

    /// <summary>Sends the close frame (without waiting for the client's: the reader may be receiving).</summary>
    private async Task CloseOutputAsync(WebSocketCloseStatus status, string description)
    {
        try
        {
            await _sending.WaitAsync(_sendLimit.Token).ConfigureAwait(false);
        }
        catch (OperationCanceledException)
        {
            return;
        }
        try
        {
            await WebSocketClosing.SendCloseAsync(_socket, status, description, _sendLimit.Token).ConfigureAwait(false);
        }
        finally
        {
            _sending.Release();
        }
    }

    public void Dispose()
    {
        // A reader still waiting for a client that never closed cancels the token (and may send) when it ends.
        if (_reading.IsCompleted)
        {
            DisposeTokens();
        }
        else
        {
            _reading.ContinueWith(static (_, c) => ((SubscriptionConnection)c!).DisposeTokens(), this, CancellationToken.None, TaskContinuationOptions.ExecuteSynchronously, TaskScheduler.Default);
        }
    }

    private void DisposeTokens()
    {
        _ending.Dispose();
        _connection.Dispose();
        _sendLimit.Dispose();
    }
}
