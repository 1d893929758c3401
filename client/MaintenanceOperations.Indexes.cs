using System.Buffers;
using System.Globalization;
using System.Text.Json;
using System.Text.Json.Serialization.Metadata;
using Jackdaw.Client.Json;
using Jackdaw.Client.Queries;

namespace Jackdaw.Client;

// The index operations of one database, with RavenDB's routes and shapes. Every answer with a body
// is {"Results":[...]} except the index test's; the server's own names are read with WireJson.
public sealed partial class MaintenanceOperations
{
    private static readonly HttpMethod Reset = new("RESET");

    /// <summary>
    /// Creates or updates indexes in one request (<c>PUT /databases/{db}/admin/indexes</c>). A changed
    /// definition of an existing index builds side by side as <c>ReplacementOf/{Name}</c> and takes
    /// the index's place once caught up; an unchanged one changes nothing. Throws
    /// <see cref="IndexCompilationException"/> for maps the server cannot compile,
    /// <see cref="IndexLockedException"/> when a changed index is locked with
    /// <see cref="IndexLockMode.LockedError"/> (nothing of the request is applied then), and
    /// <see cref="BadRequestException"/> for an invalid name or field option.
    /// </summary>
    public Task<PutIndexResult[]> PutIndexesAsync(params IndexDefinition[] definitions) => PutIndexesAsync(definitions, CancellationToken.None);

    public async Task<PutIndexResult[]> PutIndexesAsync(IEnumerable<IndexDefinition> definitions, CancellationToken token)
    {
        ArgumentNullException.ThrowIfNull(definitions);
        var list = definitions.ToList();
        if (list.Count == 0 || list.Any(d => d is null))
        {
            throw new ArgumentException("Give at least one index definition, and no null ones.", nameof(definitions));
        }
        var body = JsonSerializer.SerializeToUtf8Bytes(new IndexesBody(list), WireJson.Options);
        using var response = await _executor.SendAsync(HttpMethod.Put, IndexesPath("/admin/indexes"), body, token).ConfigureAwait(false);
        return await ReadResultsAsync<PutIndexResult>(response, "PUT admin/indexes", token).ConfigureAwait(false);
    }

    /// <summary>The definitions of the database's indexes, static and automatic, and of replacements building.</summary>
    public async Task<IndexDefinition[]> GetIndexesAsync(CancellationToken token = default)
    {
        using var response = await _executor.SendAsync(HttpMethod.Get, IndexesPath("/indexes"), null, token).ConfigureAwait(false);
        return await ReadResultsAsync<IndexDefinition>(response, "GET indexes", token).ConfigureAwait(false);
    }

    /// <summary>
    /// How far each index has come: entries, map attempts and errors, staleness, state and running
    /// status, lock mode and priority. A replacement building side by side is listed too, with
    /// <see cref="IndexStats.ReplacementOf"/> and its <see cref="IndexStats.Progress"/>.
    /// </summary>
    public async Task<IndexStats[]> GetIndexStatisticsAsync(CancellationToken token = default)
    {
        using var response = await _executor.SendAsync(HttpMethod.Get, IndexesPath("/indexes/stats"), null, token).ConfigureAwait(false);
        return await ReadResultsAsync<IndexStats>(response, "GET indexes/stats", token).ConfigureAwait(false);
    }

    /// <summary>The documents each index failed to map, and why.</summary>
    public async Task<IndexErrors[]> GetIndexErrorsAsync(CancellationToken token = default)
    {
        using var response = await _executor.SendAsync(HttpMethod.Get, IndexesPath("/indexes/errors"), null, token).ConfigureAwait(false);
        return await ReadResultsAsync<IndexErrors>(response, "GET indexes/errors", token).ConfigureAwait(false);
    }

    /// <summary>
    /// The mapping errors of the named indexes (<c>GET indexes/errors?name=a&amp;name=b</c>), or of all
    /// of them when none is named. Throws <see cref="IndexDoesNotExistException"/> for a name the database does not have.
    /// </summary>
    public Task<IndexErrors[]> GetIndexErrorsAsync(params string[] names) => GetIndexErrorsAsync(names, CancellationToken.None);

    public async Task<IndexErrors[]> GetIndexErrorsAsync(IEnumerable<string> names, CancellationToken token)
    {
        var path = IndexesPath("/indexes/errors") + NamesQuery(names);
        using var response = await _executor.SendAsync(HttpMethod.Get, path, null, token).ConfigureAwait(false);
        return await ReadResultsAsync<IndexErrors>(response, "GET indexes/errors", token).ConfigureAwait(false);
    }

    /// <summary>Drops an index's entries and errors and builds it again from the documents. Throws <see cref="IndexDoesNotExistException"/> if there is none.</summary>
    public async Task ResetIndexAsync(string name, CancellationToken token = default)
    {
        using var response = await _executor.SendAsync(Reset, IndexesPath("/indexes" + NameQuery(name)), null, token).ConfigureAwait(false);
    }

    /// <summary>Deletes an index. Throws <see cref="IndexDoesNotExistException"/> if there is none.</summary>
    public async Task DeleteIndexAsync(string name, CancellationToken token = default)
    {
        using var response = await _executor.SendAsync(HttpMethod.Delete, IndexesPath("/indexes" + NameQuery(name)), null, token).ConfigureAwait(false);
    }

    /// <summary>
    /// Sets how the named indexes take a changed definition (<c>POST indexes/set-lock</c>); it
    /// survives restarts. Throws <see cref="IndexDoesNotExistException"/> for a name the database
    /// does not have.
    /// </summary>
    public Task SetIndexLockAsync(IndexLockMode mode, params string[] names) => SetIndexLockAsync(mode, names, CancellationToken.None);

    public Task SetIndexLockAsync(IndexLockMode mode, IEnumerable<string> names, CancellationToken token) =>
        PostNamesAsync("/indexes/set-lock", names, "Mode", mode.ToString(), token);

    /// <summary>
    /// Sets how much of the indexing time the named indexes get (<c>POST indexes/set-priority</c>);
    /// it survives restarts. Throws <see cref="IndexDoesNotExistException"/> for a name the database
    /// does not have.
    /// </summary>
    public Task SetIndexPriorityAsync(IndexPriority priority, params string[] names) => SetIndexPriorityAsync(priority, names, CancellationToken.None);

    public Task SetIndexPriorityAsync(IndexPriority priority, IEnumerable<string> names, CancellationToken token) =>
        PostNamesAsync("/indexes/set-priority", names, "Priority", priority.ToString(), token);

    /// <summary>
    /// Stops an index from indexing until <see cref="EnableIndexAsync"/>, across restarts; it still
    /// answers queries, with what it had indexed (<c>POST admin/indexes/disable?name=</c>).
    /// </summary>
    public async Task DisableIndexAsync(string name, CancellationToken token = default)
    {
        using var response = await _executor.SendAsync(HttpMethod.Post, IndexesPath("/admin/indexes/disable" + NameQuery(name)), null, token).ConfigureAwait(false);
    }

    /// <summary>Lets a disabled index index again; it catches up from where it stopped (<c>POST admin/indexes/enable?name=</c>).</summary>
    public async Task EnableIndexAsync(string name, CancellationToken token = default)
    {
        using var response = await _executor.SendAsync(HttpMethod.Post, IndexesPath("/admin/indexes/enable" + NameQuery(name)), null, token).ConfigureAwait(false);
    }

    /// <summary>
    /// Pauses all indexing of the database until <see cref="StartIndexingAsync"/> or until the
    /// server restarts (<c>POST admin/indexes/stop</c>). Queries still run, on stale indexes.
    /// </summary>
    public async Task StopIndexingAsync(CancellationToken token = default)
    {
        using var response = await _executor.SendAsync(HttpMethod.Post, IndexesPath("/admin/indexes/stop"), null, token).ConfigureAwait(false);
    }

    /// <summary>Resumes the indexing <see cref="StopIndexingAsync"/> paused (<c>POST admin/indexes/start</c>).</summary>
    public async Task StartIndexingAsync(CancellationToken token = default)
    {
        using var response = await _executor.SendAsync(HttpMethod.Post, IndexesPath("/admin/indexes/start"), null, token).ConfigureAwait(false);
    }

    /// <summary>
    /// Swaps the replacement of <paramref name="name"/> in now, whether it has caught up or not
    /// (<c>POST indexes/replace?name=</c>); queries then run on the new definition. Throws
    /// <see cref="IndexDoesNotExistException"/> when no replacement of that index is building.
    /// </summary>
    public async Task ReplaceIndexAsync(string name, CancellationToken token = default)
    {
        using var response = await _executor.SendAsync(HttpMethod.Post, IndexesPath("/indexes/replace" + NameQuery(name)), null, token).ConfigureAwait(false);
    }

    /// <summary>
    /// The recent indexing batches of the named indexes, or of all of them when none is named
    /// (<c>GET indexes/performance?name=a&amp;name=b</c>): each with its counts and its tree of timed
    /// operations. Throws <see cref="IndexDoesNotExistException"/> for a name the database does not have.
    /// </summary>
    public Task<IndexPerformanceStats[]> GetIndexPerformanceAsync(params string[] names) => GetIndexPerformanceAsync(names, CancellationToken.None);

    public async Task<IndexPerformanceStats[]> GetIndexPerformanceAsync(IEnumerable<string> names, CancellationToken token)
    {
        var path = IndexesPath("/indexes/performance") + NamesQuery(names);
        using var response = await _executor.SendAsync(HttpMethod.Get, path, null, token).ConfigureAwait(false);
        return await ReadResultsAsync<IndexPerformanceStats>(response, "GET indexes/performance", token).ConfigureAwait(false);
    }

    /// <summary>
    /// The index cleanup advisor (<c>GET indexes/cleanup[?unusedFor=]</c>): indexes not queried for
    /// <paramref name="unusedFor"/> (the server's 7 days by default), auto-indexes another index
    /// covers, static indexes that could merge (with the merged definition when their maps select
    /// plain fields), indexes in error; each with the server's reason and evidence. Nothing is changed.
    /// </summary>
    public async Task<IndexCleanupAdvice[]> GetIndexCleanupAsync(TimeSpan? unusedFor = null, CancellationToken token = default)
    {
        var query = "";
        if (unusedFor is { } span)
        {
            ArgumentOutOfRangeException.ThrowIfLessThan(span, TimeSpan.Zero, nameof(unusedFor));
            query = "?unusedFor=" + Uri.EscapeDataString(span.ToString("c", CultureInfo.InvariantCulture));
        }

        using var response = await _executor.SendAsync(HttpMethod.Get, IndexesPath("/indexes/cleanup") + query, null, token).ConfigureAwait(false);
        return await ReadResultsAsync<IndexCleanupAdvice>(response, "GET indexes/cleanup", token).ConfigureAwait(false);
    }

    /// <summary>
    /// Tries <paramref name="definition"/> without saving it (<c>POST indexes/test</c>): the server
    /// maps the first <paramref name="maxDocuments"/> documents of its collections in memory and runs
    /// <paramref name="query"/> (<c>from index '{definition.Name}' where ...</c>; null queries
    /// everything) over them, within <paramref name="timeout"/> (15 s by default). The results are
    /// read as <see cref="JsonElement"/>s; <see cref="TestIndexAsync{T}"/> reads them as a type.
    /// Throws <see cref="IndexCompilationException"/> for maps that do not compile and
    /// <see cref="InvalidQueryException"/> for a query that does not parse.
    /// </summary>
    public Task<TestIndexResult<JsonElement>> TestIndexAsync(
        IndexDefinition definition,
        string? query = null,
        IReadOnlyDictionary<string, object?>? parameters = null,
        int maxDocuments = 1000,
        TimeSpan? timeout = null,
        CancellationToken token = default) =>
        TestIndexAsync<JsonElement>(definition, query, parameters, maxDocuments, timeout, token);

    /// <summary>
    /// <see cref="TestIndexAsync(IndexDefinition, string?, IReadOnlyDictionary{string, object?}?, int, TimeSpan?, CancellationToken)"/>
    /// with each query result read as <typeparamref name="T"/> through the conventions' serializer
    /// (an entity's id property is set from <c>@metadata.@id</c>). Parameters (<c>$name</c> in the
    /// query) are written the way queries write them.
    /// </summary>
    public async Task<TestIndexResult<T>> TestIndexAsync<T>(
        IndexDefinition definition,
        string? query = null,
        IReadOnlyDictionary<string, object?>? parameters = null,
        int maxDocuments = 1000,
        TimeSpan? timeout = null,
        CancellationToken token = default)
    {
        ArgumentNullException.ThrowIfNull(definition);
        ArgumentOutOfRangeException.ThrowIfLessThan(maxDocuments, 1);
        if (timeout is { } t)
        {
            ArgumentOutOfRangeException.ThrowIfLessThanOrEqual(t, TimeSpan.Zero, nameof(timeout));
        }

        var wait = timeout ?? QueryRequest.DefaultWaitTimeout;
        var body = TestIndexBody(definition, query, parameters, maxDocuments, wait);
        var path = IndexesPath("/indexes/test");
        using var response = await _executor.SendAsync(HttpMethod.Post, path, body, wait, null, token).ConfigureAwait(false);
        var bytes = await response.Content.ReadAsByteArrayAsync(token).ConfigureAwait(false);
        try
        {
            var answer = JsonSerializer.Deserialize<TestIndexAnswer>(bytes, WireJson.Options)
                ?? throw new JackdawException("POST indexes/test answered null.");
            return new TestIndexResult<T>
            {
                IndexName = answer.IndexName ?? definition.Name,
                DocumentsProcessed = answer.DocumentsProcessed,
                TotalResults = answer.TotalResults,
                QueryResults = answer.QueryResults is null ? [] : [.. answer.QueryResults.Select(ReadTestResult<T>)],
                MapResults = answer.MapResults ?? [],
                IndexErrors = answer.IndexErrors ?? [],
            };
        }
        catch (JsonException e)
        {
            throw new JackdawException($"The server's answer to POST indexes/test cannot be read as {typeof(T).Name} results: {e.Message}", e);
        }
    }

    private ReadOnlyMemory<byte> TestIndexBody(IndexDefinition definition, string? query, IReadOnlyDictionary<string, object?>? parameters, int maxDocuments, TimeSpan timeout)
    {
        var buffer = new ArrayBufferWriter<byte>(512);
        using (var writer = new Utf8JsonWriter(buffer, new JsonWriterOptions { Encoder = WireJson.Options.Encoder }))
        {
            writer.WriteStartObject();
            writer.WritePropertyName("IndexDefinition");
            JsonSerializer.Serialize(writer, definition, WireJson.Options);
            if (query is not null)
            {
                writer.WriteString("Query", query);
            }

            // Parameter values go through the documents' serializer, as a query's do, so they
            // compare with stored values written the same way.
            writer.WriteStartObject("QueryParameters");
            foreach (var (name, value) in parameters ?? new Dictionary<string, object?>())
            {
                writer.WritePropertyName(name);
                if (value is null)
                {
                    writer.WriteNullValue();
                }
                else
                {
                    JsonSerializer.Serialize(writer, value, value.GetType(), _conventions.SerializerOptions);
                }
            }

            writer.WriteEndObject();
            writer.WriteNumber("MaxDocumentsToProcess", maxDocuments);
            writer.WriteString("WaitForNonStaleResultsTimeout", timeout.ToString("c", CultureInfo.InvariantCulture));
            writer.WriteEndObject();
        }

        return buffer.WrittenMemory;
    }

    private T ReadTestResult<T>(JsonElement result)
    {
        if (typeof(T) == typeof(JsonElement))
        {
            return (T)(object)result.Clone();
        }

        var value = result.Deserialize<T>(_conventions.SerializerOptions);
        if (value is not null
            && _conventions.SerializerOptions.GetTypeInfo(typeof(T)).Kind == JsonTypeInfoKind.Object
            && result.ValueKind == JsonValueKind.Object
            && result.TryGetProperty("@metadata", out var metadata)
            && metadata.ValueKind == JsonValueKind.Object
            && metadata.TryGetProperty("@id", out var id)
            && id.ValueKind == JsonValueKind.String)
        {
            _conventions.GetEntityTypeInfo(typeof(T)).SetId?.Invoke(value, id.GetString());
        }

        return value!;
    }

    /// <summary><c>POST {route}</c> with <c>{"IndexNames":[...],"{valueName}":value}</c>, answered 204.</summary>
    private async Task PostNamesAsync(string route, IEnumerable<string> names, string valueName, string value, CancellationToken token)
    {
        var list = CheckNames(names, allowNone: false);
        var buffer = new ArrayBufferWriter<byte>(128);
        using (var writer = new Utf8JsonWriter(buffer, new JsonWriterOptions { Encoder = WireJson.Options.Encoder }))
        {
            writer.WriteStartObject();
            writer.WriteStartArray("IndexNames");
            foreach (var name in list)
            {
                writer.WriteStringValue(name);
            }

            writer.WriteEndArray();
            writer.WriteString(valueName, value);
            writer.WriteEndObject();
        }

        using var response = await _executor.SendAsync(HttpMethod.Post, IndexesPath(route), buffer.WrittenMemory, token).ConfigureAwait(false);
    }

    private static List<string> CheckNames(IEnumerable<string> names, bool allowNone)
    {
        ArgumentNullException.ThrowIfNull(names);
        var list = names.ToList();
        if ((!allowNone && list.Count == 0) || list.Any(string.IsNullOrEmpty))
        {
            throw new ArgumentException(allowNone ? "Index names cannot be null or empty." : "Name at least one index, and no null or empty names.", nameof(names));
        }

        return list;
    }

    private static string NameQuery(string name)
    {
        ArgumentException.ThrowIfNullOrEmpty(name);
        return "?name=" + Uri.EscapeDataString(name);
    }

    /// <summary><c>?name=a&amp;name=b</c>, or nothing for no names (all indexes).</summary>
    private static string NamesQuery(IEnumerable<string> names)
    {
        var list = CheckNames(names, allowNone: true);
        return list.Count == 0 ? "" : "?" + string.Join('&', list.Select(n => "name=" + Uri.EscapeDataString(n)));
    }

    private string IndexesPath(string route)
    {
        if (string.IsNullOrEmpty(_database))
        {
            throw new InvalidOperationException("Operations on a database's indexes, analyzers and identities need a database: set DocumentStore.Database or use Maintenance.ForDatabase(name).");
        }

        return DocumentStore.DatabasePath(_database) + route;
    }

    /// <summary>Reads <c>{"Results":[...]}</c>, the shape of every index answer.</summary>
    private static async Task<T[]> ReadResultsAsync<T>(HttpResponseMessage response, string what, CancellationToken token)
    {
        var body = await response.Content.ReadAsByteArrayAsync(token).ConfigureAwait(false);
        try
        {
            return JsonSerializer.Deserialize<ResultsBody<T>>(body, WireJson.Options)?.Results
                ?? throw new JackdawException($"{what} answered without a \"Results\" array.");
        }
        catch (JsonException e)
        {
            throw new JackdawException($"The server's answer to {what} cannot be read: {e.Message}", e);
        }
    }

    private sealed record IndexesBody(List<IndexDefinition> Indexes);

    private sealed record ResultsBody<T>(T[]? Results);

    /// <summary>The answer of <c>POST indexes/test</c>; the results stay JSON until read as the caller's type.</summary>
    private sealed record TestIndexAnswer(
        string? IndexName,
        long DocumentsProcessed,
        JsonElement[]? QueryResults,
        long TotalResults,
        TestIndexMapResult[]? MapResults,
        IndexingError[]? IndexErrors);
}
