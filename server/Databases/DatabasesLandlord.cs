using System.Diagnostics;
using Jackdaw.Server.Errors;

namespace Jackdaw.Server.Databases;

/// <summary>
/// Owns the databases of a server: one folder each under <c>{root}</c>. Folders found at startup
/// are known at once but opened lazily on first use; a database can be unloaded (closed, reopened
/// on next use) and deleted. Names compare case-insensitively; the folder keeps the casing given at
/// creation. Lookups by name run on every request: they read lock-free dictionaries (NonBlocking)
/// keyed by the name's characters in place, so a lookup from a route capture allocates nothing.
/// </summary>
public sealed class DatabasesLandlord : IAsyncDisposable
{
    private readonly NonBlocking.ConcurrentDictionary<DatabaseNameKey, string> _folders = new(DatabaseNameKey.Comparer);
    private readonly NonBlocking.ConcurrentDictionary<DatabaseNameKey, Lazy<DocumentDatabase>> _open = new(DatabaseNameKey.Comparer);
    private readonly ILoggerFactory _loggerFactory;
    private DocumentDatabaseOptions _options;
    private readonly Lock _lifecycle = new();

    // Databases being reopened after a storage failure: requests in the gap get a 503.
    private readonly NonBlocking.ConcurrentDictionary<DatabaseNameKey, Task> _reopening = new(DatabaseNameKey.Comparer);
    private readonly CancellationTokenSource _closing = new();

    // Names whose delete is still closing the database and removing its folder: reserved until done.
    private readonly NonBlocking.ConcurrentDictionary<DatabaseNameKey, bool> _deleting = new(DatabaseNameKey.Comparer);

    // When each database was last reopened and the wait that preceded it: a database that fails
    // again soon after (a disk still nearly full) waits longer each time instead of starting over.
    private readonly NonBlocking.ConcurrentDictionary<DatabaseNameKey, (TimeSpan Delay, long ReopenedAt)> _lastReopen = new(DatabaseNameKey.Comparer);
    private readonly ILogger _logger;

    public DatabasesLandlord(string root, ILoggerFactory loggerFactory, DocumentDatabaseOptions? options = null)
    {
        _loggerFactory = loggerFactory;
        _logger = loggerFactory.CreateLogger<DatabasesLandlord>();
        _options = options ?? new DocumentDatabaseOptions();
        Root = root;
        Directory.CreateDirectory(Root);
        foreach (var folder in Directory.EnumerateDirectories(Root))
        {
            var name = Path.GetFileName(folder);
            if (DatabaseNames.Validate(name) is null)
            {
                _folders[new DatabaseNameKey(name)] = folder;
            }
        }
    }

    public string Root { get; }

    /// <summary>The node tag databases open with (<see cref="DocumentDatabaseOptions.NodeTag"/>).</summary>
    public string NodeTag => _options.NodeTag;

    /// <summary>
    /// Sets the node tag the databases open with: a fresh node learns its tag when it is added to a
    /// cluster. Refused while a database is open, since its ids and change vectors carry the tag.
    /// </summary>
    /// <exception cref="InvalidOperationException">A database is open.</exception>
    public void SetNodeTag(string tag)
    {
        lock (_lifecycle)
        {
            if (_options.NodeTag == tag)
            {
                return;
            }
            if (!_open.IsEmpty)
            {
                throw new InvalidOperationException($"This node's tag cannot change from {_options.NodeTag} to {tag} while it holds open databases ({string.Join(", ", Names)}): a node joins a cluster fresh.");
            }
            _options = _options with { NodeTag = tag };
        }
    }

    /// <summary>The names of all databases, in ordinal order ignoring case.</summary>
    public IReadOnlyList<string> Names => _folders.Keys.Select(k => k.Name.ToString()).Order(StringComparer.OrdinalIgnoreCase).ToList();

    /// <summary>Creates a database; false if one of that name (in any casing) exists.</summary>
    /// <exception cref="DatabaseUnavailableException">A database of that name is still being deleted.</exception>
    public bool TryCreate(string name)
    {
        return TryAdd(name, folder =>
        {
            var created = !Directory.Exists(folder);
            Directory.CreateDirectory(folder);
            return created;
        });
    }

    /// <summary>
    /// Makes a database of <paramref name="preparedFolder"/> (a complete database folder on the same
    /// file system, such as a restore builds): it is moved into place under the name and opened. False,
    /// and the folder left where it is, when a database of that name exists.
    /// </summary>
    /// <exception cref="DatabaseUnavailableException">A database of that name is still being deleted.</exception>
    public bool TryAdopt(string name, string preparedFolder) =>
        TryAdd(name, folder =>
        {
            Directory.Move(preparedFolder, folder);
            Storage.Engine.FileDurability.SyncFolder(Root);
            return true;
        });

    /// <summary>
    /// Registers a database under <paramref name="name"/> whose folder <paramref name="place"/> puts
    /// in place (under the lifecycle lock, once the name is known to be free; it returns whether it
    /// made the folder), then opens it now, so that a database that cannot open (disk, permissions,
    /// a bad folder) fails loudly here rather than at its first write, and leaves nothing behind:
    /// the name stays free for a retry, and a folder this call made is deleted.
    /// </summary>
    private bool TryAdd(string name, Func<string, bool> place)
    {
        ThrowIfInvalid(name);
        var key = new DatabaseNameKey(name);
        var folder = Path.Combine(Root, name);
        bool made;
        lock (_lifecycle)
        {
            if (_folders.ContainsKey(key))
            {
                return false;
            }
            if (_deleting.ContainsKey(key))
            {
                throw new DatabaseUnavailableException(name, "a database of that name is still being deleted.");
            }
            made = place(folder);
            _folders[key] = folder;
        }
        try
        {
            _ = GetOrOpen(key);
        }
        catch
        {
            lock (_lifecycle)
                _folders.TryRemove(key, out _);
            if (made)
            {
                TryDeleteFolder(folder);
            }
            throw;
        }
        return true;
    }

    /// <summary>
    /// Opens a database in a folder that is not one of the server's (yet), with the server's options:
    /// a restore imports into it, closes it, and then adopts the folder (<see cref="TryAdopt"/>).
    /// The caller disposes it.
    /// </summary>
    public DocumentDatabase OpenDetached(string name, string folder) => DocumentDatabase.Open(name, folder, _loggerFactory, _options);

    /// <summary>Deletes a database and its data; false if it does not exist.</summary>
    public async Task<bool> TryDeleteAsync(string name)
    {
        ThrowIfInvalid(name);
        var key = new DatabaseNameKey(name);
        string? folder;
        Lazy<DocumentDatabase>? open;
        lock (_lifecycle)
        {
            if (!_folders.TryRemove(key, out folder))
            {
                return false;
            }
            _open.TryRemove(key, out open);
            // The name stays reserved until the folder is gone: a create meanwhile would open
            // (or be deleted with) the old files.
            _deleting[key] = true;
        }
        try
        {
            await CloseAsync(open).ConfigureAwait(false);
            Directory.Delete(folder, recursive: true);
        }
        finally
        {
            _deleting.TryRemove(key, out _);
        }
        return true;
    }

    /// <summary>
    /// Closes a database if it is open (queued writes finish first); the next request opens it
    /// again from disk. False when no database of that name exists.
    /// </summary>
    public async Task<bool> UnloadAsync(string name)
    {
        var key = new DatabaseNameKey(name);
        Lazy<DocumentDatabase>? open;
        lock (_lifecycle)
        {
            if (!_folders.ContainsKey(key))
            {
                return false;
            }
            _open.TryRemove(key, out open);
        }
        await CloseAsync(open).ConfigureAwait(false);
        return true;
    }

    /// <summary>Closes a database taken out of the registry, waiting for an open in progress first.</summary>
    private static async Task CloseAsync(Lazy<DocumentDatabase>? open)
    {
        if (open is null)
        {
            return;
        }
        DocumentDatabase database;
        try
        {
            database = open.IsValueCreated ? open.Value : await Task.Run(() => open.Value).ConfigureAwait(false);
        }
        catch
        {
            // It never opened: nothing to close.
            return;
        }
        await database.DisposeAsync().ConfigureAwait(false);
    }

    /// <summary>Deletes a folder and what it holds if it can; one that stays is a leftover for later.</summary>
    internal static void TryDeleteFolder(string folder)
    {
        try
        {
            if (Directory.Exists(folder))
            {
                Directory.Delete(folder, recursive: true);
            }
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException)
        {
            // Left for whoever cleans the folder's kind up next (a restore, an operator).
        }
    }

    /// <summary>
    /// The database named by a route capture (characters of the request's path, not copied), opened
    /// on first use. Allocates nothing once the database is open.
    /// </summary>
    /// <exception cref="DatabaseDoesNotExistException">There is no database of that name.</exception>
    public DocumentDatabase GetDatabase(ReadOnlyMemory<char> name)
    {
        var key = new DatabaseNameKey(name);
        if (_open.TryGetValue(key, out var open) && open.IsValueCreated)
        {
            var database = open.Value;
            // A database whose storage failed still serves reads; it is reopened in the background.
            if (database.StorageFailure is not null)
            {
                ScheduleReopen(database);
            }
            return database;
        }
        if (!_folders.ContainsKey(key))
        {
            throw new DatabaseDoesNotExistException(name.ToString());
        }
        return GetOrOpen(new DatabaseNameKey(name.ToString()));
    }

    /// <summary>
    /// Reopens a database whose storage failed (a journal write on a full disk, say, or one that
    /// opened read-only because recovery could not write), in the background, waiting
    /// <see cref="DocumentDatabaseOptions.FirstReopenDelay"/> and doubling up to
    /// <see cref="DocumentDatabaseOptions.MaxReopenDelay"/> until it opens writable. Nothing is
    /// lost: every acknowledged write is in the journal, which the reopen replays.
    /// </summary>
    private void ScheduleReopen(DocumentDatabase failed)
    {
        var key = new DatabaseNameKey(failed.Name);
        if (_reopening.ContainsKey(key) || _closing.IsCancellationRequested)
        {
            return;
        }
        var pending = new TaskCompletionSource();
        if (!_reopening.TryAdd(key, pending.Task))
        {
            return;
        }
        _ = Task.Run(async () =>
        {
            try
            {
                await ReopenUntilHealthyAsync(key, failed).ConfigureAwait(false);
            }
            finally
            {
                _reopening.TryRemove(key, out _);
                pending.SetResult();
            }
        });
    }

    private async Task ReopenUntilHealthyAsync(DatabaseNameKey key, DocumentDatabase failed)
    {
        var delay = _options.FirstReopenDelay;
        if (_lastReopen.TryGetValue(key, out var last) && Stopwatch.GetElapsedTime(last.ReopenedAt) < _options.MaxReopenDelay + last.Delay)
        {
            delay = TimeSpan.FromTicks(Math.Min(last.Delay.Ticks * 2, _options.MaxReopenDelay.Ticks));
        }
        DocumentDatabase? current = failed;
        _logger.LogWarning(failed.StorageFailure, "Database {Database} cannot write ({Reason}); reopening it", failed.Name, failed.StorageFailure?.Message);
        while (!_closing.IsCancellationRequested)
        {
            try
            {
                await Task.Delay(delay, _closing.Token).ConfigureAwait(false);
            }
            catch (OperationCanceledException)
            {
                return;
            }

            if (current is not null)
            {
                lock (_lifecycle)
                {
                    // Deleted, unloaded or replaced meanwhile: nothing left to heal.
                    if (!_open.TryGetValue(key, out var lazy) || !lazy.IsValueCreated || !ReferenceEquals(lazy.Value, current))
                    {
                        return;
                    }
                    _open.TryRemove(key, out _);
                }
                // Requests that already hold it finish or get a 503; new ones get a 503 until it is open.
                await current.DisposeAsync().ConfigureAwait(false);
                current = null;
            }

            _lastReopen[key] = (delay, Stopwatch.GetTimestamp());
            delay = TimeSpan.FromTicks(Math.Min(delay.Ticks * 2, _options.MaxReopenDelay.Ticks));
            try
            {
                current = GetOrOpen(key, reopening: true);
            }
            catch (DatabaseDoesNotExistException)
            {
                return;
            }
            catch (Exception e)
            {
                _logger.LogError(e, "Reopening database {Database} failed; trying again in {Delay} ms", key.ToString(), delay.TotalMilliseconds);
                continue;
            }

            if (current.StorageFailure is null)
            {
                _logger.LogInformation("Database {Database} reopened; it writes again", current.Name);
                return;
            }
            _logger.LogWarning("Database {Database} reopened read-only ({Reason}); trying again in {Delay} ms", current.Name, current.StorageFailure.Message, delay.TotalMilliseconds);
        }
    }



    /// <inheritdoc cref="GetDatabase(ReadOnlyMemory{char})"/>
    public DocumentDatabase GetDatabase(string name) => GetDatabase(name.AsMemory());

    private DocumentDatabase GetOrOpen(DatabaseNameKey key, bool reopening = false)
    {
        if (!reopening && _reopening.ContainsKey(key) && !_open.ContainsKey(key))
        {
            throw new DatabaseUnavailableException(key.ToString(), "it is being reopened after a storage failure.");
        }
        Lazy<DocumentDatabase> lazy;
        lock (_lifecycle)
        {
            if (!_folders.TryGetValue(key, out var folder))
            {
                if (_deleting.ContainsKey(key))
                {
                    throw new DatabaseUnavailableException(key.ToString(), "it is being deleted.");
                }
                throw new DatabaseDoesNotExistException(key.Name.ToString());
            }
            lazy = _open.GetOrAdd(key, _ => new Lazy<DocumentDatabase>(
                () => DocumentDatabase.Open(Path.GetFileName(folder), folder, _loggerFactory, _options),
                LazyThreadSafetyMode.ExecutionAndPublication));
        }
        // Opened outside the lock: replaying a long journal or migrating one database must not
        // hold up the create, delete or first open of the others.
        try
        {
            return lazy.Value;
        }
        catch
        {
            // A failed open is not cached: the next request tries again.
            lock (_lifecycle)
            {
                if (_open.TryGetValue(key, out var current) && ReferenceEquals(current, lazy))
                {
                    _open.TryRemove(key, out _);
                }
            }
            throw;
        }
    }

    private static void ThrowIfInvalid(string name)
    {
        if (DatabaseNames.Validate(name) is { } problem)
        {
            throw new BadRequestException(problem);
        }
    }

    public async ValueTask DisposeAsync()
    {
        _closing.Cancel();
        foreach (var reopen in _reopening.Values)
        {
            try
            {
                await reopen.ConfigureAwait(false);
            }
            catch (OperationCanceledException)
            {
            }
        }
        foreach (var lazy in _open.Values)
        {
            if (lazy.IsValueCreated)
            {
                await lazy.Value.DisposeAsync().ConfigureAwait(false);
            }
        }
        _open.Clear();
    }
}
