using Jackdaw.Server.Databases;
using Jackdaw.Server.Hosting;
using Jackdaw.Server.Routing;
using Jackdaw.Server.Security;
using Jackdaw.Server.Wire;

namespace Jackdaw.Server.Handlers;

/// <summary>
/// The server's own operations (restores, verifications), with RavenDB's server-level routes:
/// what its clients' <c>ServerWideOperationCompletionAwaiter</c> asks. The same shapes as a
/// database's (<see cref="OperationsHandler"/>).
/// </summary>
public sealed class ServerOperationsHandler(ServerContext server) : HandlerBase(server)
{
    /// <summary><c>GET /operations/next-operation-id</c> → <c>{"Id":n,"NodeTag":"A"}</c>: this node's tag (the server's operations are its own).</summary>
    [Route("/operations/next-operation-id", "GET")]
    [Access(RouteAccess.Operator)]
    public ValueTask NextId(RequestContext context)
    {
        var json = context.StartJson();
        json.WriteStartObject();
        json.WriteNumber("Id", Server.Operations.NextId());
        json.WriteString("NodeTag", Server.Cluster.NodeTag);
        json.WriteEndObject();
        return context.CompleteJsonAsync();
    }

    /// <summary><c>GET /operations/state?id=</c> → RavenDB's <c>OperationState</c>; 404 for an unknown id.</summary>
    [Route("/operations/state", "GET")]
    [Access(RouteAccess.Operator)]
    public ValueTask State(RequestContext context)
    {
        var id = new UrlQuery(context.Request.QueryString.Value).GetInt64("id", 0, min: 1);
        if (!Server.Operations.TryGet(id, out var operation))
        {
            context.Response.StatusCode = StatusCodes.Status404NotFound;
            context.Response.ContentLength = 0;
            return ValueTask.CompletedTask;
        }
        OperationStateJson.WriteState(context.StartJson(), operation.State);
        return context.CompleteJsonAsync();
    }

    /// <summary><c>POST /admin/operations/kill?id=</c> (RavenDB's <c>KillServerOperationCommand</c>): cancels a running operation (204).</summary>
    [Route("/admin/operations/kill", "POST")]
    [Access(RouteAccess.Operator)]
    public ValueTask Kill(RequestContext context)
    {
        var id = new UrlQuery(context.Request.QueryString.Value).GetInt64("id", 0, min: 1);
        if (Server.Operations.TryGet(id, out var operation))
        {
            operation.Kill();
        }
        context.Response.StatusCode = StatusCodes.Status204NoContent;
        return ValueTask.CompletedTask;
    }
}
