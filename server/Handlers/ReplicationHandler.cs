using System.Buffers;
using Jackdaw.Server.Documents;
using Jackdaw.Server.Errors;
using Jackdaw.Server.Hosting;
using Jackdaw.Server.Replication;
using Jackdaw.Server.Routing;
using Jackdaw.Server.Security;
using Jackdaw.Server.Wire;
using Jackdaw.Storage.Blittable;

namespace Jackdaw.Server.Handlers;

/// <summary>
/// Replication between the nodes of a database: the push another node opens (a WebSocket), the
/// conflicts kept under the keep policy, the conflict solver, and what the senders are doing.
/// </summary>
public sealed class ReplicationHandler(ServerContext server) : HandlerBase(server)
{
    /// <summary>
    /// <c>GET /databases/*/replication/push?sourceDatabaseId=&amp;sourceTag=</c> (WebSocket): another
    /// node's copy of the database pushes its etag feed here (see <see cref="IncomingReplication"/>).
    /// What a source sends sets this node's stored position for it and can outrank later writes,
    /// so only a node may push: on a secured server the caller needs ClusterAdmin, the clearance
    /// the nodes' own server certificate holds (the strictest there is; a cluster-node level for
    /// the cluster's routes may replace it), and on any server <c>sourceTag</c> must be one of the
    /// database's other nodes as the cluster last set them (<see cref="ReplicationHub.IsKnownSource"/>).
    /// </summary>
    [Route("/databases/*/replication/push", "GET")]
    [Access(RouteAccess.ClusterAdmin)]
    public async ValueTask Push(RequestContext context)
    {
        var database = Server.Databases.GetDatabase(context.GetCaptureMemory(0));
        var (source, sourceTag) = SourceOf(context);
        if (string.IsNullOrEmpty(source) || source.Length > 64 || !System.Text.Ascii.IsValid(source))
        {
            throw new BadRequestException("Query parameter 'sourceDatabaseId' is required: the pushing copy's database id (ASCII).");
        }
        if (source == database.DatabaseId)
        {
            throw new BadRequestException($"Database '{database.Name}' cannot replicate to itself (database id {source}): check the topology's URLs.");
        }
        if (!Server.Replication.IsKnownSource(database.Name, sourceTag, source))
        {
            throw new AuthorizationException(false, $"Node '{sourceTag}' (database id {source}) is not one of the other nodes of database '{database.Name}' on node {database.NodeTag}: only they push replication here.");
        }
        using var socket = await context.AcceptWebSocketAsync("connect with ws://.../databases/{db}/replication/push?sourceDatabaseId=...").ConfigureAwait(false);
        var stopping = CancellationTokenSource.CreateLinkedTokenSource(context.RequestAborted, ServerStopping(context));
        try
        {
            await IncomingReplication.RunAsync(socket, database, source, sourceTag, Server.Replication.Logger, stopping.Token).ConfigureAwait(false);
        }
        catch (Exception e) when (e is OperationCanceledException or System.Net.WebSockets.WebSocketException or DatabaseUnavailableException)
        {
            // The source reconnects and resumes from the stored position.
        }
        finally
        {
            stopping.Dispose();
        }
    }

    /// <summary>
    /// <c>GET /databases/*/replication/conflicts</c>: the ids in conflict,
    /// <c>{"TotalResults":n,"Results":[{"Id","LastModified","ConflictsPerDocument"}]}</c>; with
    /// <c>?docId=</c>, RavenDB's GetConflictsResult: <c>{"Id","Results":[{"ChangeVector","Doc","LastModified"}],"LargestEtag"}</c>
    /// (<c>Doc</c> null for a deletion).
    /// </summary>
    [Route("/databases/*/replication/conflicts", "GET")]
    [Access(RouteAccess.DatabaseRead)]
    public ValueTask Conflicts(RequestContext context)
    {
        var database = Server.Databases.GetDatabase(context.GetCaptureMemory(0));
        var docId = new UrlQuery(context.Request.QueryString.Value).GetString("docId");
        if (docId is not null && DocumentIds.Validate(docId) is { } invalid)
        {
            throw new BadRequestException($"Query parameter 'docId': {invalid}");
        }
        using var reader = database.BeginRead();
        var json = context.StartJson();
        json.WriteStartObject();
        if (docId is not null)
        {
            json.WriteString("Id", docId);
            json.WriteStartArray("Results");
            foreach (var version in reader.GetConflicts(docId))
            {
                json.WriteStartObject();
                json.WriteString("ChangeVector", version.ChangeVector);
                json.WritePropertyName("Doc");
                if (version.Document is null)
                {
                    json.WriteNullValue();
                }
                else
                {
                    var body = new ArrayBufferWriter<byte>(version.Document.Length * 2);
                    BlittableJsonWriter.WriteTo(version.Document, body);
                    json.WriteRawValue(body.WrittenSpan, skipInputValidation: true);
                }
                json.WriteString("LastModified", new DateTime(version.LastModifiedTicks, DateTimeKind.Utc).ToString("O", System.Globalization.CultureInfo.InvariantCulture));
                json.WriteEndObject();
            }
            json.WriteEndArray();
            json.WriteNumber("LargestEtag", reader.LastEtag);
        }
        else
        {
            var byId = reader.GetAllConflicts().GroupBy(v => v.Id, StringComparer.OrdinalIgnoreCase).ToList();
            json.WriteNumber("TotalResults", byId.Count);
            json.WriteStartArray("Results");
            foreach (var group in byId)
            {
                json.WriteStartObject();
                json.WriteString("Id", group.First().Id);
                json.WriteString("LastModified", new DateTime(group.Max(v => v.LastModifiedTicks), DateTimeKind.Utc).ToString("O", System.Globalization.CultureInfo.InvariantCulture));
                json.WriteNumber("ConflictsPerDocument", group.Count());
                json.WriteEndObject();
            }
            json.WriteEndArray();
        }
        json.WriteEndObject();
        return context.CompleteJsonAsync();
    }

    /// <summary>
    /// <c>PUT /databases/*/admin/replication/conflicts/solver</c> with RavenDB's ConflictSolver
    /// (<c>{"ResolveToLatest":false,"ResolveByCollection":{}}</c>): <c>ResolveToLatest</c> true (or
    /// absent) lets the latest write win, false keeps conflicts for the user. Per-collection
    /// scripts are not supported. Answers <c>{"Key","RaftCommandIndex","Solver"}</c>. On a clustered
    /// database it goes into the record (through the leader) and every node of it applies it.
    /// </summary>
    [Route("/databases/*/admin/replication/conflicts/solver", "PUT")]
    [Access(RouteAccess.DatabaseAdmin)]
    public async ValueTask SetSolver(RequestContext context)
    {
        await SetSolverAsync(context, context.GetCaptureMemory(0).ToString()).ConfigureAwait(false);
    }

    /// <summary>
    /// <c>POST /admin/replication/conflicts/solver?name=</c>: the route RavenDB's clients send
    /// <c>ModifyConflictSolverOperation</c> to, with the same body; answers RavenDB's
    /// ModifySolverResult, <c>{"Key","RaftCommandIndex","Solver"}</c>.
    /// </summary>
    [Route("/admin/replication/conflicts/solver", "POST")]
    [Access(RouteAccess.Operator)]
    public async ValueTask ModifySolver(RequestContext context)
    {
        var name = new UrlQuery(context.Request.QueryString.Value).GetString("name")
            ?? throw new BadRequestException("Query parameter 'name' (the database) is required: /admin/replication/conflicts/solver?name=Northwind.");
        await SetSolverAsync(context, name).ConfigureAwait(false);
    }

    private async ValueTask SetSolverAsync(RequestContext context, string name)
    {
        var clustered = Server.Cluster.RecordOf(name) is not null;
        // A lone server's database must exist before its body is read (404 first, as before).
        var database = clustered ? null : Server.Databases.GetDatabase(name.AsMemory());
        var read = await DocumentBodies.BufferAsync(context.Request.BodyReader, context.RequestAborted).ConfigureAwait(false);
        byte[] body;
        try
        {
            body = read.Buffer.ToArray();
        }
        finally
        {
            context.Request.BodyReader.AdvanceTo(read.Buffer.End);
        }
        var solver = ReadSolver(body);
        long raftIndex = 0;
        if (database is not null)
        {
            await DatabaseReplication.Of(database).SetConflictSolverAsync(solver).ConfigureAwait(false);
        }
        else
        {
            if (await LeaderForwarding.ForwardedAsync(context, body: body).ConfigureAwait(false))
            {
                return;
            }
            raftIndex = await Server.Cluster.SetConflictSolverAsync(name, solver, LeaderForwarding.CommandId(context), context.RequestAborted).ConfigureAwait(false);
            await Server.Cluster.WaitForLocalAsync(raftIndex, context.RequestAborted).ConfigureAwait(false);
            context.Response.Headers[LeaderForwarding.AppliedEtagHeader] = raftIndex.ToString(System.Globalization.CultureInfo.InvariantCulture);
        }
        var json = context.StartJson();
        json.WriteStartObject();
        json.WriteString("Key", name);
        json.WriteNumber("RaftCommandIndex", raftIndex);
        json.WritePropertyName("Solver");
        json.WriteRawValue(solver);
        json.WriteEndObject();
        await context.CompleteJsonAsync().ConfigureAwait(false);
    }

    /// <summary>The solver's JSON, checked: an object, without per-collection scripts.</summary>
    private static string ReadSolver(byte[] body)
    {
        System.Text.Json.JsonDocument document;
        try
        {
            document = System.Text.Json.JsonDocument.Parse(body);
        }
        catch (System.Text.Json.JsonException e)
        {
            throw new BadRequestException($"The body is RavenDB's ConflictSolver, e.g. {{\"ResolveToLatest\":false}}: {e.Message}");
        }
        using (document)
        {
            var root = document.RootElement;
            if (root.ValueKind != System.Text.Json.JsonValueKind.Object)
            {
                throw new BadRequestException("The body is RavenDB's ConflictSolver, e.g. {\"ResolveToLatest\":false}.");
            }
            if (root.TryGetProperty("ResolveByCollection", out var scripts) && scripts.ValueKind == System.Text.Json.JsonValueKind.Object && scripts.EnumerateObject().Any())
            {
                throw new FeatureNotSupportedException("Per-collection conflict resolution scripts (ResolveByCollection) are not supported: use ResolveToLatest true or false.");
            }
            return root.GetRawText();
        }
    }

    /// <summary>
    /// <c>GET /databases/*/replication/debug</c>: this node's senders (destination, acknowledged
    /// etag, connected, last error) and what the database received.
    /// </summary>
    [Route("/databases/*/replication/debug", "GET")]
    [Access(RouteAccess.DatabaseRead)]
    public ValueTask Debug(RequestContext context)
    {
        var database = Server.Databases.GetDatabase(context.GetCaptureMemory(0));
        var stats = DatabaseReplication.Of(database).Stats;
        var json = context.StartJson();
        json.WriteStartObject();
        json.WriteString("NodeTag", database.NodeTag);
        json.WriteString("DatabaseId", database.DatabaseId);
        json.WriteNumber("LastEtag", database.LastEtag);
        json.WriteStartArray("Outgoing");
        foreach (var sender in Server.Replication.Outgoing(database.Name))
        {
            json.WriteStartObject();
            json.WriteString("Tag", sender.Destination.Tag);
            json.WriteString("Url", sender.Destination.Url);
            json.WriteNumber("AcknowledgedEtag", sender.AcknowledgedEtag);
            json.WriteBoolean("Connected", sender.Connected);
            json.WriteString("LastError", sender.LastError);
            // Since the last acknowledged batch: a batch the destination keeps refusing shows here,
            // with the position it is stuck at (AcknowledgedEtag) and why (LastError).
            json.WriteNumber("Failures", sender.Failures);
            // Items the destination already held (its own writes coming back), passed without sending.
            json.WriteNumber("LeftOut", sender.ItemsLeftOut);
            json.WriteEndObject();
        }
        json.WriteEndArray();
        json.WriteStartObject("Incoming");
        json.WriteNumber("Batches", stats.Batches);
        json.WriteNumber("Applied", stats.Applied);
        json.WriteNumber("AlreadyMerged", stats.AlreadyMerged);
        json.WriteNumber("Repeated", stats.Repeated);
        json.WriteNumber("Conflicts", stats.Conflicts);
        json.WriteEndObject();
        json.WriteEndObject();
        return context.CompleteJsonAsync();
    }

    private static (string? Source, string? Tag) SourceOf(RequestContext context)
    {
        var query = new UrlQuery(context.Request.QueryString.Value);
        return (query.GetString("sourceDatabaseId"), query.GetString("sourceTag"));
    }

    private static CancellationToken ServerStopping(RequestContext context) =>
        context.HttpContext.RequestServices.GetRequiredService<IHostApplicationLifetime>().ApplicationStopping;
}
