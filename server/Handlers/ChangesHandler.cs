using System.Globalization;
using System.Text.Json;
using Jackdaw.Server.Changes;
using Jackdaw.Server.Errors;
using Jackdaw.Server.Hosting;
using Jackdaw.Server.Wire;
using Jackdaw.Server.Routing;
using Jackdaw.Server.Security;

namespace Jackdaw.Server.Handlers;

/// <summary>
/// The changes feed's routes (the protocols themselves are in <c>server/Changes</c>): RavenDB's
/// WebSocket, server-sent events for curl and browsers, the open connections, and closing one.
/// </summary>
public sealed class ChangesHandler(ServerContext server) : HandlerBase(server)
{
    /// <summary>
    /// <c>GET /databases/{db}/changes</c> (WebSocket, as RavenDB's clients connect): commands such
    /// as <c>{"CommandId":1,"Command":"watch-doc","Param":"orders/1"}</c> in, JSON arrays of
    /// <c>Confirm</c>, <c>DocumentChange</c>, <c>IndexChange</c>, <c>OperationStatusChange</c> and <c>Error</c> messages out.
    /// </summary>
    [Route("/databases/*/changes", "GET")]
    [Access(RouteAccess.DatabaseRead)]
    public async ValueTask Connect(RequestContext context)
    {
        var database = Server.Databases.GetDatabase(context.GetCaptureMemory(0));
        using var socket = await context.AcceptWebSocketAsync("connect with ws://.../databases/{db}/changes, or read server-sent events from /databases/{db}/changes/events?collection=Orders.").ConfigureAwait(false);
        using var connection = ChangesFeed.For(database, Server.Options.Changes).Connect(ChangesProtocol.WebSocket);
        await ChangesWebSocketSession.RunAsync(connection, socket, ServerStopping(context)).ConfigureAwait(false);
    }

    /// <summary>
    /// <c>GET /databases/{db}/changes/events[?collection=&amp;id=&amp;prefix=&amp;operation=&amp;operations=true]</c>:
    /// the document changes of the filter (every document when no parameter names documents or
    /// operations; parameters may repeat and add up) as <c>text/event-stream</c>, each event's id
    /// its etag, and the status changes of the operations named (or all), as events named
    /// <c>OperationStatusChange</c>. <c>Last-Event-ID</c> (the header, or <c>?lastEventId=</c>)
    /// resumes after that etag.
    /// </summary>
    [Route("/databases/*/changes/events", "GET")]
    [Access(RouteAccess.DatabaseRead)]
    public async ValueTask Events(RequestContext context)
    {
        // Inside a multi_get the stream would never end and its events would pile up in the item's buffer.
        if (context.IsInnerRequest)
        {
            throw new BadRequestException("An event stream never ends, so it cannot be an item of a multi_get: open /databases/{db}/changes/events as a request of its own.");
        }
        var database = Server.Databases.GetDatabase(context.GetCaptureMemory(0));
        var filter = WatchSet.Empty;
        string? lastEventId = context.Request.Headers["Last-Event-ID"];
        foreach (var parameter in new UrlQuery(context.Request.QueryString.Value))
        {
            if (parameter.NameEquals("collection"))
            {
                filter = filter.WithCollection(Required(parameter, "collection"), true);
            }
            else if (parameter.NameEquals("id"))
            {
                filter = filter.WithDocument(Required(parameter, "id"), true);
            }
            else if (parameter.NameEquals("prefix"))
            {
                filter = filter.WithPrefix(Required(parameter, "prefix"), true);
            }
            else if (parameter.NameEquals("operation"))
            {
                filter = filter.WithOperation(OperationId(Required(parameter, "operation")), true);
            }
            else if (parameter.NameEquals("operations"))
            {
                filter = filter.WithAllOperations(Flag(Required(parameter, "operations"), "operations"));
            }
            else if (parameter.NameEquals("lastEventId") && string.IsNullOrEmpty(lastEventId))
            {
                lastEventId = UrlQuery.Decode(parameter.RawValue, "lastEventId");
            }
        }
        if (!filter.WatchesDocuments && !filter.WatchesOperations)
        {
            filter = filter.WithAllDocuments(true);
        }
        long? after = null;
        if (!string.IsNullOrWhiteSpace(lastEventId))
        {
            if (!long.TryParse(lastEventId.Trim(), NumberStyles.None, CultureInfo.InvariantCulture, out var etag))
            {
                throw new BadRequestException($"Last-Event-ID '{lastEventId}' is not an etag: resume with the id of the last event received (a number).");
            }
            after = etag;
        }

        using var connection = ChangesFeed.For(database, Server.Options.Changes).Connect(ChangesProtocol.EventStream, filter);
        var response = context.Response;
        response.StatusCode = StatusCodes.Status200OK;
        response.ContentType = "text/event-stream; charset=utf-8";
        response.Headers.CacheControl = "no-cache";
        // Proxies (nginx) would otherwise hold events back to fill a buffer.
        response.Headers["X-Accel-Buffering"] = "no";
        await ChangesEventStream.RunAsync(connection, response.BodyWriter, after, context.RequestAborted, ServerStopping(context)).ConfigureAwait(false);
    }

    /// <summary><c>GET /databases/{db}/changes/debug</c>: the open connections, what each watches and how far behind it is.</summary>
    [Route("/databases/*/changes/debug", "GET")]
    [Access(RouteAccess.DatabaseRead)]
    public ValueTask Debug(RequestContext context)
    {
        var database = Server.Databases.GetDatabase(context.GetCaptureMemory(0));
        var json = context.StartJson();
        json.WriteStartObject();
        json.WriteStartArray("Connections");
        foreach (var connection in ChangesFeed.For(database, Server.Options.Changes).Connections)
        {
            WriteConnection(json, connection);
        }
        json.WriteEndArray();
        json.WriteEndObject();
        return context.CompleteJsonAsync();
    }

    /// <summary><c>DELETE /databases/{db}/changes?id=</c>: closes that connection (its client reconnects); 404 when there is none.</summary>
    [Route("/databases/*/changes", "DELETE")]
    [Access(RouteAccess.DatabaseReadWrite)]
    public ValueTask Drop(RequestContext context)
    {
        var database = Server.Databases.GetDatabase(context.GetCaptureMemory(0));
        var text = new UrlQuery(context.Request.QueryString.Value).GetString("id");
        if (!long.TryParse(text, NumberStyles.None, CultureInfo.InvariantCulture, out var id))
        {
            throw new BadRequestException("Query parameter 'id' is required: the connection's id, as GET /databases/{db}/changes/debug lists them.");
        }
        context.Response.StatusCode = ChangesFeed.For(database, Server.Options.Changes).Drop(id) ? StatusCodes.Status204NoContent : StatusCodes.Status404NotFound;
        return ValueTask.CompletedTask;
    }

    private static void WriteConnection(Utf8JsonWriter json, ChangesConnection connection)
    {
        var watches = connection.Watches;
        json.WriteStartObject();
        json.WriteNumber("Id", connection.Id);
        json.WriteString("Protocol", connection.Protocol.ToString());
        json.WriteString("ConnectedAt", JsonDefaults.FormatTime(connection.ConnectedAt));
        json.WriteNumber("PendingMessages", connection.Pending);
        json.WriteNumber("QueueCapacity", connection.Capacity);
        json.WriteNumber("SentMessages", connection.Sent);
        json.WriteString("CloseReason", connection.CloseReason.ToString());
        json.WriteBoolean("WatchAllDocuments", watches.AllDocuments);
        WriteNames(json, "WatchDocuments", watches.Documents);
        WriteNames(json, "WatchPrefixes", watches.Prefixes);
        WriteNames(json, "WatchCollections", watches.Collections);
        json.WriteBoolean("WatchAllIndexes", watches.AllIndexes);
        WriteNames(json, "WatchIndexes", watches.Indexes);
        json.WriteBoolean("WatchAllOperations", watches.AllOperations);
        json.WriteStartArray("WatchOperations");
        foreach (var operation in watches.Operations.Order())
        {
            json.WriteNumberValue(operation);
        }
        json.WriteEndArray();
        json.WriteEndObject();
    }

    private static void WriteNames(Utf8JsonWriter json, string name, IEnumerable<string> values)
    {
        json.WriteStartArray(name);
        foreach (var value in values.Order(StringComparer.OrdinalIgnoreCase))
        {
            json.WriteStringValue(value);
        }
        json.WriteEndArray();
    }

    private static string Required(UrlQuery.Parameter parameter, string name)
    {
        if (parameter.RawValue.IsEmpty)
        {
            throw new BadRequestException($"Query parameter '{name}' is empty: give a value, e.g. ?collection=Orders, ?id=orders/1 or ?prefix=orders/.");
        }
        return UrlQuery.Decode(parameter.RawValue, name);
    }

    private static long OperationId(string text) =>
        long.TryParse(text, NumberStyles.None, CultureInfo.InvariantCulture, out var id)
            ? id
            : throw new BadRequestException($"Query parameter 'operation' is '{text}': give an operation id, a whole number as operations/next-operation-id gave it (or ?operations=true for all).");

    private static bool Flag(string text, string name) =>
        bool.TryParse(text, out var on)
            ? on
            : throw new BadRequestException($"Query parameter '{name}' is '{text}'; it is true or false.");

    private static CancellationToken ServerStopping(RequestContext context) =>
        context.HttpContext.RequestServices.GetRequiredService<IHostApplicationLifetime>().ApplicationStopping;
}
