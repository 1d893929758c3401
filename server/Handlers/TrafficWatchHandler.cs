using Jackdaw.Server.Databases;
using Jackdaw.Server.Errors;
using Jackdaw.Server.Hosting;
using Jackdaw.Server.Routing;
using Jackdaw.Server.Security;
using Jackdaw.Server.Traffic;
using Jackdaw.Server.Wire;

namespace Jackdaw.Server.Handlers;

/// <summary>
/// <c>GET /admin/traffic-watch[?resourceName={db}]</c> (WebSocket, RavenDB's route): one JSON
/// message per finished request (<see cref="TrafficWatchChange"/>), of every database or of the one
/// named. Operator clearance on a secured server: it shows every caller's requests.
/// </summary>
public sealed class TrafficWatchHandler(ServerContext server) : HandlerBase(server)
{
    [Route(TrafficWatch.Route, "GET")]
    [Access(RouteAccess.Operator)]
    public async ValueTask Watch(RequestContext context)
    {
        var database = ReadDatabase(context.Request.QueryString.Value);
        using var socket = await context.AcceptWebSocketAsync("connect with ws://.../admin/traffic-watch, or ws://.../admin/traffic-watch?resourceName={db} for one database's requests.").ConfigureAwait(false);
        using var connection = Server.TrafficWatch.Connect(database);
        await connection.Feed.RunAsync(socket, 1, static (writer, changes) => changes[0].WriteTo(writer), Server.Options.Limits.MaxWebSocketMessageSize, context.RequestAborted).ConfigureAwait(false);
    }

    /// <summary>The database of <c>resourceName</c> (null when absent or empty: every request).</summary>
    /// <exception cref="BadRequestException">An unknown parameter, or a name no database can have.</exception>
    private static string? ReadDatabase(string? queryString)
    {
        string? database = null;
        foreach (var parameter in new UrlQuery(queryString))
        {
            if (!parameter.NameEquals("resourceName"))
            {
                throw new BadRequestException($"'{UrlQuery.Decode(parameter.RawName, "parameter")}' is not a parameter of /admin/traffic-watch; it takes resourceName (a database's name) only.");
            }
            database = UrlQuery.Decode(parameter.RawValue, "resourceName");
        }
        if (string.IsNullOrEmpty(database))
        {
            return null;
        }
        if (DatabaseNames.Validate(database) is { } problem)
        {
            throw new BadRequestException($"resourceName '{database}' is not a database name: {problem}");
        }
        return database;
    }
}
