using System.Text.Json;
using Jackdaw.Server.Queries;
using Jackdaw.Server.Databases;
using Jackdaw.Server.Errors;
using Jackdaw.Server.Hosting;
using Jackdaw.Server.Indexing.Definitions;
using Jackdaw.Server.Indexing.Lucene;
using Jackdaw.Server.Wire;
using Jackdaw.Server.Indexing;
using Jackdaw.Server.Routing;
using Jackdaw.Server.Security;

namespace Jackdaw.Server.Handlers;

// The controls of running indexes (lock mode, priority, disable, stop, status, replace), apart from
// the definitions and their state in IndexesHandler.cs.
public sealed partial class IndexesHandler
{
    /// <summary>
    /// <c>POST /databases/*/indexes/set-lock</c> <c>{"IndexNames":[...],"Mode":"Unlock|LockedIgnore|LockedError"}</c>:
    /// how each index takes a changed definition (persisted). 204.
    /// </summary>
    [Route("/databases/*/indexes/set-lock", "POST")]
    [Access(RouteAccess.DatabaseReadWrite)]
    public async ValueTask SetLock(RequestContext context)
    {
        if (await SetClusteredAsync(context, "Mode", "{\"IndexNames\":[\"Orders/Totals\"],\"Mode\":\"LockedIgnore\"}",
            ParseLockMode,
            (cluster, database, names, mode, id) => cluster.SetIndexLockAsync(database, names, mode, id, context.RequestAborted)).ConfigureAwait(false))
        {
            return;
        }
        var database = Server.Databases.GetDatabase(context.GetCaptureMemory(0));
        var (names, value) = await ReadNamesAndValueAsync(context, "Mode", "{\"IndexNames\":[\"Orders/Totals\"],\"Mode\":\"LockedIgnore\"}").ConfigureAwait(false);
        var mode = ParseLockMode(value);
        var store = IndexStore.Of(database);
        foreach (var name in names)
        {
            await store.UpdateSettingsAsync(name, (_, record) => record with { LockMode = mode }).ConfigureAwait(false);
        }
        context.Response.StatusCode = StatusCodes.Status204NoContent;
    }

    /// <summary>
    /// <c>POST /databases/*/indexes/set-priority</c> <c>{"IndexNames":[...],"Priority":"Low|Normal|High"}</c>:
    /// how much of the indexing time each index gets (persisted). 204.
    /// </summary>
    [Route("/databases/*/indexes/set-priority", "POST")]
    [Access(RouteAccess.DatabaseReadWrite)]
    public async ValueTask SetPriority(RequestContext context)
    {
        if (await SetClusteredAsync(context, "Priority", "{\"IndexNames\":[\"Orders/Totals\"],\"Priority\":\"High\"}",
            ParsePriority,
            (cluster, database, names, priority, id) => cluster.SetIndexPriorityAsync(database, names, priority, id, context.RequestAborted)).ConfigureAwait(false))
        {
            return;
        }
        var database = Server.Databases.GetDatabase(context.GetCaptureMemory(0));
        var (names, value) = await ReadNamesAndValueAsync(context, "Priority", "{\"IndexNames\":[\"Orders/Totals\"],\"Priority\":\"High\"}").ConfigureAwait(false);
        var priority = ParsePriority(value);
        var store = IndexStore.Of(database);
        foreach (var name in names)
        {
            await store.UpdateSettingsAsync(name, (_, record) => record with { Priority = priority }).ConfigureAwait(false);
        }
        context.Response.StatusCode = StatusCodes.Status204NoContent;
    }

    /// <summary><c>POST /databases/*/indexes/disable?name=</c> (RavenDB: <c>/admin/indexes/disable</c>): the index stops indexing until enabled (persisted). 204.</summary>
    [Route("/databases/*/indexes/disable", "POST")]
    [Route("/databases/*/admin/indexes/disable", "POST")]
    // Admin under either path: RavenDB has it under /admin/ only, and an alias must not get around that.
    [Access(RouteAccess.DatabaseAdmin)]
    public ValueTask Disable(RequestContext context) => SetDisabledAsync(context, true);

    /// <summary><c>POST /databases/*/indexes/enable?name=</c> (RavenDB: <c>/admin/indexes/enable</c>). 204.</summary>
    [Route("/databases/*/indexes/enable", "POST")]
    [Route("/databases/*/admin/indexes/enable", "POST")]
    // Admin under either path: RavenDB has it under /admin/ only, and an alias must not get around that.
    [Access(RouteAccess.DatabaseAdmin)]
    public ValueTask Enable(RequestContext context) => SetDisabledAsync(context, false);

    private async ValueTask SetDisabledAsync(RequestContext context, bool disabled)
    {
        var (database, name) = Target(context, nameRequired: true);
        await IndexStore.Of(database).UpdateSettingsAsync(name!, (_, record) => record with { Disabled = disabled }).ConfigureAwait(false);
        context.Response.StatusCode = StatusCodes.Status204NoContent;
    }

    /// <summary><c>POST /databases/*/indexes/stop[?name=]</c> (RavenDB: <c>/admin/indexes/stop</c>): all indexing of the database, or of one index, pauses for this run of the database. 204.</summary>
    [Route("/databases/*/indexes/stop", "POST")]
    [Route("/databases/*/admin/indexes/stop", "POST")]
    // Admin under either path: RavenDB has it under /admin/ only, and an alias must not get around that.
    [Access(RouteAccess.DatabaseAdmin)]
    public ValueTask Stop(RequestContext context)
    {
        var (database, name) = Target(context, nameRequired: false);
        if (name is null)
        {
            IndexStore.Of(database).SetPaused(true);
        }
        else
        {
            IndexStore.Of(database).Get(name).Paused = true;
        }
        context.Response.StatusCode = StatusCodes.Status204NoContent;
        return ValueTask.CompletedTask;
    }

    /// <summary><c>POST /databases/*/indexes/start</c> (RavenDB: <c>/admin/indexes/start</c>). 204.</summary>
    [Route("/databases/*/indexes/start", "POST")]
    [Route("/databases/*/admin/indexes/start", "POST")]
    // Admin under either path: RavenDB has it under /admin/ only, and an alias must not get around that.
    [Access(RouteAccess.DatabaseAdmin)]
    public ValueTask Start(RequestContext context)
    {
        var (database, name) = Target(context, nameRequired: false);
        if (name is null)
        {
            IndexStore.Of(database).SetPaused(false);
        }
        else
        {
            IndexStore.Of(database).Get(name).Paused = false;
        }
        context.Response.StatusCode = StatusCodes.Status204NoContent;
        return ValueTask.CompletedTask;
    }

    private static string StatusOf(IndexStore store, Indexing.Index index) =>
        store.IsPaused || index.Paused ? "Paused" : index.Disabled ? "Disabled" : "Running";

    /// <summary><c>GET /databases/*/indexes/status</c> (RavenDB's indexing status): <c>{"Status":"Running|Paused","Indexes":[{"Name","Status"}]}</c>.</summary>
    [Route("/databases/*/indexes/status", "GET")]
    [Access(RouteAccess.DatabaseRead)]
    public async ValueTask Status(RequestContext context)
    {
        var database = Server.Databases.GetDatabase(context.GetCaptureMemory(0));
        var store = IndexStore.Of(database);
        var writer = context.StartJson();
        writer.WriteStartObject();
        writer.WriteString("Status", store.IsPaused ? "Paused" : "Running");
        writer.WriteStartArray("Indexes");
        foreach (var index in store.Indexes)
        {
            writer.WriteStartObject();
            writer.WriteString("Name", index.Name);
            writer.WriteString("Status", StatusOf(store, index));
            writer.WriteEndObject();
        }
        writer.WriteEndArray();
        writer.WriteEndObject();
        await context.CompleteJsonAsync().ConfigureAwait(false);
    }

    /// <summary><c>POST /databases/*/indexes/replace?name=</c>: swaps a replacement in now, caught up or not. 204; 404 when none builds.</summary>
    [Route("/databases/*/indexes/replace", "POST")]
    [Access(RouteAccess.DatabaseReadWrite)]
    public async ValueTask Replace(RequestContext context)
    {
        var (database, name) = Target(context, nameRequired: true);
        if (!await IndexStore.Of(database).SwapAsync(name!, onlyIfCaughtUp: false).ConfigureAwait(false))
        {
            throw new IndexDoesNotExistException(IndexStore.ReplacementName(name!));
        }
        context.Response.StatusCode = StatusCodes.Status204NoContent;
    }

    private static IndexLockMode ParseLockMode(string value) =>
        Enum.TryParse<IndexLockMode>(value, ignoreCase: true, out var mode) && Enum.IsDefined(mode)
            ? mode
            : throw new BadRequestException($"Mode '{value}' is not a lock mode: use Unlock, LockedIgnore or LockedError.");

    private static IndexPriority ParsePriority(string value) =>
        Enum.TryParse<IndexPriority>(value, ignoreCase: true, out var priority) && Enum.IsDefined(priority)
            ? priority
            : throw new BadRequestException($"Priority '{value}' is not a priority: use Low, Normal or High.");

    private static async Task<(List<string> Names, string Value)> ReadNamesAndValueAsync(RequestContext context, string valueName, string example)
    {
        using var json = await DocumentBodies.ReadJsonAsync(context.Request.BodyReader, context.RequestAborted).ConfigureAwait(false);
        return ParseNamesAndValue(json, valueName, example);
    }

    private static (List<string> Names, string Value) ParseNamesAndValue(JsonDocument? json, string valueName, string example)
    {
        var root = json?.RootElement ?? default;
        JsonElement names = default;
        JsonElement value = default;
        var valid = root.ValueKind == JsonValueKind.Object;
        if (valid)
        {
            foreach (var property in root.EnumerateObject())
            {
                if (property.NameEquals("IndexNames") || property.Name.Equals("IndexNames", StringComparison.OrdinalIgnoreCase))
                {
                    names = property.Value;
                }
                else if (property.Name.Equals(valueName, StringComparison.OrdinalIgnoreCase))
                {
                    value = property.Value;
                }
            }
        }
        if (!valid || names.ValueKind != JsonValueKind.Array || value.ValueKind != JsonValueKind.String || names.EnumerateArray().Any(n => n.ValueKind != JsonValueKind.String))
        {
            throw new BadRequestException($"The body must be {example}.");
        }
        return (names.EnumerateArray().Select(n => n.GetString()!).ToList(), value.GetString()!);
    }
}
