using System.Buffers;
using System.Globalization;
using System.Net.WebSockets;
using System.Text;
using System.Text.Json;
using Jackdaw.Server.Errors;
using Jackdaw.Server.Hosting;
using Jackdaw.Server.Http;
using Jackdaw.Server.Routing;
using Jackdaw.Server.Subscriptions;

namespace Jackdaw.Server.Handlers;

/// <summary>
/// Data subscriptions, with RavenDB's names: definitions (<c>PUT/GET/DELETE /subscriptions</c>,
/// disable, enable, drop) and the worker's connection, a WebSocket on the HTTP port
/// (<c>/subscriptions/connect</c>) instead of RavenDB's separate TCP port.
/// </summary>
public sealed class SubscriptionsHandler(ServerContext server) : HandlerBase(server)
{
    /// <summary>The largest message a worker may send (an acknowledgement is a few dozen bytes).</summary>
    public const int MaxWorkerMessage = 64 * 1024;

    /// <summary>The most document bytes in one batch.</summary>
    public const long MaxBatchBytes = 16L * 1024 * 1024;

    /// <summary>How often an idle connection gets a heartbeat.</summary>
    public static TimeSpan HeartbeatInterval { get; set; } = TimeSpan.FromSeconds(5);

    /// <summary><c>PUT /databases/*/subscriptions</c> <c>{"Name","Query","ChangeVector"}</c> → 201 <c>{"Name","RaftCommandIndex"}</c>.</summary>
    [Route("/databases/*/subscriptions", "PUT")]
    public async ValueTask Create(RequestContext context)
    {
        var database = Server.Databases.GetDatabase(context.GetCaptureMemory(0));
        string? name;
        string query;
        string? changeVector;
        using (var json = await DocumentBodies.ReadJsonAsync(context.Request.BodyReader, context.RequestAborted).ConfigureAwait(false))
        {
            var root = json?.RootElement ?? default;
            if (root.ValueKind != JsonValueKind.Object || !root.TryGetProperty("Query", out var q) || q.ValueKind != JsonValueKind.String)
                throw new BadRequestException("The body must be {\"Name\":\"PaidOrders\",\"Query\":\"from Orders where Freight > 10\",\"ChangeVector\":\"BeginningOfTime\"}.");
            query = q.GetString()!;
            name = root.TryGetProperty("Name", out var n) && n.ValueKind == JsonValueKind.String ? n.GetString() : null;
            changeVector = root.TryGetProperty("ChangeVector", out var c) && c.ValueKind == JsonValueKind.String ? c.GetString() : null;
        }
        var record = await SubscriptionStore.Of(database).CreateAsync(name, query, changeVector).ConfigureAwait(false);
        var writer = context.StartJson(StatusCodes.Status201Created);
        writer.WriteStartObject();
        writer.WriteString("Name", record.Name);
        writer.WriteNumber("RaftCommandIndex", record.Id);
        writer.WriteEndObject();
        await context.CompleteJsonAsync().ConfigureAwait(false);
    }

    /// <summary><c>GET /databases/*/subscriptions[?name=]</c>: each with its query, position, workers, times and pending count.</summary>
    [Route("/databases/*/subscriptions", "GET")]
    public async ValueTask List(RequestContext context)
    {
        var database = Server.Databases.GetDatabase(context.GetCaptureMemory(0));
        var store = SubscriptionStore.Of(database);
        var name = NameOf(context, required: false);
        var states = name is null ? store.Subscriptions : [store.Get(name)];
        var writer = context.StartJson();
        writer.WriteStartObject();
        writer.WriteStartArray("Results");
        foreach (var state in states)
            WriteState(writer, state, database.DatabaseId);
        writer.WriteEndArray();
        writer.WriteEndObject();
        await context.CompleteJsonAsync().ConfigureAwait(false);
    }

    private static void WriteState(Utf8JsonWriter writer, SubscriptionState state, string databaseId)
    {
        var record = state.Record;
        writer.WriteStartObject();
        writer.WriteNumber("SubscriptionId", record.Id);
        writer.WriteString("SubscriptionName", record.Name);
        writer.WriteString("Query", record.Query);
        writer.WriteString("ChangeVectorForNextBatchStartingPoint", Documents.ChangeVectors.Format(record.AckedEtag, databaseId));
        writer.WriteNumber("AckedEtag", record.AckedEtag);
        writer.WriteBoolean("Disabled", record.Disabled);
        JsonDefaults.WriteTime(writer, "CreatedAt", record.CreatedAt);
        JsonDefaults.WriteTime(writer, "LastBatchAckTime", record.LastAckAt);
        JsonDefaults.WriteTime(writer, "LastBatchTime", record.LastBatchAt);
        var sessions = state.Sessions;
        JsonDefaults.WriteTime(writer, "LastClientConnectionTime", sessions.Count == 0 ? null : sessions.Max(s => s.Since));
        writer.WriteStartArray("Workers");
        foreach (var session in sessions)
        {
            writer.WriteStartObject();
            writer.WriteString("Address", session.Address);
            JsonDefaults.WriteTime(writer, "Since", session.Since);
            writer.WriteString("Strategy", session.Strategy.ToString());
            // The etag ranges it holds: the batch sent and waiting for its acknowledgement, and
            // the next one, prepared while the worker works (both go back if the worker leaves).
            writer.WriteStartArray("Held");
            var inFlight = session.InFlight;
            foreach (var batch in session.Held)
            {
                writer.WriteStartObject();
                writer.WriteNumber("StartExclusive", batch.StartExclusive);
                writer.WriteNumber("LastEtag", batch.LastEtag);
                writer.WriteNumber("Documents", batch.Count);
                writer.WriteBoolean("Sent", ReferenceEquals(batch, inFlight));
                writer.WriteEndObject();
            }
            writer.WriteEndArray();
            writer.WriteEndObject();
        }
        writer.WriteEndArray();
        writer.WriteNumber("PendingDocuments", state.CountPending());
        writer.WriteEndObject();
    }

    /// <summary><c>GET /databases/*/subscriptions/state?name=</c> (RavenDB's client): the state object of one subscription.</summary>
    [Route("/databases/*/subscriptions/state", "GET")]
    public async ValueTask State(RequestContext context)
    {
        var database = Server.Databases.GetDatabase(context.GetCaptureMemory(0));
        var state = SubscriptionStore.Of(database).Get(NameOf(context, required: true)!);
        var writer = context.StartJson();
        WriteState(writer, state, database.DatabaseId);
        await context.CompleteJsonAsync().ConfigureAwait(false);
    }

    /// <summary><c>DELETE /databases/*/subscriptions?name=</c> (RavenDB's clients: <c>?taskName=</c>): closes its workers. 204.</summary>
    [Route("/databases/*/subscriptions", "DELETE")]
    public async ValueTask Delete(RequestContext context)
    {
        var database = Server.Databases.GetDatabase(context.GetCaptureMemory(0));
        await SubscriptionStore.Of(database).DeleteAsync(NameOf(context, required: true)!).ConfigureAwait(false);
        context.Response.StatusCode = StatusCodes.Status204NoContent;
    }

    [Route("/databases/*/subscriptions/disable", "POST")]
    public async ValueTask Disable(RequestContext context)
    {
        var database = Server.Databases.GetDatabase(context.GetCaptureMemory(0));
        await SubscriptionStore.Of(database).SetDisabledAsync(NameOf(context, required: true)!, true).ConfigureAwait(false);
        context.Response.StatusCode = StatusCodes.Status204NoContent;
    }

    [Route("/databases/*/subscriptions/enable", "POST")]
    public async ValueTask Enable(RequestContext context)
    {
        var database = Server.Databases.GetDatabase(context.GetCaptureMemory(0));
        await SubscriptionStore.Of(database).SetDisabledAsync(NameOf(context, required: true)!, false).ConfigureAwait(false);
        context.Response.StatusCode = StatusCodes.Status204NoContent;
    }

    /// <summary><c>POST /databases/*/subscriptions/drop?name=</c>: closes its workers' connections (they may reconnect). 204.</summary>
    [Route("/databases/*/subscriptions/drop", "POST")]
    public ValueTask Drop(RequestContext context)
    {
        var database = Server.Databases.GetDatabase(context.GetCaptureMemory(0));
        SubscriptionStore.Of(database).Get(NameOf(context, required: true)!).CloseAll("the subscription's connections were dropped.", canReconnect: true);
        context.Response.StatusCode = StatusCodes.Status204NoContent;
        return ValueTask.CompletedTask;
    }

    /// <summary>
    /// <c>GET /databases/*/subscriptions/connect?name=&amp;strategy=&amp;maxDocsPerBatch=</c> (WebSocket):
    /// <c>ConnectionStatus</c>, then batches; the worker answers each with <c>{"Type":"Acknowledge","Etag":n}</c>,
    /// the server stores the position durably, answers <c>{"Type":"Confirm"}</c>, then sends the next.
    /// </summary>
    [Route("/databases/*/subscriptions/connect", "GET")]
    public async ValueTask Connect(RequestContext context)
    {
        var database = Server.Databases.GetDatabase(context.GetCaptureMemory(0));
        var store = SubscriptionStore.Of(database);
        var parameters = new QueryParameters(context.Request.QueryString.Value);
        var name = parameters.GetString("name") ?? throw new BadRequestException("Query parameter 'name' is required: the subscription's name.");
        var strategyText = parameters.GetString("strategy") ?? "OpenIfFree";
        if (!Enum.TryParse<SubscriptionStrategy>(strategyText, ignoreCase: true, out var strategy) || !Enum.IsDefined(strategy))
            throw new BadRequestException($"strategy '{strategyText}' is not one of OpenIfFree, TakeOver, WaitForFree, Concurrent.");
        var maxDocs = parameters.GetInt32("maxDocsPerBatch", 4096, 1, 65_536);
        if (!context.HttpContext.WebSockets.IsWebSocketRequest)
            throw new BadRequestException("This route is a WebSocket: connect with ws://.../databases/{db}/subscriptions/connect?name=...");
        using var socket = await context.HttpContext.WebSockets.AcceptWebSocketAsync().ConfigureAwait(false);
        var address = $"{context.HttpContext.Connection.RemoteIpAddress}:{context.HttpContext.Connection.RemotePort}";
        var aborted = context.RequestAborted;

        SubscriptionSession session;
        try
        {
            session = await store.Get(name).ConnectAsync(strategy, address, aborted).ConfigureAwait(false);
        }
        catch (Exception e) when (e is SubscriptionDoesNotExistException or SubscriptionInUseException or SubscriptionClosedException)
        {
            var status = e switch { SubscriptionDoesNotExistException => "NotFound", SubscriptionInUseException => "InUse", _ => "Closed" };
            await SendAsync(socket, new { Type = "ConnectionStatus", Status = status, Exception = e.GetType().Name, Message = e.Message, CanReconnect = e is SubscriptionInUseException }, aborted).ConfigureAwait(false);
            await CloseOutputAsync(socket, WebSocketCloseStatus.PolicyViolation, status).ConfigureAwait(false);
            await DrainAsync(socket, aborted).ConfigureAwait(false);
            return;
        }

        using (session)
        {
            using var connection = CancellationTokenSource.CreateLinkedTokenSource(aborted, session.Closed);
            var messages = System.Threading.Channels.Channel.CreateBounded<long>(4);
            var reading = ReadAsync(socket, messages.Writer, connection, aborted);
            // Two writers in turn: the next batch is read and written while the worker works on
            // the one sent (it is sent only after that one's acknowledgement is stored).
            var query = session.Subscription.Query;
            SubscriptionBatchWriter[] writers = [new(query, database.DatabaseId), new(query, database.DatabaseId)];
            var turn = 0;
            Task<SubscriptionBatch?>? next = null;
            try
            {
                try
                {
                    await SendAsync(socket, new { Type = "ConnectionStatus", Status = "Accepted", Strategy = strategy.ToString() }, aborted).ConfigureAwait(false);
                    next = session.NextBatchAsync(maxDocs, MaxBatchBytes, HeartbeatInterval, writers[turn], connection.Token);
                    while (!connection.IsCancellationRequested)
                    {
                        var batch = await next.ConfigureAwait(false);
                        if (batch is null)
                        {
                            next = session.NextBatchAsync(maxDocs, MaxBatchBytes, HeartbeatInterval, writers[turn], connection.Token);
                            await SendAsync(socket, new { Type = "Heartbeat" }, aborted).ConfigureAwait(false);
                            continue;
                        }
                        session.MarkSent(batch);
                        await SendRawAsync(socket, batch.Message, aborted).ConfigureAwait(false);
                        turn ^= 1;
                        next = session.NextBatchAsync(maxDocs, MaxBatchBytes, HeartbeatInterval, writers[turn], connection.Token);

                        // Only an acknowledgement of this batch moves on; a silent worker is dropped
                        // and its batch goes to the next one.
                        long etag;
                        using (var timeout = CancellationTokenSource.CreateLinkedTokenSource(connection.Token))
                        {
                            timeout.CancelAfter(store.AckTimeout);
                            try
                            {
                                etag = await messages.Reader.ReadAsync(timeout.Token).ConfigureAwait(false);
                            }
                            catch (OperationCanceledException) when (!connection.IsCancellationRequested)
                            {
                                await SendErrorAsync(socket, "TimeoutException", $"No acknowledgement of the batch ending at etag {batch.LastEtag} within {store.AckTimeout}; the batch goes to the next worker.").ConfigureAwait(false);
                                break;
                            }
                            catch (System.Threading.Channels.ChannelClosedException)
                            {
                                break;
                            }
                        }
                        try
                        {
                            await session.AcknowledgeAsync(etag).ConfigureAwait(false);
                        }
                        catch (BadRequestException e)
                        {
                            await SendErrorAsync(socket, "BadRequestException", e.Message).ConfigureAwait(false);
                            break;
                        }
                        await SendAsync(socket, new { Type = "Confirm", Etag = etag }, aborted).ConfigureAwait(false);
                    }
                }
                catch (Exception e) when (e is OperationCanceledException or WebSocketException or System.Threading.Channels.ChannelClosedException)
                {
                }
                catch (Exception e) when (e is Errors.DatabaseUnavailableException)
                {
                    await SendErrorAsync(socket, "DatabaseUnavailableException", e.Message).ConfigureAwait(false);
                }
                if (session.CloseReason is { } reason && socket.State == WebSocketState.Open)
                {
                    try
                    {
                        await SendAsync(socket, new { Type = "ConnectionStatus", Status = "Closed", Exception = nameof(SubscriptionClosedException), Message = reason, CanReconnect = session.CanReconnect }, CancellationToken.None).ConfigureAwait(false);
                    }
                    catch (WebSocketException)
                    {
                    }
                }
                await connection.CancelAsync().ConfigureAwait(false);
                await CloseOutputAsync(socket, WebSocketCloseStatus.NormalClosure, "closed").ConfigureAwait(false);
                // The reader ends at the client's close frame (or a broken connection); a client that
                // never answers the close is left after a few seconds.
                await Task.WhenAny(reading, Task.Delay(TimeSpan.FromSeconds(5))).ConfigureAwait(false);
            }
            finally
            {
                // The batch being prepared is held (or was not taken) before the session goes: a
                // session leaving gives back every range it holds.
                await connection.CancelAsync().ConfigureAwait(false);
                if (next is not null)
                    await next.ContinueWith(static t => _ = t.Exception, CancellationToken.None, TaskContinuationOptions.ExecuteSynchronously, TaskScheduler.Default).ConfigureAwait(false);
            }
        }
    }

    /// <summary>Reads the worker's messages: acknowledgements go to <paramref name="acks"/>; anything bad is an error message and the end of the connection.</summary>
    private static async Task ReadAsync(WebSocket socket, System.Threading.Channels.ChannelWriter<long> acks, CancellationTokenSource connection, CancellationToken aborted)
    {
        var buffer = new byte[MaxWorkerMessage];
        try
        {
            // Receives use only the request's token: cancelling a pending receive aborts a WebSocket,
            // and a closing connection must still deliver its last message and close frame.
            while (true)
            {
                var length = 0;
                ValueWebSocketReceiveResult received;
                do
                {
                    if (length == buffer.Length)
                    {
                        await SendErrorAsync(socket, "BadRequestException", $"A worker message may have at most {MaxWorkerMessage} bytes.").ConfigureAwait(false);
                        return;
                    }
                    received = await socket.ReceiveAsync(buffer.AsMemory(length), aborted).ConfigureAwait(false);
                    length += received.Count;
                }
                while (!received.EndOfMessage && received.MessageType != WebSocketMessageType.Close);
                if (received.MessageType == WebSocketMessageType.Close)
                    return;
                if (received.MessageType == WebSocketMessageType.Binary)
                {
                    await SendErrorAsync(socket, "BadRequestException", "Binary frames are not accepted: send JSON text such as {\"Type\":\"Acknowledge\",\"Etag\":12}.").ConfigureAwait(false);
                    return;
                }
                long etag;
                try
                {
                    using var json = JsonDocument.Parse(buffer.AsMemory(0, length));
                    var root = json.RootElement;
                    var type = root.ValueKind == JsonValueKind.Object && root.TryGetProperty("Type", out var t) && t.ValueKind == JsonValueKind.String ? t.GetString() : null;
                    if (type == "Heartbeat")
                        continue;
                    if (type != "Acknowledge" || !root.TryGetProperty("Etag", out var e) || !e.TryGetInt64(out etag))
                    {
                        await SendErrorAsync(socket, "BadRequestException", "Expected {\"Type\":\"Acknowledge\",\"Etag\":<the batch's LastEtag>} or {\"Type\":\"Heartbeat\"}.").ConfigureAwait(false);
                        return;
                    }
                }
                catch (JsonException e)
                {
                    await SendErrorAsync(socket, "InvalidJsonException", "A worker message is not JSON: " + e.Message).ConfigureAwait(false);
                    return;
                }
                if (!acks.TryWrite(etag))
                {
                    await SendErrorAsync(socket, "BadRequestException", "Acknowledgements came faster than batches: acknowledge each batch once.").ConfigureAwait(false);
                    return;
                }
            }
        }
        catch (Exception e) when (e is OperationCanceledException or WebSocketException)
        {
        }
        finally
        {
            acks.TryComplete();
            await connection.CancelAsync().ConfigureAwait(false);
        }
    }

    // A WebSocket allows one send at a time: the batch loop and the reader (its errors) share it.
    private static readonly System.Runtime.CompilerServices.ConditionalWeakTable<WebSocket, SemaphoreSlim> SendLocks = new();

    private static Task SendAsync(WebSocket socket, object message, CancellationToken cancellationToken) =>
        SendRawAsync(socket, JsonSerializer.SerializeToUtf8Bytes(message), cancellationToken);

    private static async Task SendRawAsync(WebSocket socket, ReadOnlyMemory<byte> bytes, CancellationToken cancellationToken)
    {
        var gate = SendLocks.GetValue(socket, _ => new SemaphoreSlim(1, 1));
        await gate.WaitAsync(cancellationToken).ConfigureAwait(false);
        try
        {
            await socket.SendAsync(bytes, WebSocketMessageType.Text, true, cancellationToken).ConfigureAwait(false);
        }
        finally
        {
            gate.Release();
        }
    }

    private static async Task SendErrorAsync(WebSocket socket, string type, string message)
    {
        try
        {
            if (socket.State == WebSocketState.Open)
                await SendAsync(socket, new { Type = "Error", Exception = type, Message = message }, CancellationToken.None).ConfigureAwait(false);
        }
        catch (WebSocketException)
        {
        }
    }

    /// <summary>Sends the close frame (without waiting for the client's: a reader may be receiving).</summary>
    private static async Task CloseOutputAsync(WebSocket socket, WebSocketCloseStatus status, string description)
    {
        var gate = SendLocks.GetValue(socket, _ => new SemaphoreSlim(1, 1));
        await gate.WaitAsync().ConfigureAwait(false);
        try
        {
            if (socket.State is WebSocketState.Open or WebSocketState.CloseReceived)
                await socket.CloseOutputAsync(status, description, CancellationToken.None).ConfigureAwait(false);
        }
        catch (WebSocketException)
        {
        }
        finally
        {
            gate.Release();
        }
    }

    /// <summary>Reads until the client's close frame (at most a few seconds), so the close handshake completes.</summary>
    private static async Task DrainAsync(WebSocket socket, CancellationToken aborted)
    {
        var buffer = new byte[1024];
        using var limit = CancellationTokenSource.CreateLinkedTokenSource(aborted);
        limit.CancelAfter(TimeSpan.FromSeconds(5));
        try
        {
            while (socket.State is WebSocketState.Open or WebSocketState.CloseSent)
            {
                var received = await socket.ReceiveAsync(buffer.AsMemory(), limit.Token).ConfigureAwait(false);
                if (received.MessageType == WebSocketMessageType.Close)
                    return;
            }
        }
        catch (Exception e) when (e is OperationCanceledException or WebSocketException)
        {
        }
    }

    private static string? NameOf(RequestContext context, bool required)
    {
        var parameters = new QueryParameters(context.Request.QueryString.Value);
        var name = parameters.GetString("name") ?? parameters.GetString("taskName");
        if (required && string.IsNullOrEmpty(name))
            throw new BadRequestException("Query parameter 'name' is required: the subscription's name.");
        return string.IsNullOrEmpty(name) ? null : name;
    }

}
