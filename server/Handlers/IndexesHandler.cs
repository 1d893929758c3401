using System.Globalization;
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

/// <summary>
/// Index definitions and their state, with RavenDB's routes and shapes: <c>PUT /admin/indexes</c>,
/// <c>GET/DELETE/RESET /indexes</c>, <c>/indexes/stats</c>, <c>/indexes/errors</c>, <c>/indexes/staleness</c>.
/// </summary>
public sealed partial class IndexesHandler(ServerContext server) : HandlerBase(server)
{
    /// <summary><c>PUT /databases/*/admin/indexes</c> <c>{"Indexes":[{"Name","Maps":[...],"Fields":{...}}]}</c> → 201 <c>{"Results":[{"Index":name}]}</c>.</summary>
    [Route("/databases/*/admin/indexes", "PUT")]
    [Route("/databases/*/indexes", "PUT")]
    [Access(RouteAccess.DatabaseAdmin, Template = "/databases/*/admin/indexes")]
    [Access(RouteAccess.DatabaseReadWrite, Template = "/databases/*/indexes")]
    public async ValueTask Put(RequestContext context)
    {
        var name = context.GetCaptureMemory(0).ToString();
        // A clustered database's indexes are in its record (IndexesHandler.Cluster.cs).
        if (Server.Cluster.RecordOf(name) is not null)
        {
            await PutClusteredAsync(context, name).ConfigureAwait(false);
            return;
        }
        var database = Server.Databases.GetDatabase(name);
        var (definitions, settings) = ParsePut(await ReadBodyAsync(context).ConfigureAwait(false));
        var store = IndexStore.Of(database);
        await store.PutAsync(definitions).ConfigureAwait(false);
        for (var i = 0; i < definitions.Count; i++)
        {
            var (lockMode, priority) = settings[i];
            if (lockMode is null && priority is null)
            {
                continue;
            }
            await store.UpdateSettingsAsync(definitions[i].Name, (_, record) => record with
            {
                LockMode = lockMode ?? record.LockMode,
                Priority = priority ?? record.Priority,
            }).ConfigureAwait(false);
        }

        await WritePutAnswerAsync(context, definitions, database.LastEtag).ConfigureAwait(false);
    }

    /// <summary>RavenDB's <c>PutIndexesResponse</c>: <c>{"Results":[{"Index","RaftCommandIndex"}]}</c>, 201.</summary>
    private static async ValueTask WritePutAnswerAsync(RequestContext context, List<IndexDefinition> definitions, long raftCommandIndex)
    {
        var writer = context.StartJson(StatusCodes.Status201Created);
        writer.WriteStartObject();
        writer.WriteStartArray("Results");
        foreach (var definition in definitions)
        {
            writer.WriteStartObject();
            writer.WriteString("Index", definition.Name);
            writer.WriteNumber("RaftCommandIndex", raftCommandIndex);
            writer.WriteEndObject();
        }
        writer.WriteEndArray();
        writer.WriteEndObject();
        await context.CompleteJsonAsync().ConfigureAwait(false);
    }

    /// <summary>The definitions of a PUT's body, each with the lock mode and priority it sets (as RavenDB: a definition may carry them).</summary>
    private static (List<IndexDefinition> Definitions, List<(IndexLockMode? LockMode, IndexPriority? Priority)> Settings) ParsePut(byte[] body)
    {
        var definitions = new List<IndexDefinition>();
        var settings = new List<(IndexLockMode? LockMode, IndexPriority? Priority)>();
        JsonDocument? json = null;
        try
        {
            json = JsonDocument.Parse(body);
            if (json is null || json.RootElement.ValueKind != JsonValueKind.Object || !json.RootElement.TryGetProperty("Indexes", out var indexes) || indexes.ValueKind != JsonValueKind.Array)
            {
                throw new BadRequestException("The body must be {\"Indexes\":[{\"Name\":\"Orders/Totals\",\"Maps\":[\"map('Orders', o => ({ Company: o.Company }))\"]}]}.");
            }
            foreach (var definition in indexes.EnumerateArray())
            {
                definitions.Add(IndexDefinition.FromJson(definition));
                IndexLockMode? lockMode = definition.TryGetProperty("LockMode", out var l) && l.ValueKind == JsonValueKind.String ? ParseLockMode(l.GetString()!) : null;
                IndexPriority? priority = definition.TryGetProperty("Priority", out var p) && p.ValueKind == JsonValueKind.String ? ParsePriority(p.GetString()!) : null;
                settings.Add((lockMode, priority));
            }
        }
        finally
        {
            json?.Dispose();
        }
        if (definitions.Count == 0)
        {
            throw new BadRequestException("\"Indexes\" is empty: give at least one definition.");
        }
        var duplicate = definitions.GroupBy(d => d.Name, StringComparer.OrdinalIgnoreCase).FirstOrDefault(g => g.Count() > 1);
        if (duplicate is not null)
        {
            throw new BadRequestException($"The index '{duplicate.Key}' is defined more than once in this request.");
        }
        return (definitions, settings);
    }

    /// <summary>
    /// <c>GET /databases/*/indexes[?name=][&amp;start=&amp;pageSize=][&amp;namesOnly=true]</c>: definitions,
    /// <c>{"Results":[...]}</c>, in name order; with <c>namesOnly</c> the names alone (RavenDB's GetIndexNamesOperation).
    /// </summary>
    [Route("/databases/*/indexes", "GET")]
    [Access(RouteAccess.DatabaseRead)]
    public async ValueTask Get(RequestContext context)
    {
        var (database, name) = Target(context, nameRequired: false);
        var query = new UrlQuery(context.Request.QueryString.Value);
        var start = query.GetInt32("start", 0);
        var pageSize = query.GetInt32("pageSize", int.MaxValue, min: 0);
        var namesOnly = query.GetString("namesOnly") switch
        {
            null => false,
            var value when value.Equals("true", StringComparison.OrdinalIgnoreCase) => true,
            var value when value.Equals("false", StringComparison.OrdinalIgnoreCase) => false,
            var value => throw new BadRequestException($"Query parameter 'namesOnly' is '{value}'; it is true or false."),
        };
        var store = IndexStore.Of(database);
        var indexes = name is null ? store.Indexes.Skip(start).Take(pageSize) : [store.Get(name)];
        var writer = context.StartJson();
        writer.WriteStartObject();
        writer.WriteStartArray("Results");
        foreach (var index in indexes)
        {
            if (namesOnly)
            {
                writer.WriteStringValue(index.Name);
                continue;
            }
            var json = index.Definition.ToJson();
            json["LockMode"] = index.LockMode.ToString();
            json["Priority"] = index.Priority.ToString();
            json["State"] = index.State.ToString();
            json.WriteTo(writer);
        }
        writer.WriteEndArray();
        writer.WriteEndObject();
        await context.CompleteJsonAsync().ConfigureAwait(false);
    }

    /// <summary><c>DELETE /databases/*/indexes?name=</c>: the definition, then the files (204).</summary>
    [Route("/databases/*/indexes", "DELETE")]
    [Access(RouteAccess.DatabaseReadWrite)]
    public async ValueTask Delete(RequestContext context)
    {
        if (await DeleteClusteredAsync(context).ConfigureAwait(false))
        {
            return;
        }
        var (database, name) = Target(context, nameRequired: true);
        await IndexStore.Of(database).DeleteAsync(name!, respectLock: true).ConfigureAwait(false);
        context.Response.StatusCode = StatusCodes.Status204NoContent;
    }

    /// <summary><c>RESET /databases/*/indexes?name=</c> (RavenDB's verb) or <c>POST /indexes/reset?name=</c>: rebuild from the start.</summary>
    [Route("/databases/*/indexes", "RESET")]
    [Route("/databases/*/indexes/reset", "POST")]
    [Access(RouteAccess.DatabaseReadWrite)]
    public async ValueTask Reset(RequestContext context)
    {
        var (database, name) = Target(context, nameRequired: true);
        await IndexStore.Of(database).ResetAsync(name!).ConfigureAwait(false);
        context.Response.StatusCode = StatusCodes.Status204NoContent;
    }

    /// <summary><c>GET /databases/*/indexes/stats[?name=]</c>.</summary>
    [Route("/databases/*/indexes/stats", "GET")]
    [Access(RouteAccess.DatabaseRead)]
    public async ValueTask Stats(RequestContext context)
    {
        var (database, name) = Target(context, nameRequired: false);
        var store = IndexStore.Of(database);
        var indexes = name is null ? store.Indexes : [store.Get(name)];
        var writer = context.StartJson();
        writer.WriteStartObject();
        writer.WriteStartArray("Results");
        using (var reader = database.BeginRead())
        {
            foreach (var index in indexes)
            {
                var progress = index.Progress;
                writer.WriteStartObject();
                writer.WriteString("Name", index.Name);
                writer.WriteString("Type", index.Definition.TypeName);
                writer.WriteString("SourceType", "Documents");
                writer.WriteString("State", index.State.ToString());
                writer.WriteString("Status", StatusOf(store, index));
                writer.WriteString("LockMode", index.LockMode.ToString());
                writer.WriteString("Priority", index.Priority.ToString());
                if (index.ReplacementOf is { } replaces)
                {
                    writer.WriteString("ReplacementOf", replaces);
                    WriteProgress(writer, index, reader);
                }
                writer.WriteNumber("EntriesCount", index.EntriesCount);
                writer.WriteNumber("SegmentsCount", index.SegmentsCount);
                writer.WriteNumber("MapAttempts", index.MapAttempts);
                writer.WriteNumber("MapSuccesses", index.MapAttempts - index.MapErrors);
                writer.WriteNumber("MapErrors", index.MapErrors);
                writer.WriteNumber("ErrorsCount", index.GetErrors().Length);
                writer.WriteNumber("LastIndexedEtag", progress.LastIndexedEtag);
                writer.WriteBoolean("IsStale", index.IsStale(reader));
                writer.WriteBoolean("IsInvalidIndex", index.State == IndexState.Error);
                JsonDefaults.WriteTime(writer, "LastQueryingTime", index.LastQueryingTime);
                JsonDefaults.WriteTime(writer, "LastIndexingTime", index.LastIndexingTime);
                JsonDefaults.WriteTime(writer, "CreatedTimestamp", index.Definition.CreatedAt);
                JsonDefaults.WriteTime(writer, "AutoDeleteAt", store.AutoDeleteAt(index));
                writer.WriteNumber("DocumentsMappedSinceOpen", index.DocumentsMapped);
                writer.WriteStartObject("Collections");
                foreach (var (collection, position) in progress.Positions)
                {
                    writer.WriteStartObject(collection);
                    writer.WriteNumber("LastProcessedDocumentEtag", position.Documents);
                    writer.WriteNumber("LastProcessedTombstoneEtag", position.Tombstones);
                    writer.WriteEndObject();
                }
                writer.WriteEndObject();
                writer.WriteEndObject();
            }
        }
        writer.WriteEndArray();
        writer.WriteEndObject();
        await context.CompleteJsonAsync().ConfigureAwait(false);
    }

    /// <summary><c>GET /databases/*/indexes/errors[?name=]</c>: the last errors of each index.</summary>
    [Route("/databases/*/indexes/errors", "GET")]
    [Access(RouteAccess.DatabaseRead)]
    public async ValueTask Errors(RequestContext context)
    {
        var database = Server.Databases.GetDatabase(context.GetCaptureMemory(0));
        var store = IndexStore.Of(database);
        var indexes = Named(context, store);
        var writer = context.StartJson();
        writer.WriteStartObject();
        writer.WriteStartArray("Results");
        foreach (var index in indexes)
        {
            writer.WriteStartObject();
            writer.WriteString("Name", index.Name);
            WriteErrors(writer, "Errors", index.GetErrors());
            writer.WriteEndObject();
        }
        writer.WriteEndArray();
        writer.WriteEndObject();
        await context.CompleteJsonAsync().ConfigureAwait(false);
    }

    /// <summary><c>GET /databases/*/indexes/staleness?name=</c> → <c>{"IsStale":bool,"StalenessReasons":[...]}</c>.</summary>
    [Route("/databases/*/indexes/staleness", "GET")]
    [Access(RouteAccess.DatabaseRead)]
    public async ValueTask Staleness(RequestContext context)
    {
        var (database, name) = Target(context, nameRequired: true);
        var index = IndexStore.Of(database).Get(name!);
        var reasons = new List<string>();
        using (var reader = database.BeginRead())
        {
            var progress = index.Progress;
            foreach (var (collection, position) in progress.Positions.Count == 0
                ? index.Definition.IsAutoIndex ? [new(index.Definition.Collection!.ToLowerInvariant(), default)] : new List<KeyValuePair<string, CollectionPosition>>()
                : progress.Positions.ToList())
            {
                foreach (var record in reader.GetDocumentsFrom(collection, position.Documents, 1))
                {
                    reasons.Add($"There are documents of '{collection}' still to index: the last indexed etag is {position.Documents}, the next is {record.Etag}.");
                }
                foreach (var tombstone in reader.GetTombstonesFrom(collection, position.Tombstones, 1))
                {
                    reasons.Add($"There are deletions of '{collection}' still to process: the last processed tombstone etag is {position.Tombstones}, the next is {tombstone.Etag}.");
                }
            }
            if (reasons.Count == 0 && index.IsStale(reader))
            {
                reasons.Add("The index has not yet read the latest changes of its collections.");
            }
            if (index.State != IndexState.Normal)
            {
                reasons.Add($"The index is {index.State}.");
            }
        }
        var writer = context.StartJson();
        writer.WriteStartObject();
        writer.WriteBoolean("IsStale", reasons.Count > 0 && index.State == IndexState.Normal || reasons.Count > 1);
        writer.WriteStartArray("StalenessReasons");
        foreach (var reason in reasons)
        {
            writer.WriteStringValue(reason);
        }
        writer.WriteEndArray();
        writer.WriteEndObject();
        await context.CompleteJsonAsync().ConfigureAwait(false);
    }

    /// <summary>
    /// <c>POST /databases/*/indexes/test</c> <c>{"IndexDefinition":{...},"Query":"from index '...' where ...",
    /// "QueryParameters":{},"MaxDocumentsToProcess":1000,"WaitForNonStaleResultsTimeout":"00:00:15"}</c>:
    /// builds the index in memory over the first documents of its collections and answers the query's
    /// results, the raw map output of the first documents and the map errors. Nothing is stored.
    /// </summary>
    [Route("/databases/*/indexes/test", "POST")]
    // ReadWrite, as RavenDB's indexes/test: it runs the caller's JavaScript over the documents.
    [Access(RouteAccess.DatabaseReadWrite)]
    public async ValueTask Test(RequestContext context)
    {
        var database = Server.Databases.GetDatabase(context.GetCaptureMemory(0));
        IndexDefinition definition;
        string? queryText;
        var parameters = new Dictionary<string, JsonElement>();
        var maxDocuments = 1000;
        var maxTime = TimeSpan.FromSeconds(15);
        using (var json = await DocumentBodies.ReadJsonAsync(context.Request.BodyReader, context.RequestAborted).ConfigureAwait(false))
        {
            var root = json?.RootElement ?? default;
            if (root.ValueKind != JsonValueKind.Object || !root.TryGetProperty("IndexDefinition", out var definitionJson))
            {
                throw new BadRequestException("The body must be {\"IndexDefinition\":{\"Name\":\"Orders/Test\",\"Maps\":[...]},\"Query\":\"from index 'Orders/Test'\",\"MaxDocumentsToProcess\":1000}.");
            }
            definition = IndexDefinition.FromJson(definitionJson);
            queryText = root.TryGetProperty("Query", out var q) && q.ValueKind == JsonValueKind.String ? q.GetString() : null;
            if (root.TryGetProperty("QueryParameters", out var given) && given.ValueKind == JsonValueKind.Object)
            {
                foreach (var parameter in given.EnumerateObject())
                {
                    parameters[parameter.Name] = parameter.Value.Clone();
                }
            }
            if (root.TryGetProperty("MaxDocumentsToProcess", out var max) && max.ValueKind != JsonValueKind.Null)
            {
                if (max.ValueKind != JsonValueKind.Number || !max.TryGetInt32(out maxDocuments) || maxDocuments < 1 || maxDocuments > IndexTestRun.MaxDocuments)
                {
                    throw new BadRequestException($"MaxDocumentsToProcess must be a whole number from 1 to {IndexTestRun.MaxDocuments}.");
                }
            }
            if (root.TryGetProperty("WaitForNonStaleResultsTimeout", out var timeout) && timeout.ValueKind == JsonValueKind.String)
            {
                if (!TimeSpan.TryParse(timeout.GetString(), CultureInfo.InvariantCulture, out maxTime) || maxTime <= TimeSpan.Zero || maxTime > TimeSpan.FromMinutes(5))
                {
                    throw new BadRequestException($"WaitForNonStaleResultsTimeout '{timeout.GetString()}' must be a time span up to 00:05:00.");
                }
            }
        }
        queryText ??= $"from index '{definition.Name.Replace("'", "\\'", StringComparison.Ordinal)}'";
        var parsed = Rql.RqlParser.Parse(queryText);
        if (!parsed.From.IsIndex)
        {
            throw new Errors.InvalidQueryException(queryText, parsed.From.Position, $"the query of an index test runs on the tested index: write it as from index '{definition.Name}'.");
        }

        var run = await IndexTestRun.RunAsync(database, definition, maxDocuments, maxTime, Server.LoggerFactory.CreateLogger("Jackdaw.Indexes.Test")).ConfigureAwait(false);
        try
        {
            var answer = QueryRunner.RunOn(database, run.Index, new QueryRequest(queryText, parameters, false, TimeSpan.Zero), Server.Options.Limits.MaxQueryLimit);
            using var results = JsonDocument.Parse(answer);
            var writer = context.StartJson();
            writer.WriteStartObject();
            writer.WriteString("IndexName", definition.Name);
            writer.WriteNumber("DocumentsProcessed", run.DocumentsProcessed);
            writer.WritePropertyName("QueryResults");
            results.RootElement.GetProperty("Results").WriteTo(writer);
            writer.WriteNumber("TotalResults", results.RootElement.GetProperty("TotalResults").GetInt64());
            writer.WriteStartArray("MapResults");
            foreach (var (id, entries) in run.MapResults)
            {
                writer.WriteStartObject();
                writer.WriteString("Document", id);
                writer.WriteStartArray("Entries");
                foreach (var entry in entries)
                {
                    writer.WriteStartObject();
                    foreach (var field in entry)
                    {
                        writer.WritePropertyName(field.Name);
                        writer.WriteRawValue(LuceneFields.ToJson(field.Value), skipInputValidation: true);
                    }
                    writer.WriteEndObject();
                }
                writer.WriteEndArray();
                writer.WriteEndObject();
            }
            writer.WriteEndArray();
            WriteErrors(writer, "IndexErrors", run.Index.GetErrors());
            writer.WriteEndObject();
            await context.CompleteJsonAsync().ConfigureAwait(false);
        }
        finally
        {
            await run.DisposeAsync().ConfigureAwait(false);
        }
    }

    /// <summary>
    /// <c>GET /databases/*/indexes/cleanup[?unusedFor=7.00:00:00]</c>: the cleanup advisor,
    /// <c>{"Results":[{"Type":"Unused|Covered|Mergeable|Errored","Indexes":[...],"Reason","Evidence":{...},"MergedDefinition":{...}|null}]}</c>.
    /// </summary>
    [Route("/databases/*/indexes/cleanup", "GET")]
    [Access(RouteAccess.DatabaseRead)]
    public async ValueTask Cleanup(RequestContext context)
    {
        var database = Server.Databases.GetDatabase(context.GetCaptureMemory(0));
        var unusedFor = IndexCleanupAdvisor.DefaultUnusedFor;
        if (new UrlQuery(context.Request.QueryString.Value).GetString("unusedFor") is { Length: > 0 } given
            && (!TimeSpan.TryParse(given, CultureInfo.InvariantCulture, out unusedFor) || unusedFor < TimeSpan.Zero))
        {
            throw new BadRequestException($"unusedFor '{given}' is not a time span such as 7.00:00:00.");
        }
        var advice = IndexCleanupAdvisor.Advise(IndexStore.Of(database).Indexes, unusedFor, DateTime.UtcNow);
        var writer = context.StartJson();
        writer.WriteStartObject();
        writer.WriteStartArray("Results");
        foreach (var item in advice)
        {
            writer.WriteStartObject();
            writer.WriteString("Type", item.Type);
            writer.WriteStartArray("Indexes");
            foreach (var name in item.Indexes)
            {
                writer.WriteStringValue(name);
            }
            writer.WriteEndArray();
            writer.WriteString("Reason", item.Reason);
            writer.WritePropertyName("Evidence");
            item.Evidence.WriteTo(writer);
            writer.WritePropertyName("MergedDefinition");
            if (item.MergedDefinition is null)
            {
                writer.WriteNullValue();
            }
            else
            {
                item.MergedDefinition.ToJson().WriteTo(writer);
            }
            writer.WriteEndObject();
        }
        writer.WriteEndArray();
        writer.WriteEndObject();
        await context.CompleteJsonAsync().ConfigureAwait(false);
    }

    /// <summary>An index's errors as RavenDB shows them: <c>[{"Document","Action","Error","Timestamp"}]</c>.</summary>
    private static void WriteErrors(Utf8JsonWriter writer, string name, IndexError[] errors)
    {
        writer.WriteStartArray(name);
        foreach (var error in errors)
        {
            writer.WriteStartObject();
            writer.WriteString("Document", error.Document);
            writer.WriteString("Action", error.Action);
            writer.WriteString("Error", error.Error);
            JsonDefaults.WriteTime(writer, "Timestamp", error.Timestamp);
            writer.WriteEndObject();
        }
        writer.WriteEndArray();
    }

    /// <summary>
    /// <c>GET /databases/*/indexes/performance[?name=a&amp;name=b]</c>: the last batches of each index
    /// (RavenDB's indexing performance stats), <c>{"Results":[{"Name","Performance":[...]}]}</c>.
    /// </summary>
    [Route("/databases/*/indexes/performance", "GET")]
    [Access(RouteAccess.DatabaseRead)]
    public async ValueTask Performance(RequestContext context)
    {
        var database = Server.Databases.GetDatabase(context.GetCaptureMemory(0));
        var store = IndexStore.Of(database);
        var names = new List<string>();
        foreach (var parameter in new UrlQuery(context.Request.QueryString.Value))
        {
            if (parameter.NameEquals("name"))
            {
                names.Add(UrlQuery.Decode(parameter.RawValue, "name"));
            }
        }
        var indexes = names.Count == 0 ? store.Indexes : names.Select(store.Get).ToList();
        var writer = context.StartJson();
        writer.WriteStartObject();
        writer.WriteStartArray("Results");
        foreach (var index in indexes)
        {
            IndexingPerformanceJson.WriteIndex(writer, index.Name, index.Performance.ToArray());
        }
        writer.WriteEndArray();
        writer.WriteEndObject();
        await context.CompleteJsonAsync().ConfigureAwait(false);
    }

    /// <summary>
    /// <c>GET /databases/*/indexes/performance/live</c> (WebSocket): every new batch of every index of
    /// the database as it completes (<see cref="IndexingPerformanceFeed"/>).
    /// </summary>
    [Route("/databases/*/indexes/performance/live", "GET")]
    [Access(RouteAccess.DatabaseRead)]
    public async ValueTask PerformanceLive(RequestContext context)
    {
        var database = Server.Databases.GetDatabase(context.GetCaptureMemory(0));
        var store = IndexStore.Of(database);
        using var socket = await context.AcceptWebSocketAsync("connect with ws://.../databases/{db}/indexes/performance/live.").ConfigureAwait(false);
        await IndexingPerformanceFeed.RunAsync(socket, store, Server.Options.Limits.MaxWebSocketMessageSize, context.RequestAborted).ConfigureAwait(false);
    }

    /// <summary>Documents left to a replacement that its progress counts: past them, the stats answer reads no further.</summary>
    private const long MaxProgressLeftCounted = 100_000;

    /// <summary>
    /// A replacement's progress: documents done of the mapped collections' total, and an estimate of
    /// the time left from its recent batches. The documents left are counted up to
    /// <see cref="MaxProgressLeftCounted"/> (as <see cref="Indexing.Index.Lag"/> counts), so a stats
    /// request reads a bounded number of documents: with more left, <c>ProcessedDocuments</c> is
    /// <c>TotalDocuments</c> less that bound, more than were processed, until the rest is under it.
    /// </summary>
    private static void WriteProgress(Utf8JsonWriter writer, Indexing.Index index, Documents.DocumentsReader reader)
    {
        var counts = reader.GetCollections().ToDictionary(c => c.Name, c => c.Count, StringComparer.OrdinalIgnoreCase);
        long total = 0;
        long left = 0;
        var progress = index.Progress;
        foreach (var collection in index.Collections)
        {
            total += counts.GetValueOrDefault(collection);
            var position = progress.Positions.GetValueOrDefault(collection);
            foreach (var _ in reader.GetDocumentsFrom(collection, position.Documents))
            {
                if (left >= MaxProgressLeftCounted)
                {
                    break;
                }
                left++;
            }
        }
        var recent = index.Performance.ToArray().TakeLast(20).Where(b => b.InputCount > 0).ToList();
        var rate = recent.Sum(b => b.DurationInMs) > 0 ? recent.Sum(b => b.InputCount) / (recent.Sum(b => b.DurationInMs) / 1000) : 0;
        writer.WriteStartObject("Progress");
        writer.WriteNumber("ProcessedDocuments", Math.Max(0, total - left));
        writer.WriteNumber("TotalDocuments", total);
        if (rate > 0)
        {
            writer.WriteString("EstimatedTimeLeft", TimeSpan.FromSeconds(left / rate).ToString("c", CultureInfo.InvariantCulture));
        }
        else
        {
            writer.WriteNull("EstimatedTimeLeft");
        }
        writer.WriteEndObject();
    }


    /// <summary>The indexes a request names with <c>?name=a&amp;name=b</c> (every index when it names none).</summary>
    private static IReadOnlyCollection<Indexing.Index> Named(RequestContext context, IndexStore store)
    {
        var names = new List<string>();
        foreach (var parameter in new UrlQuery(context.Request.QueryString.Value))
        {
            if (parameter.NameEquals("name") && !parameter.RawValue.IsEmpty)
            {
                names.Add(UrlQuery.Decode(parameter.RawValue, "name"));
            }
        }
        return names.Count == 0 ? store.Indexes : names.Select(store.Get).ToList();
    }

    private (DocumentDatabase Database, string? Name) Target(RequestContext context, bool nameRequired)
    {
        var database = Server.Databases.GetDatabase(context.GetCaptureMemory(0));
        var name = new UrlQuery(context.Request.QueryString.Value).GetString("name");
        if (nameRequired && string.IsNullOrEmpty(name))
        {
            throw new BadRequestException("Query parameter 'name' is required: the index's name, e.g. ?name=Orders/Totals.");
        }
        return (database, string.IsNullOrEmpty(name) ? null : name);
    }
}
