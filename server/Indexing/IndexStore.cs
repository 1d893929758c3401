using System.Security.Cryptography;
using System.Text;
using System.Text.Json;
using Jackdaw.Server.Databases;
using Jackdaw.Server.Documents;
using Jackdaw.Server.Errors;
using Microsoft.Extensions.Logging;
using System.Collections.Immutable;
using NonBlocking;

namespace Jackdaw.Server.Indexing;

/// <summary>Settings of the indexes of every database.</summary>
public sealed class IndexingOptions
{
    /// <summary>An auto-index not queried for this long becomes idle (stops indexing until a query needs it).</summary>
    public TimeSpan AutoIndexIdleAfter { get; init; } = TimeSpan.FromMinutes(30);

    /// <summary>An auto-index idle this long is deleted (logged, and shown in stats beforehand).</summary>
    public TimeSpan AutoIndexDeleteAfter { get; init; } = TimeSpan.FromDays(7);

    /// <summary>How often idleness is checked.</summary>
    public TimeSpan IdleCheckInterval { get; init; } = TimeSpan.FromMinutes(1);
}

/// <summary>
/// The indexes of one database: their definitions (JSON in the database's <c>Indexes</c> tree,
/// keyed by the lowercased name) and their Lucene folders (<c>{database}/Indexes/{folder name}</c>).
/// Built on the database when it opens (a database component), so every index resumes its loop
/// at once after a restart.
/// </summary>
public sealed class IndexStore : IAsyncDisposable
{
    public const string TreeName = "Indexes";

    private readonly DocumentDatabase _database;
    private readonly IndexingOptions _options;
    private readonly ILogger _logger;
    private readonly ConcurrentDictionary<string, Index> _indexes = new(StringComparer.OrdinalIgnoreCase);
    private readonly SemaphoreSlim _changes = new(1, 1);

    // Indexes being rebuilt under their name (reset, changed definition): queries wait for the new one.
    private readonly ConcurrentDictionary<string, Task<Index>> _replacing = new(StringComparer.OrdinalIgnoreCase);
    private readonly CancellationTokenSource _stop = new();
    private readonly Task _housekeeping;

    private IndexStore(DocumentDatabase database, IndexingOptions options, ILoggerFactory loggerFactory)
    {
        _database = database;
        _options = options;
        _logger = loggerFactory.CreateLogger($"Jackdaw.Indexes.{database.Name}");
        database.RegisterTrees("Indexes", TreeName);
        IndexesFolder = Path.Combine(database.Folder, "Indexes");
        Directory.CreateDirectory(IndexesFolder);
        foreach (var definition in ReadDefinitions())
        {
            try
            {
                _indexes[definition.Name] = OpenIndex(definition);
            }
            catch (Exception e)
            {
                _logger.LogError(e, "Index {Index} of database {Database} could not be opened", definition.Name, database.Name);
            }
        }
        RemoveOrphanFolders();
        _housekeeping = Task.Run(HousekeepingAsync);
    }

    /// <summary>The factory a database's options list: builds the store of each database as it opens.</summary>
    public static Func<DocumentDatabase, IAsyncDisposable> Component(IndexingOptions options, ILoggerFactory loggerFactory) =>
        database => new IndexStore(database, options, loggerFactory);

    /// <summary>The store of <paramref name="database"/>.</summary>
    public static IndexStore Of(DocumentDatabase database) =>
        database.GetComponent<IndexStore>() ?? throw new InvalidOperationException($"Database '{database.Name}' was opened without indexes.");

    public string IndexesFolder { get; }

    private System.Collections.Immutable.ImmutableList<Action<Index, IndexingBatch>> _batchListeners = [];

    /// <summary>
    /// Calls <paramref name="listener"/> with every batch of every index of this database, on the
    /// index's loop: it must be quick and must not block (queue the work). Dispose to stop.
    /// </summary>
    public IDisposable SubscribeBatches(Action<Index, IndexingBatch> listener)
    {
        ImmutableInterlocked.Update(ref _batchListeners, l => l.Add(listener));
        return new Unsubscriber(() => ImmutableInterlocked.Update(ref _batchListeners, l => l.Remove(listener)));
    }

    private sealed class Unsubscriber(Action action) : IDisposable
    {
        private int _done;

        public void Dispose()
        {
            if (Interlocked.Exchange(ref _done, 1) == 0)
                action();
        }
    }

    private void OnBatch(Index index, IndexingBatch batch)
    {
        foreach (var listener in Volatile.Read(ref _batchListeners))
            listener(index, batch);
    }

    public IReadOnlyCollection<Index> Indexes => _indexes.Values.OrderBy(i => i.Name, StringComparer.OrdinalIgnoreCase).ToList();

    public Index? TryGet(string name) => _indexes.TryGetValue(name, out var index) ? index : null;

    public Index Get(string name) => TryGet(name) ?? throw new IndexDoesNotExistException(name);

    /// <summary>The index of that name; while it is being rebuilt under its name, the rebuilt one.</summary>
    /// <exception cref="IndexDoesNotExistException">No index has that name.</exception>
    public async ValueTask<Index> GetAsync(string name)
    {
        if (_indexes.TryGetValue(name, out var index) && !index.IsDisposed)
            return index;
        if (_replacing.TryGetValue(name, out var replacement))
            return await replacement.ConfigureAwait(false);
        return TryGet(name) ?? throw new IndexDoesNotExistException(name);
    }

    /// <summary>Closes <paramref name="old"/> and opens <paramref name="definition"/> under the same name; queries meanwhile wait for it.</summary>
    private async Task<Index> RebuildAsync(Index old, IndexDefinition definition, Func<Task>? beforeClose = null)
    {
        var done = new TaskCompletionSource<Index>(TaskCreationOptions.RunContinuationsAsynchronously);
        _replacing[old.Name] = done.Task;
        try
        {
            if (beforeClose is not null)
                await beforeClose().ConfigureAwait(false);
            await old.DisposeAsync().ConfigureAwait(false);
            DeleteFolder(old.Folder);
            if (!string.Equals(old.Name, definition.Name, StringComparison.Ordinal))
                _indexes.TryRemove(old.Name, out _);
            var index = OpenIndex(definition);
            _indexes[definition.Name] = index;
            done.SetResult(index);
            return index;
        }
        catch (Exception e)
        {
            _indexes.TryRemove(old.Name, out _);
            done.SetException(new IndexDoesNotExistException(old.Name));
            _ = done.Task.Exception;
            throw new InvalidOperationException($"Index '{old.Name}' could not be rebuilt: {e.Message}", e);
        }
        finally
        {
            _replacing.TryRemove(old.Name, out _);
        }
    }

    /// <summary>
    /// Creates or changes indexes. Every definition is compiled first: one bad definition changes
    /// nothing. An unchanged definition is left alone; a changed one is rebuilt from the start.
    /// </summary>
    public async Task PutAsync(IReadOnlyList<IndexDefinition> definitions)
    {
        // Compile everything first: a bad definition changes nothing.
        foreach (var definition in definitions)
        {
            if (CreateMapper(definition) is IDisposable compiled)
                compiled.Dispose();
        }
        await _changes.WaitAsync().ConfigureAwait(false);
        try
        {
            foreach (var definition in definitions)
            {
                if (_indexes.TryGetValue(definition.Name, out var existing))
                {
                    if (existing.Definition.SameAs(definition))
                        continue;
                    await RebuildAsync(existing, definition, () => StoreAsync(definition)).ConfigureAwait(false);
                }
                else
                {
                    await StoreAsync(definition).ConfigureAwait(false);
                    _indexes[definition.Name] = OpenIndex(definition);
                }
                _logger.LogInformation("Index {Index} of database {Database} created", definition.Name, _database.Name);
            }
        }
        finally
        {
            _changes.Release();
        }
    }

    /// <summary>Deletes an index: its definition, then its files.</summary>
    public async Task DeleteAsync(string name)
    {
        await _changes.WaitAsync().ConfigureAwait(false);
        try
        {
            var index = Get(name);
            await _database.EnqueueAsync(new StoreDefinitionCommand(index.Name, null)).ConfigureAwait(false);
            _indexes.TryRemove(index.Name, out _);
            await index.DisposeAsync().ConfigureAwait(false);
            DeleteFolder(index.Folder);
            _logger.LogInformation("Index {Index} of database {Database} deleted", index.Name, _database.Name);
        }
        finally
        {
            _changes.Release();
        }
    }

    /// <summary>Rebuilds an index from the start (its files deleted), and clears an error state.</summary>
    public async Task ResetAsync(string name)
    {
        await _changes.WaitAsync().ConfigureAwait(false);
        try
        {
            var index = Get(name);
            await RebuildAsync(index, index.Definition).ConfigureAwait(false);
        }
        finally
        {
            _changes.Release();
        }
    }

    /// <summary>
    /// The auto-index of <paramref name="collection"/> that covers <paramref name="fields"/>: an
    /// existing one, or a new one covering these fields and those of the collection's other
    /// auto-indexes (which are deleted once it has caught up).
    /// </summary>
    public async Task<Index> GetOrCreateAutoIndexAsync(string collection, IReadOnlyCollection<AutoIndexField> fields)
    {
        if (FindAutoIndex(collection, fields) is { } found)
            return found;
        await _changes.WaitAsync().ConfigureAwait(false);
        try
        {
            if (FindAutoIndex(collection, fields) is { } raced)
                return raced;
            var existing = _indexes.Values.Where(i => i.Definition.IsAuto && string.Equals(i.Definition.Collection, collection, StringComparison.OrdinalIgnoreCase)).ToList();
            var widened = existing.SelectMany(i => i.Definition.AutoFields).Concat(fields);
            var definition = IndexDefinition.CreateAuto(existing.FirstOrDefault()?.Definition.Collection ?? collection, widened);
            if (_indexes.TryGetValue(definition.Name, out var same))
                return same;
            await StoreAsync(definition).ConfigureAwait(false);
            var index = OpenIndex(definition);
            _indexes[definition.Name] = index;
            _logger.LogInformation("Auto-index {Index} of database {Database} created for a query", definition.Name, _database.Name);
            return index;
        }
        finally
        {
            _changes.Release();
        }
    }

    private Index? FindAutoIndex(string collection, IReadOnlyCollection<AutoIndexField> fields)
    {
        Index? best = null;
        foreach (var index in _indexes.Values)
        {
            var definition = index.Definition;
            if (!definition.IsAuto || !string.Equals(definition.Collection, collection, StringComparison.OrdinalIgnoreCase))
                continue;
            if (!fields.All(f => definition.AutoFields.Any(a => a.Indexing == f.Indexing && string.Equals(a.Path, f.Path, StringComparison.Ordinal))))
                continue;
            // The widest covering index is the one that stays.
            if (best is null || definition.AutoFields.Count > best.Definition.AutoFields.Count)
                best = index;
        }
        return best;
    }

    /// <summary>Definitions as <c>GET /indexes</c> answers them.</summary>
    public IEnumerable<IndexDefinition> Definitions => Indexes.Select(i => i.Definition);

    private Index OpenIndex(IndexDefinition definition)
    {
        var folder = Path.Combine(IndexesFolder, IndexDefinition.FolderName(definition.Name));
        // Files of an earlier definition of the same name (a crash between storing the new one and
        // deleting the old folder) are not this index's.
        var stamp = Path.Combine(folder, "definition.sha256");
        var fingerprint = Fingerprint(definition);
        if (Directory.Exists(folder) && (!File.Exists(stamp) || File.ReadAllText(stamp) != fingerprint))
            DeleteFolder(folder);
        if (!Directory.Exists(folder))
        {
            Directory.CreateDirectory(folder);
            File.WriteAllText(stamp, fingerprint);
            Storage.Engine.FileDurability.SyncFile(stamp);
            Storage.Engine.FileDurability.SyncFolder(IndexesFolder);
        }
        return Index.Open(_database, definition, CreateMapper(definition), folder, _logger, OnBatch);
    }

    private static string Fingerprint(IndexDefinition definition)
    {
        var json = definition.ToJson();
        json.Remove("CreatedAt");
        return Convert.ToHexString(SHA256.HashData(Encoding.UTF8.GetBytes(json.ToJsonString())));
    }

    /// <summary>The map of a definition; compiling it is where a bad definition is refused.</summary>
    /// <exception cref="IndexCompilationException">The JavaScript does not compile, or is not a map.</exception>
    public static IIndexMapper CreateMapper(IndexDefinition definition) =>
        definition.IsAuto ? new AutoIndexMapper(definition) : JavaScriptMapper.Create(definition);

    private Task StoreAsync(IndexDefinition definition) =>
        _database.EnqueueAsync(new StoreDefinitionCommand(definition.Name, JsonSerializer.SerializeToUtf8Bytes(definition.ToJson())));

    private List<IndexDefinition> ReadDefinitions()
    {
        var definitions = new List<IndexDefinition>();
        using var reader = _database.BeginRead();
        if (reader.GetTree(TreeName) is not { } tree)
            return definitions;
        using var iterator = tree.Iterate();
        var more = iterator.SeekFirst();
        while (more)
        {
            try
            {
                using var json = JsonDocument.Parse(iterator.Value.ToArray());
                definitions.Add(IndexDefinition.FromStored(json.RootElement));
            }
            catch (Exception e)
            {
                _logger.LogError(e, "An index definition of database {Database} cannot be read; it is skipped", _database.Name);
            }
            more = iterator.MoveNext();
        }
        return definitions;
    }

    private void RemoveOrphanFolders()
    {
        var known = _indexes.Values.Select(i => Path.GetFileName(i.Folder)).ToHashSet(StringComparer.Ordinal);
        foreach (var folder in Directory.GetDirectories(IndexesFolder))
        {
            if (!known.Contains(Path.GetFileName(folder)))
                DeleteFolder(folder);
        }
    }

    private void DeleteFolder(string folder)
    {
        try
        {
            if (Directory.Exists(folder))
                Directory.Delete(folder, recursive: true);
        }
        catch (IOException e)
        {
            _logger.LogWarning(e, "Index folder {Folder} could not be deleted; it goes at the next open", folder);
        }
    }

    /// <summary>Idle auto-indexes, and deleting those idle too long; narrower auto-indexes once a wider one caught up.</summary>
    private async Task HousekeepingAsync()
    {
        while (!_stop.IsCancellationRequested)
        {
            try
            {
                await Task.Delay(_options.IdleCheckInterval, _stop.Token).ConfigureAwait(false);
                await RunHousekeepingAsync().ConfigureAwait(false);
            }
            catch (OperationCanceledException)
            {
                return;
            }
            catch (Exception e) when (!_database.IsClosing)
            {
                _logger.LogWarning(e, "Index housekeeping of database {Database} failed; it runs again later", _database.Name);
            }
            catch (Exception)
            {
                return;
            }
        }
    }

    /// <summary>One pass of housekeeping (tests call it directly).</summary>
    public async Task RunHousekeepingAsync()
    {
        var now = DateTime.UtcNow;
        foreach (var index in _indexes.Values.Where(i => i.Definition.IsAuto).ToList())
        {
            var lastUsed = index.LastQueryingTime ?? index.Definition.CreatedAt;
            if (now - lastUsed > _options.AutoIndexDeleteAfter)
            {
                _logger.LogWarning("Auto-index {Index} of database {Database} was not queried since {LastUsed:o}; deleted", index.Name, _database.Name, lastUsed);
                await DeleteAsync(index.Name).ConfigureAwait(false);
            }
            else if (now - lastUsed > _options.AutoIndexIdleAfter && index.State == IndexState.Normal)
            {
                _logger.LogInformation("Auto-index {Index} of database {Database} is idle; it is deleted at {DeleteAt:o} unless queried", index.Name, _database.Name, lastUsed + _options.AutoIndexDeleteAfter);
                index.SetIdle();
            }
        }
        await RemoveCoveredAutoIndexesAsync().ConfigureAwait(false);
    }

    /// <summary>When the auto-index deleted at <paramref name="index"/>'s current idleness runs out (null for static ones).</summary>
    public DateTime? AutoDeleteAt(Index index) =>
        index.Definition.IsAuto ? (index.LastQueryingTime ?? index.Definition.CreatedAt) + _options.AutoIndexDeleteAfter : null;

    /// <summary>Deletes auto-indexes whose fields a wider auto-index of the same collection covers, once that one is not stale.</summary>
    public async Task RemoveCoveredAutoIndexesAsync()
    {
        var autos = _indexes.Values.Where(i => i.Definition.IsAuto).ToList();
        foreach (var narrow in autos)
        {
            var wider = autos.FirstOrDefault(w => w != narrow
                && string.Equals(w.Definition.Collection, narrow.Definition.Collection, StringComparison.OrdinalIgnoreCase)
                && w.Definition.AutoFields.Count > narrow.Definition.AutoFields.Count
                && narrow.Definition.AutoFields.All(f => w.Definition.AutoFields.Contains(f)));
            if (wider is null)
                continue;
            bool stale;
            using (var reader = _database.BeginRead())
                stale = wider.IsStale(reader);
            if (!stale && _indexes.ContainsKey(narrow.Name))
            {
                _logger.LogInformation("Auto-index {Index} is covered by {Wider}, which has caught up; deleted", narrow.Name, wider.Name);
                await DeleteAsync(narrow.Name).ConfigureAwait(false);
            }
        }
    }

    public async ValueTask DisposeAsync()
    {
        _stop.Cancel();
        try
        {
            await _housekeeping.ConfigureAwait(false);
        }
        catch (OperationCanceledException)
        {
        }
        await _changes.WaitAsync().ConfigureAwait(false);
        foreach (var index in _indexes.Values)
            await index.DisposeAsync().ConfigureAwait(false);
        _indexes.Clear();
    }

    /// <summary>Stores (or, with null, removes) a definition, in the merger: durable when it completes.</summary>
    private sealed class StoreDefinitionCommand(string name, byte[]? json) : IMergedCommand<DatabaseTransaction>
    {
        public void Execute(DatabaseTransaction transaction)
        {
            var tree = transaction.GetTree(TreeName);
            var key = Encoding.UTF8.GetBytes(name.ToLowerInvariant());
            if (json is null)
                tree.Delete(key);
            else
                tree.Put(key, json);
        }
    }
}
