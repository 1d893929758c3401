using System.Collections.Concurrent;
using Jackdaw.Server.Hosting;
using Jackdaw.Server.Http;

namespace Jackdaw.Server.Documents;

/// <summary>
/// Owns the databases of a server: one folder each under <c>{data-dir}/Databases</c>. Folders found
/// at startup are known at once but opened lazily on first use. Names compare case-insensitively;
/// the folder keeps the casing given at creation.
/// </summary>
public sealed class DatabasesLandlord : IAsyncDisposable
{
    private readonly ConcurrentDictionary<string, string> _folders = new(StringComparer.OrdinalIgnoreCase);
    private readonly ConcurrentDictionary<string, Lazy<DocumentDatabase>> _open = new(StringComparer.OrdinalIgnoreCase);
    private readonly ConcurrentDictionary<string, string>.AlternateLookup<ReadOnlySpan<char>> _foldersBySpan;
    private readonly ConcurrentDictionary<string, Lazy<DocumentDatabase>>.AlternateLookup<ReadOnlySpan<char>> _openBySpan;
    private readonly ServerContext _server;
    private readonly Lock _lifecycle = new();

    public DatabasesLandlord(ServerContext server)
    {
        _server = server;
        Root = Path.Combine(server.Options.DataDir, "Databases");
        Directory.CreateDirectory(Root);
        foreach (var folder in Directory.EnumerateDirectories(Root))
        {
            var name = Path.GetFileName(folder);
            if (DatabaseNames.Validate(name) is null)
                _folders[name] = folder;
        }
        _foldersBySpan = _folders.GetAlternateLookup<ReadOnlySpan<char>>();
        _openBySpan = _open.GetAlternateLookup<ReadOnlySpan<char>>();
    }

    public string Root { get; }

    /// <summary>The names of all databases, in ordinal order.</summary>
    public IReadOnlyList<string> Names => _folders.Keys.Order(StringComparer.OrdinalIgnoreCase).ToList();

    /// <summary>Creates a database; false if one of that name (in any casing) exists.</summary>
    public bool TryCreate(string name)
    {
        ThrowIfInvalid(name);
        lock (_lifecycle)
        {
            if (_folders.ContainsKey(name))
                return false;
            var folder = Path.Combine(Root, name);
            Directory.CreateDirectory(folder);
            _folders[name] = folder;
        }
        // Open it now, so creation fails loudly (disk, permissions) rather than the first write.
        _ = GetOrOpen(name);
        return true;
    }

    /// <summary>Deletes a database and its data; false if it does not exist.</summary>
    public async Task<bool> TryDeleteAsync(string name)
    {
        ThrowIfInvalid(name);
        string? folder;
        Lazy<DocumentDatabase>? open;
        lock (_lifecycle)
        {
            if (!_folders.TryRemove(name, out folder))
                return false;
            _open.TryRemove(name, out open);
        }
        if (open is { IsValueCreated: true })
            await open.Value.DisposeAsync().ConfigureAwait(false);
        Directory.Delete(folder, recursive: true);
        return true;
    }

    /// <summary>
    /// The database named by a route capture, opened on first use; a 404 <c>DatabaseDoesNotExist</c>
    /// error when there is none. Allocates nothing once the database is open.
    /// </summary>
    public DocumentDatabase GetDatabase(ReadOnlySpan<char> name)
    {
        if (_openBySpan.TryGetValue(name, out var open))
            return open.Value;
        if (!_foldersBySpan.TryGetValue(name, out _))
            throw HttpErrorException.NotFound(ErrorTypes.DatabaseDoesNotExist, $"Database '{name}' does not exist.");
        return GetOrOpen(name.ToString());
    }

    private DocumentDatabase GetOrOpen(string name)
    {
        lock (_lifecycle)
        {
            if (!_folders.TryGetValue(name, out var folder))
                throw HttpErrorException.NotFound(ErrorTypes.DatabaseDoesNotExist, $"Database '{name}' does not exist.");
            var lazy = _open.GetOrAdd(name, n => new Lazy<DocumentDatabase>(() => DocumentDatabase.Open(Path.GetFileName(folder), folder, _server), LazyThreadSafetyMode.ExecutionAndPublication));
            return lazy.Value;
        }
    }

    private static void ThrowIfInvalid(string name)
    {
        if (DatabaseNames.Validate(name) is { } problem)
            throw HttpErrorException.BadRequest(problem);
    }

    public async ValueTask DisposeAsync()
    {
        foreach (var lazy in _open.Values)
        {
            if (lazy.IsValueCreated)
                await lazy.Value.DisposeAsync().ConfigureAwait(false);
        }
        _open.Clear();
    }
}
