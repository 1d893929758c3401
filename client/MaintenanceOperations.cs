using System.Text.Json;
using Jackdaw.Client.Http;

namespace Jackdaw.Client;

/// <summary>Server-level operations: databases.</summary>
public sealed class MaintenanceOperations
{
    private readonly RequestExecutor _executor;

    internal MaintenanceOperations(RequestExecutor executor) => _executor = executor;

    /// <summary>Creates a database. Throws <see cref="DatabaseAlreadyExistsException"/> if it exists and <see cref="BadRequestException"/> for an invalid name.</summary>
    public async Task CreateDatabaseAsync(string name, CancellationToken token = default)
    {
        ArgumentException.ThrowIfNullOrEmpty(name);
        using var response = await _executor.SendAsync(HttpMethod.Put, Path(name), null, token).ConfigureAwait(false);
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
        using var response = await _executor.SendAsync(HttpMethod.Delete, Path(name), null, token).ConfigureAwait(false);
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

    private static string Path(string name) => "/admin/databases?name=" + Uri.EscapeDataString(name);
}
