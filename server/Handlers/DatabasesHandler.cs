using Jackdaw.Server.Hosting;
using Jackdaw.Server.Wire;
using Jackdaw.Server.Routing;
using Jackdaw.Server.Errors;
using Jackdaw.Server.Security;

namespace Jackdaw.Server.Handlers;

/// <summary><c>/admin/databases</c>: list, create and delete databases.</summary>
public sealed partial class DatabasesHandler(ServerContext server) : HandlerBase(server)
{
    [Route("/admin/databases", "GET")]
    [Access(RouteAccess.Operator)]
    public ValueTask List(RequestContext context)
    {
        // RavenDB's GetDatabaseRecordOperation asks this route with ?name=: a list would be read as a record.
        if (new UrlQuery(context.Request.QueryString.Value).GetString("name") is { } asked)
        {
            return WriteDatabaseRecordAsync(context, asked);
        }
        var json = context.StartJson();
        json.WriteStartObject();
        json.WriteStartArray("Databases");
        // This node's copies (in a cluster, GET /databases lists every database the cluster records).
        foreach (var name in Server.Databases.Names)
        {
            json.WriteStringValue(name);
        }
        json.WriteEndArray();
        json.WriteEndObject();
        return context.CompleteJsonAsync();
    }

    /// <summary>
    /// The databases a client may use through this node: in a cluster, every database the cluster
    /// records (the same list on every node, wherever the copies are); else the local ones.
    /// </summary>
    private IEnumerable<string> KnownNames() => Server.Cluster.IsClustered
        ? Server.Cluster.State.Databases.Values.Select(record => record.Name)
        : Server.Databases.Names;

    /// <summary>
    /// <c>GET /databases?start=&amp;pageSize=&amp;namesOnly=</c>, RavenDB's list:
    /// <c>{"Databases":["Northwind",...]}</c>, or objects with a <c>Name</c> unless <c>namesOnly=true</c>;
    /// on a secured server, only the databases the caller has access to.
    /// </summary>
    [Route("/databases", "GET")]
    [Access(RouteAccess.ValidUser)]
    public ValueTask ListPaged(RequestContext context)
    {
        var query = new UrlQuery(context.Request.QueryString.Value);
        var start = query.GetInt32("start", 0);
        var pageSize = query.GetInt32("pageSize", int.MaxValue, 0);
        var namesOnly = string.Equals(query.GetString("namesOnly"), "true", StringComparison.OrdinalIgnoreCase);
        var json = context.StartJson();
        json.WriteStartObject();
        json.WriteStartArray("Databases");
        // As RavenDB: a caller sees only the databases it has access to (everyone, unsecured).
        var caller = context.Caller;
        foreach (var name in KnownNames().Where(name => caller is null || caller.CanSee(name)).Skip(start).Take(pageSize))
        {
            if (namesOnly)
            {
                json.WriteStringValue(name);
                continue;
            }
            json.WriteStartObject();
            json.WriteString("Name", name);
            json.WriteBoolean("Disabled", false);
            json.WriteEndObject();
        }
        json.WriteEndArray();
        json.WriteEndObject();
        return context.CompleteJsonAsync();
    }

    /// <summary>
    /// <c>PUT /admin/databases?name=&amp;replicationFactor=</c> (or RavenDB's body, a database record:
    /// <c>{"DatabaseName", "Topology":{"Members":[...],"ReplicationFactor"}, "Settings"}</c>): 201
    /// with RavenDB's answer (<c>Name</c>, <c>RaftCommandIndex</c>, <c>Topology</c>,
    /// <c>NodesAddedTo</c>); 409 <c>DatabaseAlreadyExistsException</c> when it exists. In a cluster
    /// the leader commits the record (on <c>Topology.Members</c>, or on <c>ReplicationFactor</c>
    /// nodes it picks) and each node named creates its copy; the answer waits for this node's and
    /// (up to 10 s) for those of the other nodes named that answer.
    /// </summary>
    [Route("/admin/databases", "PUT")]
    [Access(RouteAccess.Operator)]
    public async ValueTask Create(RequestContext context)
    {
        // Passed on to the leader, the answer waits for this node too: a client that created the
        // database through it uses it next.
        if (await LeaderForwarding.ForwardedAsync(context, WaitForCreatedAsync).ConfigureAwait(false))
        {
            return;
        }
        var (queryName, factorText) = CreateQuery(context);
        using var body = await ReadBodyAsync(context).ConfigureAwait(false);
        var record = body?.RootElement.ValueKind == System.Text.Json.JsonValueKind.Object ? body.RootElement : default;
        var name = queryName
            ?? StringProperty(record, "DatabaseName")
            ?? throw new BadRequestException("The database name is required: /admin/databases?name=Northwind, or a body {\"DatabaseName\":\"Northwind\"}.");
        var (factor, members) = RequestedTopology(factorText, record);
        var cluster = Server.Cluster;
        if (cluster.IsClustered)
        {
            var (created, index) = await cluster.CreateDatabaseAsync(name, factor ?? 1, members, Settings(record), LeaderForwarding.CommandId(context), context.RequestAborted).ConfigureAwait(false);
            if (created.Nodes.Contains(cluster.NodeTag))
            {
                await WaitForLocalAsync(created, context.RequestAborted).ConfigureAwait(false);
            }
            // And for the database's other nodes that answer, as RavenDB: the client uses it next, on any of them.
            await cluster.WaitForCopiesAsync(created, TimeSpan.FromSeconds(10), context.RequestAborted).ConfigureAwait(false);
            await WriteRecordAsync(context, StatusCodes.Status201Created, created.Name, index, created.Nodes, created.Promotables).ConfigureAwait(false);
            return;
        }
        if (cluster.IsPassive)
        {
            throw new ClusterException("This node waits to be added to a cluster (Cluster:Passive): create databases on a member.");
        }
        if (factor > 1 || members is { Count: > 0 } && members.Any(m => m != cluster.NodeTag))
        {
            throw new ClusterException($"This server is a cluster of one node ({cluster.NodeTag}): a database can only be on it. Add nodes first (PUT /admin/cluster/node?url=...), or create it with ReplicationFactor 1.");
        }
        if (!Server.Databases.TryCreate(name))
        {
            throw new DatabaseAlreadyExistsException(name);
        }
        await WriteRecordAsync(context, StatusCodes.Status201Created, name, 0, [cluster.NodeTag], null).ConfigureAwait(false);
    }

    /// <summary>
    /// <c>PUT /admin/databases/node?name=&amp;node=</c> (RavenDB's AddDatabaseNodeOperation): adds the
    /// database to node <c>node</c>, or to a member that lacks it; that node creates its copy.
    /// </summary>
    [Route("/admin/databases/node", "PUT")]
    [Access(RouteAccess.Operator)]
    public async ValueTask AddNode(RequestContext context)
    {
        if (await LeaderForwarding.ForwardedAsync(context).ConfigureAwait(false))
        {
            return;
        }
        var query = new UrlQuery(context.Request.QueryString.Value);
        var name = query.GetString("name")
            ?? throw new BadRequestException("Query parameter 'name' (the database) is required: /admin/databases/node?name=Northwind&node=B.");
        var node = query.GetString("node") is { Length: > 0 } given ? given : null;
        var cluster = Server.Cluster;
        if (!cluster.IsClustered)
        {
            if (!Server.Databases.Names.Contains(name, StringComparer.OrdinalIgnoreCase))
            {
                throw new DatabaseDoesNotExistException(name);
            }
            throw new ClusterException($"This server is a cluster of one node ({cluster.NodeTag}) and '{name}' is on it already: add nodes first (PUT /admin/cluster/node?url=...).");
        }
        var (record, index) = await cluster.AddDatabaseNodeAsync(name, node, LeaderForwarding.CommandId(context), context.RequestAborted).ConfigureAwait(false);
        await WriteRecordAsync(context, StatusCodes.Status200OK, record.Name, index, record.Nodes, record.Promotables, record.Rehabs).ConfigureAwait(false);
    }

    /// <summary>RavenDB's <c>DatabasePutResult</c>: the name, the Raft index, the topology (members and promotables), the URLs of its nodes.</summary>
    private async ValueTask WriteRecordAsync(RequestContext context, int status, string name, long index, IReadOnlyList<string> nodes, IReadOnlyDictionary<string, string>? promotables, IReadOnlyDictionary<string, string>? rehabs = null)
    {
        var cluster = Server.Cluster;
        var json = context.StartJson(status);
        json.WriteStartObject();
        json.WriteString("Name", name);
        json.WriteNumber("RaftCommandIndex", index);
        WriteTopology(json, nodes, promotables, rehabs);
        json.WriteStartArray("NodesAddedTo");
        foreach (var node in nodes)
        {
            json.WriteStringValue(cluster.IsClustered
                ? cluster.State.Members.GetValueOrDefault(node)
                : $"{context.Request.Scheme}://{context.Request.Host.Value}");
        }
        json.WriteEndArray();
        json.WriteEndObject();
        await context.CompleteJsonAsync().ConfigureAwait(false);
    }

    /// <summary>
    /// Waits (up to 30 s) until this node acted on the record as committed (its
    /// <c>TopologyEtag</c>): its copy is then the new database, not an older one of that name that a
    /// delete still queued was about to remove.
    /// </summary>
    private async ValueTask WaitForLocalAsync(Jackdaw.Server.Cluster.ClusterDatabaseRecord record, CancellationToken token)
    {
        await Server.Cluster.WaitForDatabasesAsync(record.TopologyEtag, TimeSpan.FromSeconds(30), token).ConfigureAwait(false);
    }

    /// <summary>After the leader created a database: waits (up to 30 s) until this node applied its record, and acted on it when the record names it.</summary>
    private async ValueTask WaitForCreatedAsync(int status, byte[] answer, CancellationToken token)
    {
        if (status != StatusCodes.Status201Created)
        {
            return;
        }
        string? name;
        try
        {
            using var json = System.Text.Json.JsonDocument.Parse(answer);
            name = StringProperty(json.RootElement, "Name");
        }
        catch (System.Text.Json.JsonException)
        {
            return;
        }
        if (name is null)
        {
            return;
        }
        var cluster = Server.Cluster;
        var deadline = DateTime.UtcNow + TimeSpan.FromSeconds(30);
        while (!cluster.State.Databases.ContainsKey(name) && DateTime.UtcNow < deadline)
        {
            await Task.Delay(10, token).ConfigureAwait(false);
        }
        if (cluster.State.Databases.TryGetValue(name, out var record) && record.Nodes.Contains(cluster.NodeTag))
        {
            await WaitForLocalAsync(record, token).ConfigureAwait(false);
        }
    }

    private static (string? Name, string? ReplicationFactor) CreateQuery(RequestContext context)
    {
        var query = new UrlQuery(context.Request.QueryString.Value);
        return (query.GetString("name"), query.GetString("replicationFactor"));
    }

    /// <summary>The nodes asked for: <c>replicationFactor</c> (query) or <c>Topology.ReplicationFactor</c>, and <c>Topology.Members</c>.</summary>
    private static (int? Factor, List<string>? Members) RequestedTopology(string? factorText, System.Text.Json.JsonElement record)
    {
        int? factor = factorText is { Length: > 0 } text
            ? (int.TryParse(text, System.Globalization.NumberStyles.None, System.Globalization.CultureInfo.InvariantCulture, out var parsed)
                ? parsed
                : throw new BadRequestException($"replicationFactor '{text}' is not a number of nodes."))
            : null;
        List<string>? members = null;
        if (record.ValueKind == System.Text.Json.JsonValueKind.Object && record.TryGetProperty("Topology", out var topology)
            && topology.ValueKind == System.Text.Json.JsonValueKind.Object)
        {
            if (factor is null && topology.TryGetProperty("ReplicationFactor", out var rf) && rf.ValueKind == System.Text.Json.JsonValueKind.Number && rf.TryGetInt32(out var n) && n > 0)
            {
                factor = n;
            }
            if (topology.TryGetProperty("Members", out var list) && list.ValueKind == System.Text.Json.JsonValueKind.Array)
            {
                members = [];
                foreach (var member in list.EnumerateArray())
                {
                    if (member.ValueKind != System.Text.Json.JsonValueKind.String || member.GetString() is not { Length: > 0 } tag)
                    {
                        throw new BadRequestException("'Topology.Members' must be an array of node tags, e.g. [\"A\",\"B\"].");
                    }
                    members.Add(tag);
                }
            }
        }
        return (factor, members);
    }

    /// <summary>The record's <c>Settings</c> (string values only), or null.</summary>
    private static Dictionary<string, string>? Settings(System.Text.Json.JsonElement record)
    {
        if (record.ValueKind != System.Text.Json.JsonValueKind.Object || !record.TryGetProperty("Settings", out var settings)
            || settings.ValueKind != System.Text.Json.JsonValueKind.Object)
        {
            return null;
        }
        var result = new Dictionary<string, string>(StringComparer.Ordinal);
        foreach (var setting in settings.EnumerateObject())
        {
            if (setting.Value.ValueKind == System.Text.Json.JsonValueKind.String)
            {
                result[setting.Name] = setting.Value.GetString()!;
            }
        }
        return result;
    }

    /// <summary>
    /// <c>DELETE /admin/databases?name=</c> (204), or RavenDB's body <c>{"DatabaseNames":[...],
    /// "FromNodes":[...]}</c> (200 <c>{"RaftCommandIndex","PendingDeletes":[nodes]}</c>); a missing
    /// database is a <c>DatabaseDoesNotExistException</c> and deletes nothing. In a cluster the
    /// records change (off <c>FromNodes</c> only, when given) and each node deletes its own copy.
    /// </summary>
    [Route("/admin/databases", "DELETE")]
    [Access(RouteAccess.Operator)]
    public async ValueTask Delete(RequestContext context)
    {
        if (await LeaderForwarding.ForwardedAsync(context).ConfigureAwait(false))
        {
            return;
        }
        var single = new UrlQuery(context.Request.QueryString.Value).GetString("name");
        if (Server.Cluster.IsClustered)
        {
            await DeleteInClusterAsync(context, single).ConfigureAwait(false);
            return;
        }
        if (single is not null)
        {
            if (!await Server.Databases.TryDeleteAsync(single).ConfigureAwait(false))
            {
                throw new DatabaseDoesNotExistException(single);
            }
            Server.Metrics.DatabaseDeleted(single);
            context.Response.StatusCode = StatusCodes.Status204NoContent;
            return;
        }

        var (names, _) = await ReadNamesAsync(context).ConfigureAwait(false);
        var known = Server.Databases.Names;
        foreach (var name in names)
        {
            if (!known.Contains(name, StringComparer.OrdinalIgnoreCase))
            {
                throw new DatabaseDoesNotExistException(name);
            }
        }
        foreach (var name in names)
        {
            await Server.Databases.TryDeleteAsync(name).ConfigureAwait(false);
            Server.Metrics.DatabaseDeleted(name);
        }
        var json = context.StartJson();
        json.WriteStartObject();
        json.WriteNumber("RaftCommandIndex", 0);
        json.WriteStartArray("PendingDeletes");
        json.WriteEndArray();
        json.WriteEndObject();
        await context.CompleteJsonAsync().ConfigureAwait(false);
    }

    private async ValueTask DeleteInClusterAsync(RequestContext context, string? single)
    {
        var cluster = Server.Cluster;
        var id = LeaderForwarding.CommandId(context);
        if (single is not null)
        {
            await cluster.DeleteDatabaseAsync(single, null, id, context.RequestAborted).ConfigureAwait(false);
            context.Response.StatusCode = StatusCodes.Status204NoContent;
            return;
        }
        var (names, fromNodes) = await ReadNamesAsync(context).ConfigureAwait(false);
        var state = cluster.State;
        foreach (var name in names)
        {
            if (!state.Databases.ContainsKey(name) && !state.WasApplied(id + "/" + name))
            {
                throw new DatabaseDoesNotExistException(name);
            }
        }
        long index = 0;
        var pending = new SortedSet<string>(StringComparer.Ordinal);
        foreach (var name in names)
        {
            if (state.Databases.TryGetValue(name, out var record))
            {
                pending.UnionWith(fromNodes ?? record.Nodes);
            }
            // One command per database, each with an id derived from the request's: a retry repeats none.
            index = await cluster.DeleteDatabaseAsync(name, fromNodes, id + "/" + name, context.RequestAborted).ConfigureAwait(false);
            Server.Metrics.DatabaseDeleted(name);
        }
        var json = context.StartJson();
        json.WriteStartObject();
        json.WriteNumber("RaftCommandIndex", index);
        json.WriteStartArray("PendingDeletes");
        foreach (var node in pending)
        {
            json.WriteStringValue(node);
        }
        json.WriteEndArray();
        json.WriteEndObject();
        await context.CompleteJsonAsync().ConfigureAwait(false);
    }

    /// <summary>A string property of a JSON object; null when it lacks it.</summary>
    private static string? StringProperty(System.Text.Json.JsonElement record, string property) =>
        record.ValueKind == System.Text.Json.JsonValueKind.Object
            && record.TryGetProperty(property, out var value) && value.ValueKind == System.Text.Json.JsonValueKind.String
            ? value.GetString()
            : null;

    /// <summary>RavenDB's delete body: <c>DatabaseNames</c>, and <c>FromNodes</c> (null: every node).</summary>
    private static async ValueTask<(List<string> Names, List<string>? FromNodes)> ReadNamesAsync(RequestContext context)
    {
        using var body = await ReadBodyAsync(context).ConfigureAwait(false);
        if (body is null || body.RootElement.ValueKind != System.Text.Json.JsonValueKind.Object
            || !body.RootElement.TryGetProperty("DatabaseNames", out var names) || names.ValueKind != System.Text.Json.JsonValueKind.Array)
        {
            throw new BadRequestException("Name the databases to delete: /admin/databases?name=Northwind, or a body {\"DatabaseNames\":[\"Northwind\"]}.");
        }
        var result = new List<string>();
        foreach (var name in names.EnumerateArray())
        {
            if (name.ValueKind != System.Text.Json.JsonValueKind.String || name.GetString() is not { Length: > 0 } text)
            {
                throw new BadRequestException("'DatabaseNames' must be an array of database names.");
            }
            result.Add(text);
        }
        List<string>? fromNodes = null;
        if (body.RootElement.TryGetProperty("FromNodes", out var from) && from.ValueKind == System.Text.Json.JsonValueKind.Array)
        {
            fromNodes = [];
            foreach (var node in from.EnumerateArray())
            {
                if (node.ValueKind != System.Text.Json.JsonValueKind.String || node.GetString() is not { Length: > 0 } tag)
                {
                    throw new BadRequestException("'FromNodes' must be an array of node tags, e.g. [\"B\"].");
                }
                fromNodes.Add(tag);
            }
            if (fromNodes.Count == 0)
            {
                fromNodes = null;
            }
        }
        return (result, fromNodes);
    }

    /// <summary>The request body as a JSON document (bounded by the server's body limit); null when empty.</summary>
    private static ValueTask<System.Text.Json.JsonDocument?> ReadBodyAsync(RequestContext context) =>
        DocumentBodies.ReadJsonAsync(context.Request.BodyReader, context.RequestAborted, allowEmpty: true);
}
