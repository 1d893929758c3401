using Jackdaw.Server.Errors;
using Jackdaw.Server.Hosting;
using Jackdaw.Server.Wire;
using Jackdaw.Server.Routing;
using Jackdaw.Server.Security;

namespace Jackdaw.Server.Handlers;

/// <summary>
/// The topologies RavenDB's clients ask for before anything else: a database's nodes
/// (<c>/topology</c>) and the cluster's members (<c>/cluster/topology</c>), from the cluster's
/// committed state. A lone server (never in a cluster) is one node, tag A, at the URL the client
/// reached it by.
/// </summary>
public sealed class TopologyHandler(ServerContext server) : HandlerBase(server)
{
    /// <summary>
    /// <c>GET /topology?name={db}</c>: the database's member nodes (<c>Url</c>, <c>ClusterTag</c>,
    /// <c>Database</c>, <c>ServerRole</c>; not its promotables) and an <c>Etag</c> that changes whenever they do; 503
    /// <c>DatabaseDoesNotExistException</c> (with <c>Database-Missing</c>) when it does not exist; on
    /// a secured server, 403 for a caller with no access to it.
    /// </summary>
    [Route("/topology", "GET")]
    [Access(RouteAccess.ValidUser)]
    public ValueTask Database(RequestContext context)
    {
        var name = new UrlQuery(context.Request.QueryString.Value).GetString("name");
        if (string.IsNullOrEmpty(name))
        {
            throw new BadRequestException("Query parameter 'name' (the database) is required, e.g. /topology?name=Northwind.");
        }
        // As RavenDB: a caller without access to the database is refused, not told where it lives.
        if (context.Caller is { } caller && Authorizer.Authorize(caller, RouteAccess.DatabaseRead, name) is { } denied)
        {
            throw new AuthorizationException(denied.NotAuthenticated, denied.Message);
        }
        var cluster = Server.Cluster;
        var json = context.StartJson();
        if (cluster.IsClustered)
        {
            var state = cluster.State;
            if (!state.Databases.TryGetValue(name, out var record))
            {
                throw new DatabaseDoesNotExistException(name);
            }
            json.WriteStartObject();
            json.WriteNumber("Etag", record.TopologyEtag);
            json.WriteStartArray("Nodes");
            // Members only: a promotable is still catching up, and would answer with documents missing.
            foreach (var tag in record.Members)
            {
                if (state.Members.TryGetValue(tag, out var url))
                {
                    WriteNode(json, tag == cluster.NodeTag && Server.Options.PublicUrl is { } publicUrl ? publicUrl : url, tag, record.Name);
                }
            }
            json.WriteEndArray();
            json.WriteEndObject();
            return context.CompleteJsonAsync();
        }
        // Opening it answers the question and surfaces a database that cannot open.
        var database = Server.Databases.GetDatabase(name);
        json.WriteStartObject();
        json.WriteNumber("Etag", 1);
        json.WriteStartArray("Nodes");
        WriteNode(json, BaseUrl(context), cluster.NodeTag, database.Name);
        json.WriteEndArray();
        json.WriteEndObject();
        return context.CompleteJsonAsync();
    }

    private static void WriteNode(System.Text.Json.Utf8JsonWriter json, string url, string tag, string database)
    {
        json.WriteStartObject();
        json.WriteString("Url", url);
        json.WriteString("ClusterTag", tag);
        json.WriteString("Database", database);
        json.WriteString("ServerRole", "Member");
        json.WriteEndObject();
    }

    /// <summary>
    /// <c>GET /cluster/topology</c>: <c>Topology</c> (<c>Members</c> by tag → URL,
    /// <c>Promotables</c> the nodes being added, empty <c>Watchers</c>), <c>Leader</c>, this node's <c>NodeTag</c> (<c>?</c>
    /// while it waits to be added), <c>ServerRole</c>, <c>Etag</c> and, on the leader, <c>Status</c>
    /// (whether each other member answers).
    /// </summary>
    [Route("/cluster/topology", "GET")]
    [Access(RouteAccess.ValidUser)]
    public ValueTask Cluster(RequestContext context)
    {
        var cluster = Server.Cluster;
        var state = cluster.State;
        var json = context.StartJson();
        json.WriteStartObject();
        json.WriteStartObject("Topology");
        json.WriteString("TopologyId", cluster.IsClustered ? "jackdaw" : null);
        json.WriteStartObject("Members");
        if (cluster.IsClustered)
        {
            foreach (var (tag, url) in state.Members)
            {
                json.WriteString(tag, url);
            }
        }
        else if (!cluster.IsPassive)
        {
            json.WriteString(cluster.NodeTag, BaseUrl(context));
        }
        json.WriteEndObject();
        json.WriteStartObject("Promotables");
        // Nodes being added (reserved, not yet members): RavenDB's promotables.
        foreach (var (tag, url) in state.Joining)
        {
            json.WriteString(tag, url);
        }
        json.WriteEndObject();
        json.WriteStartObject("Watchers");
        json.WriteEndObject();
        json.WriteNumber("Etag", state.Etag);
        json.WriteEndObject();
        json.WriteNumber("Etag", cluster.IsClustered ? state.Etag : 1);
        if (cluster.Leader is var (leaderTag, _))
        {
            json.WriteString("Leader", leaderTag);
        }
        else
        {
            json.WriteNull("Leader");
        }
        json.WriteString("NodeTag", cluster.NodeTag);
        // The URL this node knows itself by: a leader adding it checks that it was given this one.
        json.WriteString("NodeUrl", cluster.Url);
        json.WriteString("ServerRole", cluster.IsPassive ? "Passive" : cluster.IsLeader ? "Leader" : "Member");
        json.WriteStartObject("Status");
        foreach (var (tag, connected) in cluster.MemberStatus)
        {
            json.WriteStartObject(tag);
            json.WriteString("Name", tag);
            json.WriteBoolean("Connected", connected);
            json.WriteEndObject();
        }
        json.WriteEndObject();
        json.WriteEndObject();
        return context.CompleteJsonAsync();
    }

    /// <summary>The URL the client reached this server by: what it must use for every later request.</summary>
    internal static string BaseUrl(RequestContext context) =>
        context.Server.Options.PublicUrl ?? $"{context.Request.Scheme}://{context.Request.Host.Value}";
}
