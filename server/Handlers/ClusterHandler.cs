using Jackdaw.Server.Errors;
using Jackdaw.Server.Hosting;
using Jackdaw.Server.Routing;
using Jackdaw.Server.Security;
using Jackdaw.Server.Wire;

namespace Jackdaw.Server.Handlers;

/// <summary>
/// The cluster's members, as RavenDB's clients and Studio change them: add a node, remove one,
/// make the leader step down. Each is done by the leader (a member that does not lead passes the
/// request on, <see cref="LeaderForwarding"/>).
/// </summary>
public sealed class ClusterHandler(ServerContext server) : HandlerBase(server)
{
    /// <summary>
    /// <c>PUT /admin/cluster/node?url=&amp;tag=</c>: adds the node at <c>url</c> (a fresh server
    /// started with <c>--Cluster:Passive=true</c> or <c>--Cluster:Join</c>) with <c>tag</c>, or the
    /// next free letter. A lone server becomes node A of a new cluster first. 200 with
    /// <c>{"Tag","Url"}</c>. <c>watcher=true</c> is refused: every node is a voting member.
    /// </summary>
    [Route("/admin/cluster/node", "PUT")]
    [Access(RouteAccess.ClusterAdmin)]
    public async ValueTask AddNode(RequestContext context)
    {
        if (await LeaderForwarding.ForwardedAsync(context).ConfigureAwait(false))
        {
            return;
        }
        var query = new UrlQuery(context.Request.QueryString.Value);
        var url = query.GetString("url")
            ?? throw new BadRequestException("Query parameter 'url' (the new node's address) is required: /admin/cluster/node?url=http://10.0.0.2:8080&tag=B.");
        if (string.Equals(query.GetString("watcher"), "true", StringComparison.OrdinalIgnoreCase))
        {
            throw new FeatureNotSupportedException("Watchers are not supported: every node of a Jackdaw cluster is a voting member. Add the node without watcher=true.");
        }
        var tag = query.GetString("tag") is { Length: > 0 } given ? given : null;
        var added = await Server.Cluster.AddNodeAsync(url, tag, LeaderForwarding.CommandId(context), context.RequestAborted).ConfigureAwait(false);
        var json = context.StartJson();
        json.WriteStartObject();
        json.WriteString("Tag", added);
        json.WriteString("Url", Server.Cluster.State.Members.GetValueOrDefault(added));
        json.WriteNumber("RaftCommandIndex", Server.Cluster.CommitIndex);
        json.WriteEndObject();
        await context.CompleteJsonAsync().ConfigureAwait(false);
    }

    /// <summary>
    /// <c>DELETE /admin/cluster/node?nodeTag=</c>: removes the member; its databases lose it, and it
    /// deletes its copies. 204. The leader cannot remove itself (step down first).
    /// </summary>
    [Route("/admin/cluster/node", "DELETE")]
    [Access(RouteAccess.ClusterAdmin)]
    public async ValueTask RemoveNode(RequestContext context)
    {
        if (await LeaderForwarding.ForwardedAsync(context).ConfigureAwait(false))
        {
            return;
        }
        var tag = new UrlQuery(context.Request.QueryString.Value).GetString("nodeTag")
            ?? throw new BadRequestException("Query parameter 'nodeTag' is required: /admin/cluster/node?nodeTag=B.");
        await Server.Cluster.RemoveNodeAsync(tag, LeaderForwarding.CommandId(context), context.RequestAborted).ConfigureAwait(false);
        context.Response.StatusCode = StatusCodes.Status204NoContent;
    }

    /// <summary><c>POST /admin/cluster/reelect</c>: the leader steps down and the nodes elect another (it may win again). 204.</summary>
    [Route("/admin/cluster/reelect", "POST")]
    [Access(RouteAccess.ClusterAdmin)]
    public async ValueTask Reelect(RequestContext context)
    {
        if (await LeaderForwarding.ForwardedAsync(context).ConfigureAwait(false))
        {
            return;
        }
        await Server.Cluster.ReelectAsync(context.RequestAborted).ConfigureAwait(false);
        context.Response.StatusCode = StatusCodes.Status204NoContent;
    }
}
