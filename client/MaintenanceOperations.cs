using System.Text.Json;
using Jackdaw.Client.Http;
using Jackdaw.Client.Json;

namespace Jackdaw.Client;

/// <summary>
/// Administration: databases (server-wide, here) and the indexes of one database, the store's
/// <see cref="DocumentStore.Database"/> unless <see cref="ForDatabase"/> names another
/// (<c>MaintenanceOperations.Indexes.cs</c>).
/// </summary>
public sealed partial class MaintenanceOperations
{
    private readonly RequestExecutor _executor;
    private readonly DocumentConventions _conventions;
    private readonly string? _database;

    internal MaintenanceOperations(RequestExecutor executor, DocumentConventions conventions, string? database)
    {
        _executor = executor;
        _conventions = conventions;
        _database = database;
    }

    /// <summary>The same operations with index operations on <paramref name="database"/>.</summary>
    public MaintenanceOperations ForDatabase(string database)
    {
        ArgumentException.ThrowIfNullOrEmpty(database);
        return new MaintenanceOperations(_executor, _conventions, database);
    }

    /// <summary>Creates a database. Throws <see cref="DatabaseAlreadyExistsException"/> if it exists and <see cref="BadRequestException"/> for an invalid name.</summary>
    public async Task CreateDatabaseAsync(string name, CancellationToken token = default)
    {
        ArgumentException.ThrowIfNullOrEmpty(name);
        using var response = await _executor.SendAsync(HttpMethod.Put, RaftPath(name), null, token).ConfigureAwait(false);
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
        using var response = await _executor.SendAsync(HttpMethod.Delete, RaftPath(name), null, token).ConfigureAwait(false);
    }

    /// <summary>Names of the server's databases (in a cluster, every database the cluster has, whichever node answers).</summary>
    public async Task<string[]> GetDatabaseNamesAsync(CancellationToken token = default)
    {
        using var response = await _executor.SendAsync(HttpMethod.Get, "/databases?namesOnly=true", null, token).ConfigureAwait(false);
        await using var stream = await response.Content.ReadAsStreamAsync(token).ConfigureAwait(false);
        using var json = await JsonDocument.ParseAsync(stream, default, token).ConfigureAwait(false);
        if (!json.RootElement.TryGetProperty("Databases", out var databases) || databases.ValueKind != JsonValueKind.Array)
        {
            throw new JackdawException("GET /databases answered without a \"Databases\" array.");
        }
        return [.. databases.EnumerateArray().Select(d => d.GetString() ?? "")];
    }

    /// <summary>
    /// The path of a change of the cluster's state, with RavenDB's <c>raft-request-id</c>: one id per
    /// call, sent again unchanged when the executor retries on another node, so a change the first
    /// node committed before it failed is applied once (its retry is not a second create or delete).
    /// </summary>
    private static string RaftPath(string name) =>
        "/admin/databases?name=" + Uri.EscapeDataString(name) + "&raft-request-id=" + Guid.NewGuid().ToString("N");
}
