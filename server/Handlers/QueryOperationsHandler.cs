using System.Globalization;
using Jackdaw.Server.Databases;
using Jackdaw.Server.Errors;
using Jackdaw.Server.Hosting;
using Jackdaw.Server.Patching;
using Jackdaw.Server.Routing;
using Jackdaw.Server.Security;
using Jackdaw.Server.Wire;

namespace Jackdaw.Server.Handlers;

/// <summary>
/// <c>PATCH</c> and <c>DELETE /databases/*/queries</c>: patch and delete by query, RavenDB's
/// <c>PatchByQueryOperation</c> and <c>DeleteByQueryOperation</c>. Both answer at once with
/// <c>{"OperationId","OperationNodeTag"}</c>; the work goes on as an operation
/// (<see cref="ByQueryOperation"/>), followed at <c>operations/state</c> and killed at <c>operations/kill</c>.
/// </summary>
public sealed class QueryOperationsHandler(ServerContext server) : HandlerBase(server)
{
    /// <summary>Body <c>{"Query":{"Query":"from Orders where ... update { ... }","QueryParameters":{...}}}</c>.</summary>
    [Route("/databases/*/queries", "PATCH")]
    [Access(RouteAccess.DatabaseReadWrite)]
    public ValueTask Patch(RequestContext context) => StartAsync(context, delete: false);

    /// <summary>Body <c>{"Query":"from Orders where ...","QueryParameters":{...}}</c> (or wrapped as PATCH's).</summary>
    [Route("/databases/*/queries", "DELETE")]
    [Access(RouteAccess.DatabaseReadWrite)]
    public ValueTask Delete(RequestContext context) => StartAsync(context, delete: true);

    private async ValueTask StartAsync(RequestContext context, bool delete)
    {
        var database = Server.Databases.GetDatabase(context.GetCaptureMemory(0));
        var options = ReadOptions(context.Request.QueryString.Value);
        var request = await QueryRequestReader.ReadOperationAsync(context.Request.BodyReader, context.RequestAborted).ConfigureAwait(false);
        var operation = ByQueryOperation.Start(database, request, options, delete, ErrorMapping.FailureOf);
        await WriteOperationIdAsync(context, operation.Id).ConfigureAwait(false);
    }

    /// <summary>
    /// RavenDB's options: <c>allowStale</c>, <c>staleTimeout</c> (a time span), <c>maxOpsPerSec</c>
    /// (also <c>maxOpsPerSecond</c>), <c>details</c>. An empty value (the Node.js client's delete sends
    /// <c>allowStale=&amp;details=</c>) is false.
    /// </summary>
    private static QueryOperationOptions ReadOptions(string? queryString)
    {
        var query = new UrlQuery(queryString);
        TimeSpan? staleTimeout = null;
        if (query.GetString("staleTimeout") is { Length: > 0 } timeout)
        {
            staleTimeout = TimeSpan.TryParse(timeout, CultureInfo.InvariantCulture, out var parsed) && parsed >= TimeSpan.Zero
                ? parsed
                : throw new BadRequestException($"staleTimeout '{timeout}' is not a time span (e.g. 00:00:15).");
        }
        int? maxOps = null;
        if ((query.GetString("maxOpsPerSec") ?? query.GetString("maxOpsPerSecond")) is { Length: > 0 } max)
        {
            maxOps = int.TryParse(max, NumberStyles.None, CultureInfo.InvariantCulture, out var parsed) && parsed > 0
                ? parsed
                : throw new BadRequestException($"maxOpsPerSec '{max}' is not a whole number of at least 1.");
        }
        return new QueryOperationOptions(IsTrue(query.GetString("allowStale")), staleTimeout, maxOps, IsTrue(query.GetString("details")));
    }

    private static bool IsTrue(string? value) => string.Equals(value, "true", StringComparison.OrdinalIgnoreCase);
}
