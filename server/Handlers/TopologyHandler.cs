using Jackdaw.Server.Errors;
using Jackdaw.Server.Hosting;
using Jackdaw.Server.Wire;
using Jackdaw.Server.Routing;
using Jackdaw.Server.Security;

namespace Jackdaw.Server.Handlers;

/// <summary>
/// The topology RavenDB's clients ask for before anything else: one node, this server, as the URL
/// the client reached it by (tag <c>A</c>, role <c>Member</c>). Jackdaw is a single node.
/// </summary>
public sealed class TopologyHandler(ServerContext server) : HandlerBase(server)
{
    /// <summary>
    /// <c>GET /topology?name={db}</c>: the database's nodes; 503 <c>DatabaseDoesNotExistException</c>
    /// (with <c>Database-Missing</c>) when it does not exist; on a secured server, 403 for a caller
    /// with no access to it.
    /// </summary>
    [Route("/topology", "GET")]
    [Access(RouteAccess.ValidUser)]
    public ValueTask Database(RequestContext context)
    {
        var name = new UrlQuery(context.Request.QueryString.Value).GetString("name");
        if (string.IsNullOrEmpty(name))
            throw new BadRequestException("Query parameter 'name' (the database) is required, e.g. /topology?name=Northwind.");
        // As RavenDB: a caller without access to the database is refused, not told where it lives.
        if (context.Caller is { } caller && Authorizer.Authorize(caller, RouteAccess.DatabaseRead, name) is { } denied)
            throw new AuthorizationException(denied.NotAuthenticated, denied.Message);
        // Opening it answers the question and surfaces a database that cannot open.
        var database = Server.Databases.GetDatabase(name);
        var json = context.StartJson();
        json.WriteStartObject();
        json.WriteNumber("Etag", 1);
        json.WriteStartArray("Nodes");
        json.WriteStartObject();
        json.WriteString("Url", BaseUrl(context));
        json.WriteString("ClusterTag", context.Server.NodeTag);
        json.WriteString("Database", database.Name);
        json.WriteString("ServerRole", "Member");
        json.WriteEndObject();
        json.WriteEndArray();
        json.WriteEndObject();
        return context.CompleteJsonAsync();
    }

    /// <summary><c>GET /cluster/topology</c>: a cluster of one member, this server.</summary>
    [Route("/cluster/topology", "GET")]
    [Access(RouteAccess.ValidUser)]
    public ValueTask Cluster(RequestContext context)
    {
        var json = context.StartJson();
        json.WriteStartObject();
        json.WriteStartObject("Topology");
        json.WriteStartObject("Members");
        json.WriteString(context.Server.NodeTag, BaseUrl(context));
        json.WriteEndObject();
        json.WriteStartObject("Promotables");
        json.WriteEndObject();
        json.WriteStartObject("Watchers");
        json.WriteEndObject();
        json.WriteEndObject();
        json.WriteNumber("Etag", 1);
        json.WriteString("Leader", context.Server.NodeTag);
        json.WriteString("NodeTag", context.Server.NodeTag);
        json.WriteStartObject("Status");
        json.WriteEndObject();
        json.WriteEndObject();
        return context.CompleteJsonAsync();
    }

    /// <summary>The URL the client reached this server by: what it must use for every later request.</summary>
    internal static string BaseUrl(RequestContext context) =>
        context.Server.Options.PublicUrl ?? $"{context.Request.Scheme}://{context.Request.Host.Value}";
}
