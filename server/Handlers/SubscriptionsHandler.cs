using System.Text.Json;
using Jackdaw.Server.Errors;
using Jackdaw.Server.Hosting;
using Jackdaw.Server.Wire;
using Jackdaw.Server.Routing;
using Jackdaw.Server.Subscriptions;
using Jackdaw.Server.Security;

namespace Jackdaw.Server.Handlers;

/// <summary>
/// Data subscriptions, with RavenDB's names: definitions (<c>PUT/GET/DELETE /subscriptions</c>,
/// disable, enable, drop) and the worker's connection, a WebSocket on the HTTP port
/// (<c>/subscriptions/connect</c>) instead of RavenDB's separate TCP port.
/// </summary>
public sealed class SubscriptionsHandler(ServerContext server) : HandlerBase(server)
{
    /// <summary><c>PUT /databases/*/subscriptions</c> <c>{"Name","Query","ChangeVector"}</c> → 201 <c>{"Name","RaftCommandIndex"}</c>.</summary>
    [Route("/databases/*/subscriptions", "PUT")]
    [Access(RouteAccess.DatabaseReadWrite)]
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
            {
                throw new BadRequestException("The body must be {\"Name\":\"PaidOrders\",\"Query\":\"from Orders where Freight > 10\",\"ChangeVector\":\"BeginningOfTime\"}.");
            }
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

    /// <summary>
    /// <c>GET /databases/*/subscriptions[?name=][&amp;pendingLimit=]</c>: each with its query, position,
    /// workers, times and pending count (at most 100,000 counted, reading at most <c>pendingLimit</c>
    /// documents after the position: a page that refreshes it asks for a small bound).
    /// </summary>
    [Route("/databases/*/subscriptions", "GET")]
    [Access(RouteAccess.DatabaseRead)]
    public async ValueTask List(RequestContext context)
    {
        var database = Server.Databases.GetDatabase(context.GetCaptureMemory(0));
        var store = SubscriptionStore.Of(database);
        var name = NameOf(context, required: false);
        var subscriptions = name is null ? store.Subscriptions : [store.Get(name)];
        var pendingLimit = PendingLimitOf(context);
        var writer = context.StartJson();
        writer.WriteStartObject();
        writer.WriteStartArray("Results");
        foreach (var subscription in subscriptions)
        {
            WriteState(writer, subscription, database.NodeTag, database.DatabaseId, pendingLimit);
        }
        writer.WriteEndArray();
        writer.WriteEndObject();
        await context.CompleteJsonAsync().ConfigureAwait(false);
    }

    private static void WriteState(Utf8JsonWriter writer, SubscriptionCoordinator subscription, string nodeTag, string databaseId, long pendingLimit)
    {
        var record = subscription.Record;
        writer.WriteStartObject();
        writer.WriteNumber("SubscriptionId", record.Id);
        writer.WriteString("SubscriptionName", record.Name);
        writer.WriteString("Query", record.Query);
        writer.WriteString("ChangeVectorForNextBatchStartingPoint", Documents.ChangeVectors.Format(nodeTag, record.AckedEtag, databaseId));
        writer.WriteNumber("AckedEtag", record.AckedEtag);
        writer.WriteBoolean("Disabled", record.Disabled);
        // On a clustered database: the node that serves it (RavenDB's MentorNode and NodeTag).
        if (subscription.Cluster is { } cluster)
        {
            writer.WriteString("MentorNode", cluster.Mentor);
            writer.WriteString("NodeTag", cluster.Mentor);
        }
        JsonDefaults.WriteTime(writer, "CreatedAt", record.CreatedAt);
        JsonDefaults.WriteTime(writer, "LastBatchAckTime", record.LastAckAt);
        JsonDefaults.WriteTime(writer, "LastBatchTime", record.LastBatchAt);
        var sessions = subscription.Sessions;
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
        var pending = subscription.CountPending(MaxPendingCount, pendingLimit, out var exact);
        writer.WriteNumber("PendingDocuments", pending);
        writer.WriteBoolean("PendingDocumentsExact", exact);
        writer.WriteEndObject();
    }

    /// <summary><c>GET /databases/*/subscriptions/state?name=[&amp;pendingLimit=]</c> (RavenDB's client): the state object of one subscription.</summary>
    [Route("/databases/*/subscriptions/state", "GET")]
    [Access(RouteAccess.DatabaseRead)]
    public async ValueTask State(RequestContext context)
    {
        var database = Server.Databases.GetDatabase(context.GetCaptureMemory(0));
        var subscription = SubscriptionStore.Of(database).Get(NameOf(context, required: true)!);
        var writer = context.StartJson();
        WriteState(writer, subscription, database.NodeTag, database.DatabaseId, PendingLimitOf(context));
        await context.CompleteJsonAsync().ConfigureAwait(false);
    }

    private const long MaxPendingCount = 100_000;

    /// <summary>The most documents the pending count reads: <c>pendingLimit</c>, or no bound but the count's own.</summary>
    private static long PendingLimitOf(RequestContext context) =>
        new UrlQuery(context.Request.QueryString.Value).GetInt64("pendingLimit", long.MaxValue, min: 1, max: long.MaxValue);

    /// <summary><c>DELETE /databases/*/subscriptions?name=</c> (RavenDB's clients: <c>?taskName=</c>): closes its workers. 204.</summary>
    [Route("/databases/*/subscriptions", "DELETE")]
    [Access(RouteAccess.DatabaseReadWrite)]
    public async ValueTask Delete(RequestContext context)
    {
        var database = Server.Databases.GetDatabase(context.GetCaptureMemory(0));
        await SubscriptionStore.Of(database).DeleteAsync(NameOf(context, required: true)!).ConfigureAwait(false);
        context.Response.StatusCode = StatusCodes.Status204NoContent;
    }

    [Route("/databases/*/subscriptions/disable", "POST")]
    [Access(RouteAccess.DatabaseReadWrite)]
    public async ValueTask Disable(RequestContext context)
    {
        var database = Server.Databases.GetDatabase(context.GetCaptureMemory(0));
        await SubscriptionStore.Of(database).SetDisabledAsync(NameOf(context, required: true)!, true).ConfigureAwait(false);
        context.Response.StatusCode = StatusCodes.Status204NoContent;
    }

    [Route("/databases/*/subscriptions/enable", "POST")]
    [Access(RouteAccess.DatabaseReadWrite)]
    public async ValueTask Enable(RequestContext context)
    {
        var database = Server.Databases.GetDatabase(context.GetCaptureMemory(0));
        await SubscriptionStore.Of(database).SetDisabledAsync(NameOf(context, required: true)!, false).ConfigureAwait(false);
        context.Response.StatusCode = StatusCodes.Status204NoContent;
    }

    /// <summary>
    /// <c>POST /databases/*/subscriptions/drop?name=</c>: closes its workers' connections (they may
    /// reconnect). 204. On a clustered database only the mentor has workers: another node passes
    /// the drop on to it (a mentor that does not answer has none to drop).
    /// </summary>
    [Route("/databases/*/subscriptions/drop", "POST")]
    [Access(RouteAccess.DatabaseReadWrite)]
    public async ValueTask Drop(RequestContext context)
    {
        var database = Server.Databases.GetDatabase(context.GetCaptureMemory(0));
        var subscription = SubscriptionStore.Of(database).Get(NameOf(context, required: true)!);
        subscription.CloseAll("the subscription's connections were dropped.", canReconnect: true);
        if (!subscription.ServedHere && subscription.Cluster is { MentorUrl: { } mentorUrl } && !LeaderForwarding.WasPassedOn(context))
        {
            await DropOnMentorAsync(context, database.Name, mentorUrl).ConfigureAwait(false);
        }
        context.Response.StatusCode = StatusCodes.Status204NoContent;
    }

    private async Task DropOnMentorAsync(RequestContext context, string database, string mentorUrl)
    {
        using var request = new HttpRequestMessage(HttpMethod.Post, mentorUrl + context.Request.Path + context.Request.QueryString);
        LeaderForwarding.MarkPassedOn(request, Server.Cluster.NodeTag);
        try
        {
            using var timeout = CancellationTokenSource.CreateLinkedTokenSource(context.RequestAborted);
            timeout.CancelAfter(TimeSpan.FromSeconds(5));
            using var response = await Server.Cluster.LeaderClient.SendAsync(request, timeout.Token).ConfigureAwait(false);
            if (!response.IsSuccessStatusCode && response.StatusCode != System.Net.HttpStatusCode.NotFound)
            {
                throw new DatabaseUnavailableException(database, $"the mentor of the subscription at {mentorUrl} answered {(int)response.StatusCode} to the drop; retry shortly.");
            }
        }
        catch (Exception e) when (e is HttpRequestException || e is OperationCanceledException && !context.RequestAborted.IsCancellationRequested)
        {
            // Down: its workers' connections went with it.
        }
    }

    /// <summary>
    /// <c>GET /databases/*/subscriptions/connect?name=&amp;strategy=&amp;maxDocsPerBatch=</c> (WebSocket):
    /// <c>ConnectionStatus</c>, then batches; the worker answers each with <c>{"Type":"Acknowledge","Etag":n}</c>,
    /// the server stores the position durably, answers <c>{"Type":"Confirm"}</c>, then sends the next.
    /// </summary>
    [Route("/databases/*/subscriptions/connect", "GET")]
    // Read, as RavenDB: a read-only certificate may be a subscription worker (its acknowledgements
    // move only the subscription's position, never a document).
    [Access(RouteAccess.DatabaseRead)]
    public async ValueTask Connect(RequestContext context)
    {
        var database = Server.Databases.GetDatabase(context.GetCaptureMemory(0));
        var store = SubscriptionStore.Of(database);
        var parameters = new UrlQuery(context.Request.QueryString.Value);
        var name = parameters.GetString("name") ?? throw new BadRequestException("Query parameter 'name' is required: the subscription's name.");
        var strategyText = parameters.GetString("strategy") ?? "OpenIfFree";
        if (!Enum.TryParse<SubscriptionStrategy>(strategyText, ignoreCase: true, out var strategy) || !Enum.IsDefined(strategy))
        {
            throw new BadRequestException($"strategy '{strategyText}' is not one of OpenIfFree, TakeOver, WaitForFree, Concurrent.");
        }
        var maxDocs = parameters.GetInt32("maxDocsPerBatch", 4096, 1, 65_536);
        // Before the upgrade: a node still loading the cluster's state answers 503 (the worker retries).
        store.ThrowIfLoading(name);
        using var socket = await context.AcceptWebSocketAsync("connect with ws://.../databases/{db}/subscriptions/connect?name=...").ConfigureAwait(false);
        var address = $"{context.HttpContext.Connection.RemoteIpAddress}:{context.HttpContext.Connection.RemotePort}";
        var aborted = context.RequestAborted;

        SubscriptionSession session;
        try
        {
            session = await store.GetForWorker(name).ConnectAsync(strategy, address, aborted).ConfigureAwait(false);
        }
        catch (Exception e) when (e is SubscriptionDoesNotExistException or SubscriptionInUseException or SubscriptionClosedException or SubscriptionDoesNotBelongToNodeException)
        {
            await SubscriptionConnection.RefuseAsync(socket, e, aborted).ConfigureAwait(false);
            return;
        }
        using (session)
        {
            await SubscriptionConnection.RunAsync(socket, session, store.AckTimeout, maxDocs, Server.Options.Limits.MaxWebSocketMessageSize, database.DatabaseId, store.Logger, aborted).ConfigureAwait(false);
        }
    }

    private static string? NameOf(RequestContext context, bool required)
    {
        var parameters = new UrlQuery(context.Request.QueryString.Value);
        var name = parameters.GetString("name") ?? parameters.GetString("taskName");
        if (required && string.IsNullOrEmpty(name))
        {
            throw new BadRequestException("Query parameter 'name' is required: the subscription's name.");
        }
        return string.IsNullOrEmpty(name) ? null : name;
    }

}
