using Jackdaw.Server.Databases;
using Jackdaw.Server.Hosting;
using Jackdaw.Server.Wire;
using Jackdaw.Server.Routing;
using Jackdaw.Server.Security;

namespace Jackdaw.Server.Handlers;

/// <summary><c>/databases/*/operations</c>: ids and states of long-running operations (bulk inserts), as RavenDB's clients follow them.</summary>
public sealed class OperationsHandler(ServerContext server) : HandlerBase(server)
{
    /// <summary><c>GET /databases/*/operations/next-operation-id</c> → <c>{"Id":n,"NodeTag":"A"}</c>.</summary>
    [Route("/databases/*/operations/next-operation-id", "GET")]
    [Access(RouteAccess.DatabaseRead)]
    public ValueTask NextId(RequestContext context)
    {
        var database = Server.Databases.GetDatabase(context.GetCaptureMemory(0));
        var json = context.StartJson();
        json.WriteStartObject();
        json.WriteNumber("Id", database.Operations.NextId());
        json.WriteString("NodeTag", context.Server.NodeTag);
        json.WriteEndObject();
        return context.CompleteJsonAsync();
    }

    /// <summary>
    /// <c>GET /databases/*/operations/state?id=</c> → RavenDB's <c>OperationState</c>
    /// (<see cref="OperationStateJson"/>): <c>{"Progress":{...},"Result":null,"Status":"InProgress"}</c> while
    /// it runs, then <c>"Completed"</c>, <c>"Faulted"</c> or <c>"Canceled"</c> with its <c>Result</c>;
    /// 404 for an id that was never started (or is long gone).
    /// </summary>
    [Route("/databases/*/operations/state", "GET")]
    [Access(RouteAccess.DatabaseRead)]
    public ValueTask State(RequestContext context)
    {
        var database = Server.Databases.GetDatabase(context.GetCaptureMemory(0));
        var id = new UrlQuery(context.Request.QueryString.Value).GetInt64("id", 0, min: 1);
        if (!database.Operations.TryGet(id, out var operation))
        {
            context.Response.StatusCode = StatusCodes.Status404NotFound;
            context.Response.ContentLength = 0;
            return ValueTask.CompletedTask;
        }
        OperationStateJson.WriteState(context.StartJson(), operation.State);
        return context.CompleteJsonAsync();
    }

    /// <summary><c>POST /databases/*/operations/kill?id=</c>: cancels a running operation (204).</summary>
    [Route("/databases/*/operations/kill", "POST")]
    [Access(RouteAccess.DatabaseReadWrite)]
    public ValueTask Kill(RequestContext context)
    {
        var database = Server.Databases.GetDatabase(context.GetCaptureMemory(0));
        var id = new UrlQuery(context.Request.QueryString.Value).GetInt64("id", 0, min: 1);
        if (database.Operations.TryGet(id, out var operation))
        {
            operation.Kill();
        }
        context.Response.StatusCode = StatusCodes.Status204NoContent;
        return ValueTask.CompletedTask;
    }
}
