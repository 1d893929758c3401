using Jackdaw.Server.Hosting;
using Jackdaw.Server.Wire;
using Jackdaw.Server.Routing;
using Jackdaw.Server.Errors;
using Jackdaw.Server.Security;

namespace Jackdaw.Server.Handlers;

/// <summary><c>/admin/databases</c>: list, create and delete databases.</summary>
public sealed class DatabasesHandler(ServerContext server) : HandlerBase(server)
{
    [Route("/admin/databases", "GET")]
    [Access(RouteAccess.Operator)]
    public ValueTask List(RequestContext context)
    {
        // RavenDB's GetDatabaseRecordOperation asks this route with ?name=: a list would be read as a record.
        if (new UrlQuery(context.Request.QueryString.Value).GetString("name") is { } asked)
            throw new FeatureNotSupportedException($"Database records are not supported: Jackdaw keeps no record for '{asked}' beyond its name (see GET /databases/{asked}/stats).");
        var json = context.StartJson();
        json.WriteStartObject();
        json.WriteStartArray("Databases");
        foreach (var name in Server.Databases.Names)
            json.WriteStringValue(name);
        json.WriteEndArray();
        json.WriteEndObject();
        return context.CompleteJsonAsync();
    }

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
        foreach (var name in Server.Databases.Names.Where(name => caller is null || caller.CanSee(name)).Skip(start).Take(pageSize))
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
    /// <c>PUT /admin/databases?name=</c> (or RavenDB's body <c>{"DatabaseName":...}</c>): 201 with
    /// RavenDB's answer shape; 409 <c>DatabaseAlreadyExistsException</c> when it exists.
    /// </summary>
    [Route("/admin/databases", "PUT")]
    [Access(RouteAccess.Operator)]
    public async ValueTask Create(RequestContext context)
    {
        var name = new UrlQuery(context.Request.QueryString.Value).GetString("name")
            ?? await ReadStringPropertyAsync(context, "DatabaseName").ConfigureAwait(false)
            ?? throw new BadRequestException("The database name is required: /admin/databases?name=Northwind, or a body {\"DatabaseName\":\"Northwind\"}.");
        if (!Server.Databases.TryCreate(name))
            throw new DatabaseAlreadyExistsException(name);
        var json = context.StartJson(StatusCodes.Status201Created);
        json.WriteStartObject();
        json.WriteString("Name", name);
        json.WriteNumber("RaftCommandIndex", 0);
        json.WriteStartObject("Topology");
        json.WriteStartArray("Members");
        json.WriteStringValue(context.Server.NodeTag);
        json.WriteEndArray();
        json.WriteNumber("ReplicationFactor", 1);
        json.WriteEndObject();
        json.WriteStartArray("NodesAddedTo");
        json.WriteStringValue($"{context.Request.Scheme}://{context.Request.Host.Value}");
        json.WriteEndArray();
        json.WriteEndObject();
        await context.CompleteJsonAsync().ConfigureAwait(false);
    }

    /// <summary>
    /// <c>DELETE /admin/databases?name=</c> (204), or RavenDB's body <c>{"DatabaseNames":[...]}</c>
    /// (200 <c>{"RaftCommandIndex":0,"PendingDeletes":[]}</c>); a missing database is a
    /// <c>DatabaseDoesNotExistException</c> and deletes nothing.
    /// </summary>
    [Route("/admin/databases", "DELETE")]
    [Access(RouteAccess.Operator)]
    public async ValueTask Delete(RequestContext context)
    {
        var single = new UrlQuery(context.Request.QueryString.Value).GetString("name");
        if (single is not null)
        {
            if (!await Server.Databases.TryDeleteAsync(single).ConfigureAwait(false))
                throw new DatabaseDoesNotExistException(single);
            Server.Metrics.DatabaseDeleted(single);
            context.Response.StatusCode = StatusCodes.Status204NoContent;
            return;
        }

        var names = await ReadNamesAsync(context).ConfigureAwait(false);
        var known = Server.Databases.Names;
        foreach (var name in names)
        {
            if (!known.Contains(name, StringComparer.OrdinalIgnoreCase))
                throw new DatabaseDoesNotExistException(name);
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

    /// <summary>A string property of a small JSON body; null when the body is empty or lacks it.</summary>
    private static async ValueTask<string?> ReadStringPropertyAsync(RequestContext context, string property)
    {
        using var body = await ReadBodyAsync(context).ConfigureAwait(false);
        return body is not null && body.RootElement.ValueKind == System.Text.Json.JsonValueKind.Object
            && body.RootElement.TryGetProperty(property, out var value) && value.ValueKind == System.Text.Json.JsonValueKind.String
            ? value.GetString()
            : null;
    }

    private static async ValueTask<List<string>> ReadNamesAsync(RequestContext context)
    {
        using var body = await ReadBodyAsync(context).ConfigureAwait(false);
        if (body is null || body.RootElement.ValueKind != System.Text.Json.JsonValueKind.Object
            || !body.RootElement.TryGetProperty("DatabaseNames", out var names) || names.ValueKind != System.Text.Json.JsonValueKind.Array)
            throw new BadRequestException("Name the databases to delete: /admin/databases?name=Northwind, or a body {\"DatabaseNames\":[\"Northwind\"]}.");
        var result = new List<string>();
        foreach (var name in names.EnumerateArray())
        {
            if (name.ValueKind != System.Text.Json.JsonValueKind.String || name.GetString() is not { Length: > 0 } text)
                throw new BadRequestException("'DatabaseNames' must be an array of database names.");
            result.Add(text);
        }
        return result;
    }

    /// <summary>The request body as a JSON document (bounded by the server's body limit); null when empty.</summary>
    private static ValueTask<System.Text.Json.JsonDocument?> ReadBodyAsync(RequestContext context) =>
        DocumentBodies.ReadJsonAsync(context.Request.BodyReader, context.RequestAborted, allowEmpty: true);
}
