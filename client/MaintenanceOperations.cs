using System.Text.Json;
using Jackdaw.Client.Http;
using Jackdaw.Client.Json;

namespace Jackdaw.Client;

/// <summary>
/// Administration: databases (server-wide) and the indexes of one database, the store's
/// <see cref="DocumentStore.Database"/> unless <see cref="ForDatabase"/> names another.
/// </summary>
public sealed class MaintenanceOperations
{
    private static readonly HttpMethod Reset = new("RESET");
    private readonly RequestExecutor _executor;
    private readonly string? _database;

    internal MaintenanceOperations(RequestExecutor executor, string? database)
    {
        _executor = executor;
        _database = database;
    }

    /// <summary>The same operations with index operations on <paramref name="database"/>.</summary>
    public MaintenanceOperations ForDatabase(string database)
    {
        ArgumentException.ThrowIfNullOrEmpty(database);
        return new MaintenanceOperations(_executor, database);
    }

    /// <summary>Creates a database. Throws <see cref="DatabaseAlreadyExistsException"/> if it exists and <see cref="BadRequestException"/> for an invalid name.</summary>
    public async Task CreateDatabaseAsync(string name, CancellationToken token = default)
    {
        ArgumentException.ThrowIfNullOrEmpty(name);
        using var response = await _executor.SendAsync(HttpMethod.Put, DatabasePath(name), null, token).ConfigureAwait(false);
    }

    /// <summary>Creates the database unless it exists; returns whether it was created.</summary>
    public async Task<bool> EnsureDatabaseExistsAsync(string name, CancellationToken token = default)
    {
        try
        {
            await CreateDatabaseAsync(name, token).ConfigureAwait(false);
            return true;
        }
        catch (DatabaseAlreadyExistsException)
        {
            return false;
        }
    }

    /// <summary>Deletes a database and its data. Throws <see cref="DatabaseDoesNotExistException"/> if there is none.</summary>
    public async Task DeleteDatabaseAsync(string name, CancellationToken token = default)
    {
        ArgumentException.ThrowIfNullOrEmpty(name);
        using var response = await _executor.SendAsync(HttpMethod.Delete, DatabasePath(name), null, token).ConfigureAwait(false);
    }

    /// <summary>Names of the server's databases.</summary>
    public async Task<string[]> GetDatabaseNamesAsync(CancellationToken token = default)
    {
        using var response = await _executor.SendAsync(HttpMethod.Get, "/admin/databases", null, token).ConfigureAwait(false);
        await using var stream = await response.Content.ReadAsStreamAsync(token).ConfigureAwait(false);
        using var json = await JsonDocument.ParseAsync(stream, default, token).ConfigureAwait(false);
        if (!json.RootElement.TryGetProperty("Databases", out var databases) || databases.ValueKind != JsonValueKind.Array)
            throw new JackdawException("GET /admin/databases answered without a \"Databases\" array.");
        return [.. databases.EnumerateArray().Select(d => d.GetString() ?? "")];
    }

    /// <summary>
    /// Creates or updates indexes in one request (<c>PUT /databases/{db}/admin/indexes</c>). Throws
    /// <see cref="IndexCompilationException"/> for maps the server cannot compile, and
    /// <see cref="BadRequestException"/> for an invalid name or field option.
    /// </summary>
    public Task<PutIndexResult[]> PutIndexesAsync(params IndexDefinition[] definitions) => PutIndexesAsync(definitions, CancellationToken.None);

    public async Task<PutIndexResult[]> PutIndexesAsync(IEnumerable<IndexDefinition> definitions, CancellationToken token)
    {
        ArgumentNullException.ThrowIfNull(definitions);
        var list = definitions.ToList();
        if (list.Count == 0 || list.Any(d => d is null))
            throw new ArgumentException("Give at least one index definition, and no null ones.", nameof(definitions));
        var body = JsonSerializer.SerializeToUtf8Bytes(new IndexesBody(list), WireJson.Options);
        using var response = await _executor.SendAsync(HttpMethod.Put, IndexesPath("/admin/indexes"), body, token).ConfigureAwait(false);
        return await ReadResultsAsync<PutIndexResult>(response, "PUT admin/indexes", token).ConfigureAwait(false);
    }

    /// <summary>The definitions of the database's indexes, static and automatic.</summary>
    public async Task<IndexDefinition[]> GetIndexesAsync(CancellationToken token = default)
    {
        using var response = await _executor.SendAsync(HttpMethod.Get, IndexesPath("/indexes"), null, token).ConfigureAwait(false);
        return await ReadResultsAsync<IndexDefinition>(response, "GET indexes", token).ConfigureAwait(false);
    }

    /// <summary>How far each index has come: entries, map attempts and errors, staleness.</summary>
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

    /// <summary>Drops an index's entries and errors and builds it again from the documents. Throws <see cref="IndexDoesNotExistException"/> if there is none.</summary>
    public async Task ResetIndexAsync(string name, CancellationToken token = default)
    {
        ArgumentException.ThrowIfNullOrEmpty(name);
        using var response = await _executor.SendAsync(Reset, IndexesPath("/indexes?name=" + Uri.EscapeDataString(name)), null, token).ConfigureAwait(false);
    }

    /// <summary>Deletes an index. Throws <see cref="IndexDoesNotExistException"/> if there is none.</summary>
    public async Task DeleteIndexAsync(string name, CancellationToken token = default)
    {
        ArgumentException.ThrowIfNullOrEmpty(name);
        using var response = await _executor.SendAsync(HttpMethod.Delete, IndexesPath("/indexes?name=" + Uri.EscapeDataString(name)), null, token).ConfigureAwait(false);
    }

    private static string DatabasePath(string name) => "/admin/databases?name=" + Uri.EscapeDataString(name);

    private string IndexesPath(string route)
    {
        if (string.IsNullOrEmpty(_database))
            throw new InvalidOperationException("Index operations need a database: set DocumentStore.Database or use Maintenance.ForDatabase(name).");
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
}
