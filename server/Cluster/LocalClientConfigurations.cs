using System.Text.Json;

namespace Jackdaw.Server.Cluster;

/// <summary>
/// A lone server's client configurations (server-wide and per database), in
/// <c>System/client-configuration.json</c> (written to a temporary file, flushed, renamed), each
/// with a version from one counter kept in the same file. A cluster keeps them in its state instead.
/// </summary>
internal sealed class LocalClientConfigurations
{
    private const string FileName = "client-configuration.json";

    private readonly string _folder;
    private readonly Lock _lock = new();
    private Saved _saved;

    public LocalClientConfigurations(string folder)
    {
        _folder = folder;
        var path = Path.Combine(folder, FileName);
        var saved = File.Exists(path) ? JsonSerializer.Deserialize<Saved>(File.ReadAllBytes(path)) : null;
        // Database names compare ignoring case.
        _saved = new Saved(saved?.Counter ?? 0, saved?.Server, new(saved?.Databases ?? [], StringComparer.OrdinalIgnoreCase));
    }

    public ClusterClientConfiguration? Server => Volatile.Read(ref _saved).Server;

    public ClusterClientConfiguration? Of(string database) =>
        Volatile.Read(ref _saved).Databases.TryGetValue(database, out var configuration) ? configuration : null;

    /// <summary>Stores <paramref name="json"/> server-wide (<paramref name="database"/> null) or for one database; returns its version.</summary>
    public long Put(string? database, string json)
    {
        lock (_lock)
        {
            var saved = _saved;
            var configuration = new ClusterClientConfiguration(json, saved.Counter + 1);
            var databases = new Dictionary<string, ClusterClientConfiguration>(saved.Databases, StringComparer.OrdinalIgnoreCase);
            if (database is not null)
            {
                databases[database] = configuration;
            }
            var next = new Saved(configuration.Etag, database is null ? configuration : saved.Server, databases);
            Directory.CreateDirectory(_folder);
            var path = Path.Combine(_folder, FileName);
            var temporary = path + ".tmp";
            using (var file = new FileStream(temporary, FileMode.Create, FileAccess.Write, FileShare.None))
            {
                file.Write(JsonSerializer.SerializeToUtf8Bytes(next));
                file.Flush(flushToDisk: true);
            }
            File.Move(temporary, path, overwrite: true);
            Volatile.Write(ref _saved, next);
            return configuration.Etag;
        }
    }

    private sealed record Saved(long Counter, ClusterClientConfiguration? Server, Dictionary<string, ClusterClientConfiguration> Databases);
}
