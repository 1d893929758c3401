using System.Security.Cryptography;
using System.Text;
using Jackdaw.Server.Databases;
using Jackdaw.Server.Errors;
using Jackdaw.Server.Indexing.Definitions;
using Jackdaw.Server.Indexing.JavaScript;
using Jackdaw.Server.Indexing.Lucene;
using Jackdaw.Server.Indexing.Mapping;
using Microsoft.Extensions.Logging;
using System.Collections.Immutable;
using NonBlocking;

namespace Jackdaw.Server.Indexing;

/// <summary>
/// The indexes of one database: their definitions (JSON in the database's <c>Indexes</c> tree,
/// keyed by the lowercased name) and their Lucene folders (<c>{database}/Indexes/{folder name}</c>).
/// Built on the database when it opens (a database component), so every index resumes its loop
/// at once after a restart.
/// </summary>
public sealed partial class IndexStore : IAsyncDisposable
{
    public const string TreeName = "Indexes";

    private readonly DocumentDatabase _database;
    private readonly IndexingOptions _options;
    private readonly ILogger _logger;
    private readonly IAutoIndexSink _autoIndexes;
    private readonly ConcurrentDictionary<string, Index> _indexes = new(StringComparer.OrdinalIgnoreCase);
    private readonly SemaphoreSlim _changes = new(1, 1);

    // Indexes being rebuilt under their name (reset, changed definition): queries wait for the new one.
    private readonly ConcurrentDictionary<string, Task<Index>> _replacing = new(StringComparer.OrdinalIgnoreCase);

    private readonly CancellationTokenSource _stop = new();
    private readonly Task _housekeeping;
    private System.Collections.Immutable.ImmutableList<Action<Index, IndexingBatch>> _batchListeners = [];
    private System.Collections.Immutable.ImmutableList<Action<string, IndexEventKind>> _eventListeners = [];
    private volatile bool _paused;

    private IndexStore(DocumentDatabase database, IndexingOptions options, ILoggerFactory loggerFactory, IAutoIndexSink autoIndexes)
    {
        _database = database;
        _options = options;
        _autoIndexes = autoIndexes;
        _logger = loggerFactory.CreateLogger($"Jackdaw.Indexes.{database.Name}");
        database.RegisterTrees("Indexes", TreeName);
        // Before the indexes: they resolve the analyzers their fields name as they open.
        Analyzers = new Analysis.AnalyzerStore(database, _logger);
        IndexesFolder = Path.Combine(database.Folder, "Indexes");
        Directory.CreateDirectory(IndexesFolder);
        var records = ReadRecords();
        foreach (var record in records)
        {
            try
            {
                _indexes[record.Name] = OpenIndex(record);
            }
            catch (Exception e)
            {
                _logger.LogError(e, "Index {Index} of database {Database} could not be opened", record.Name, database.Name);
            }
        }
        RemoveOrphanFolders(records);
        _housekeeping = Task.Run(HousekeepingAsync);
    }

    /// <summary>The factory a database's options list: builds the store of each database as it opens.</summary>
    /// <param name="autoIndexes">Told of the auto-indexes created and deleted here (a cluster records them); none by default.</param>
    public static Func<DocumentDatabase, IAsyncDisposable> Component(IndexingOptions options, ILoggerFactory loggerFactory, IAutoIndexSink? autoIndexes = null) =>
        database => new IndexStore(database, options, loggerFactory, autoIndexes ?? NoAutoIndexSink.Instance);

    /// <summary>The store of <paramref name="database"/>.</summary>
    public static IndexStore Of(DocumentDatabase database) =>
        database.GetComponent<IndexStore>() ?? throw new InvalidOperationException($"Database '{database.Name}' was opened without indexes.");

    public string IndexesFolder { get; }

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
            {
                action();
            }
        }
    }

    private void OnBatch(Index index, IndexingBatch batch)
    {
        foreach (var listener in Volatile.Read(ref _batchListeners))
        {
            listener(index, batch);
        }
    }

    /// <summary>
    /// Calls <paramref name="listener"/> with the name of every index added, removed or swapped in
    /// from now on (the changes feed), on the thread that made the change: it must be quick and must
    /// not block. Dispose to stop.
    /// </summary>
    public IDisposable SubscribeIndexEvents(Action<string, IndexEventKind> listener)
    {
        ImmutableInterlocked.Update(ref _eventListeners, l => l.Add(listener));
        return new Unsubscriber(() => ImmutableInterlocked.Update(ref _eventListeners, l => l.Remove(listener)));
    }

    private void OnIndexEvent(string name, IndexEventKind kind)
    {
        foreach (var listener in Volatile.Read(ref _eventListeners))
        {
            try
            {
                listener(name, kind);
            }
            catch (Exception e)
            {
                _logger.LogError(e, "An index event listener failed on {Kind} of {Index}", kind, name);
            }
        }
    }

    public IReadOnlyCollection<Index> Indexes => _indexes.Values.OrderBy(i => i.Name, StringComparer.OrdinalIgnoreCase).ToList();

    public Index? TryGet(string name) => _indexes.TryGetValue(name, out var index) ? index : null;

    public Index Get(string name) => TryGet(name) ?? throw new IndexDoesNotExistException(name);

    /// <summary>The index of that name; while it is being rebuilt under its name, the rebuilt one.</summary>
    /// <exception cref="IndexDoesNotExistException">No index has that name.</exception>
    public async ValueTask<Index> GetAsync(string name)
    {
        if (_indexes.TryGetValue(name, out var index) && !index.IsDisposed)
        {
            return index;
        }
        if (_replacing.TryGetValue(name, out var replacement))
        {
            return await replacement.ConfigureAwait(false);
        }
        return TryGet(name) ?? throw new IndexDoesNotExistException(name);
    }

    /// <summary>Definitions as <c>GET /indexes</c> answers them.</summary>
    public IEnumerable<IndexDefinition> Definitions => Indexes.Select(i => i.Definition);

    /// <summary>
    /// Creates or changes indexes. Every definition is compiled first, and locks are checked: one bad
    /// definition (or one refused by <see cref="IndexLockMode.LockedError"/>) changes nothing. An
    /// unchanged definition is left alone; a changed one is built side by side as
    /// <c>ReplacementOf/{Name}</c> while the index keeps answering, and swapped in once it has caught
    /// up. A third definition while a replacement builds replaces the replacement. Returns, per
    /// definition, what happened.
    /// </summary>
    public async Task<IReadOnlyList<PutResult>> PutAsync(IReadOnlyList<IndexDefinition> definitions)
    {
        // Compile everything first: a bad definition changes nothing.
        Validate(definitions);
        await _changes.WaitAsync().ConfigureAwait(false);
        try
        {
            foreach (var definition in definitions)
            {
                if (_indexes.TryGetValue(definition.Name, out var existing) && existing.LockMode == IndexLockMode.LockedError && !existing.Definition.SameAs(definition))
                {
                    throw new IndexLockedException(existing.Name);
                }
            }
            var results = new List<PutResult>();
            foreach (var definition in definitions)
            {
                results.Add(await PutOneAsync(definition).ConfigureAwait(false));
            }
            return results;
        }
        finally
        {
            _changes.Release();
        }
    }

    /// <summary>What a PUT did with one definition.</summary>
    public enum PutOutcome
    {
        Created,
        Unchanged,
        ReplacementStarted,
        IgnoredLocked,
    }

    public sealed record PutResult(string Name, PutOutcome Outcome);

    /// <summary>Persists and applies lock mode, priority or disabled of an index.</summary>
    public async Task UpdateSettingsAsync(string name, Func<Index, IndexRecord, IndexRecord> change)
    {
        await _changes.WaitAsync().ConfigureAwait(false);
        try
        {
            var index = Get(name);
            var record = change(index, RecordOf(index));
            await StoreAsync(record).ConfigureAwait(false);
            index.LockMode = record.LockMode;
            index.Priority = record.Priority;
            index.Disabled = record.Disabled;
            // The replacement follows its index's lock mode and priority.
            if (TryGet(ReplacementName(index.Name)) is { } replacement)
            {
                var replacementRecord = RecordOf(replacement) with { LockMode = record.LockMode, Priority = record.Priority };
                await StoreAsync(replacementRecord).ConfigureAwait(false);
                replacement.LockMode = record.LockMode;
                replacement.Priority = record.Priority;
            }
        }
        finally
        {
            _changes.Release();
        }
    }

    private static IndexRecord RecordOf(Index index) =>
        new(index.Definition, Path.GetFileName(index.Folder), index.ReplacementOf, index.LockMode, index.Priority, index.Disabled);

    /// <summary>Whether indexing is stopped for this run of the server (<c>/admin/indexes/stop</c>); not persisted.</summary>
    public bool IsPaused => _paused;

    /// <summary>Stops (or starts again) every index's indexing until the database closes.</summary>
    public void SetPaused(bool paused)
    {
        _paused = paused;
        if (!paused)
        {
            foreach (var index in _indexes.Values)
            {
                index.Resume();
            }
        }
    }

    /// <summary>Deletes an index: its definition, then its files. A request respects its lock mode; housekeeping does not (auto-indexes are never locked).</summary>
    public async Task DeleteAsync(string name, bool respectLock = false)
    {
        await _changes.WaitAsync().ConfigureAwait(false);
        try
        {
            var index = Get(name);
            // As RavenDB: a locked index is not deleted either (LockedIgnore: silently).
            if (respectLock && index.LockMode == IndexLockMode.LockedError)
            {
                throw new IndexLockedException(index.Name);
            }
            if (respectLock && index.LockMode == IndexLockMode.LockedIgnore)
            {
                _logger.LogInformation("Index {Index} is locked (LockedIgnore): its deletion is ignored", index.Name);
                return;
            }
            if (TryGet(ReplacementName(index.Name)) is { } replacement)
            {
                await DropAsync(replacement).ConfigureAwait(false);
            }
            await DropAsync(index).ConfigureAwait(false);
            // Its output documents (OutputReduceToCollection) go with it.
            await ReduceOutputDeletion.RunAsync(_database, index.Definition).ConfigureAwait(false);
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
            // A map-reduce's output documents go (once the old loop wrote its last) and are written again from the rebuilt results.
            await RebuildAsync(index, RecordOf(index), () => ReduceOutputDeletion.RunAsync(_database, index.Definition)).ConfigureAwait(false);
        }
        finally
        {
            _changes.Release();
        }
    }

    /// <summary>Closes <paramref name="old"/> and opens <paramref name="definition"/> under the same name; queries meanwhile wait for it.</summary>
    private async Task<Index> RebuildAsync(Index old, IndexRecord record, Func<Task>? afterClose = null)
    {
        var definition = record.Definition;
        var done = new TaskCompletionSource<Index>(TaskCreationOptions.RunContinuationsAsynchronously);
        _replacing[old.Name] = done.Task;
        try
        {
            await old.DisposeAsync().ConfigureAwait(false);
            if (afterClose is not null)
            {
                await afterClose().ConfigureAwait(false);
            }
            DeleteFolder(old.Folder);
            if (!string.Equals(old.Name, definition.Name, StringComparison.Ordinal))
            {
                _indexes.TryRemove(old.Name, out _);
            }
            var index = OpenIndex(record);
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
    /// Waits until the indexes named, or else every index a change in <paramref name="lowerCollections"/>
    /// may affect, have indexed every change up to <paramref name="etag"/>, at most <paramref name="timeout"/>
    /// in all (RavenDB's wait for indexes after a save). An index that cannot get there (stopped,
    /// disabled, in error) is not waited for. Returns the ones that did not get there, and why.
    /// </summary>
    /// <exception cref="IndexDoesNotExistException">A named index does not exist.</exception>
    public async Task<IReadOnlyList<(string Name, string Why)>> WaitForIndexesAsync(long etag, IReadOnlyList<string> names, IReadOnlySet<string> lowerCollections, TimeSpan timeout, CancellationToken cancellationToken)
    {
        var indexes = names.Count > 0
            ? names.Select(Get).ToList()
            : Indexes.Where(i => i.ReplacementOf is null && i.IsAffectedBy(lowerCollections)).ToList();
        var lagging = new List<(string, string)>();
        var deadline = DateTime.UtcNow + timeout;
        foreach (var index in indexes)
        {
            if (index.WhyNotIndexing is { } why)
            {
                lagging.Add((index.Name, why));
                continue;
            }
            var left = deadline - DateTime.UtcNow;
            if (left <= TimeSpan.Zero || !await index.WaitForEtagAsync(etag, left, cancellationToken).ConfigureAwait(false))
            {
                lagging.Add((index.Name, index.WhyNotIndexing ?? $"it had not indexed up to etag {etag} within {timeout}"));
            }
        }
        return lagging;
    }

    private Index OpenIndex(IndexRecord record, bool start = true)
    {
        var definition = record.Definition;
        var folder = Path.Combine(IndexesFolder, record.Folder);
        // Files of another definition (a crash between storing a definition and deleting an old
        // folder), or written with another version of an analyzer it uses (a crash between storing
        // the analyzer and rebuilding the index), are not this index's. The name is not part of it:
        // a replacement keeps its files when it takes the name of the index it replaced.
        var stamp = Path.Combine(folder, "definition.sha256");
        var analyzers = Analyzers.Resolve(definition);
        var fingerprint = Fingerprint(definition, analyzers.Signature);
        if (Directory.Exists(folder) && (!File.Exists(stamp) || File.ReadAllText(stamp) != fingerprint))
        {
            DeleteFolder(folder);
        }
        if (!Directory.Exists(folder))
        {
            Directory.CreateDirectory(folder);
            File.WriteAllText(stamp, fingerprint);
            Storage.Engine.FileDurability.SyncFile(stamp);
            Storage.Engine.FileDurability.SyncFolder(IndexesFolder);
        }
        var index = Index.Open(_database, record, CreateMapper(definition), analyzers, folder, _logger, () => _paused, OnBatch, OnCaughtUp, _options.OpenDirectory, start);
        if (record.ReplacementOf is { } original)
        {
            index.OriginalQueried = () => _indexes.TryGetValue(original, out var answering) && answering != index && answering.QueriedWithin(Index.YieldWindow);
        }
        return index;
    }

    /// <summary>A replacement that caught up is swapped in; a wider auto-index that caught up retires the narrower ones.</summary>
    private void OnCaughtUp(Index index)
    {
        if (index.ReplacementOf is { } original)
        {
            _ = Task.Run(async () =>
            {
                try
                {
                    await SwapAsync(original, onlyIfCaughtUp: true).ConfigureAwait(false);
                }
                catch (Exception e) when (!_database.IsClosing)
                {
                    _logger.LogWarning(e, "Index {Index}: the swap of its replacement failed; it is tried again when the replacement next catches up", original);
                }
                catch (Exception)
                {
                }
            });
        }
        else if (index.Definition.IsAuto && _indexes.Values.Any(i => i != index && i.Definition.IsAuto
            && string.Equals(i.Definition.Collection, index.Definition.Collection, StringComparison.OrdinalIgnoreCase)
            && i.Definition.AutoFields.Count < index.Definition.AutoFields.Count
            && i.Definition.AutoFields.All(f => index.Definition.AutoFields.Contains(f))) || RetiresAutoMapReduce(index))
        {
            _ = Task.Run(async () =>
            {
                try
                {
                    await RemoveCoveredAutoIndexesAsync().ConfigureAwait(false);
                }
                catch (Exception e) when (!_database.IsClosing)
                {
                    _logger.LogWarning(e, "Removing auto-indexes covered by {Index} failed; housekeeping tries again", index.Name);
                }
                catch (Exception)
                {
                }
            });
        }
    }

    private static string Fingerprint(IndexDefinition definition, string? analyzers)
    {
        var json = definition.ToJson();
        json.Remove("CreatedAt");
        json.Remove("Name");
        json["Layout"] = LuceneFields.LayoutVersion;
        // The recipes of the database analyzers it uses: files written with another version of one are not this index's.
        if (analyzers is not null)
        {
            json["Analyzers"] = analyzers;
        }
        return Convert.ToHexString(SHA256.HashData(Encoding.UTF8.GetBytes(json.ToJsonString())));
    }

    /// <summary>The map of a definition; compiling it is where a bad definition is refused.</summary>
    /// <exception cref="IndexCompilationException">The JavaScript does not compile, or is not a map.</exception>
    public static IIndexMapper CreateMapper(IndexDefinition definition) => definition.Type switch
    {
        IndexType.AutoMap => new AutoIndexMapper(definition),
        IndexType.AutoMapReduce => new AutoMapReduceMapper(definition),
        IndexType.MapReduce => CheckOutput(definition, JavaScriptMapper.Compile(definition.Name, definition.Maps, additionalSources: definition.AdditionalSources, reduce: definition.Reduce)),
        _ => JavaScriptMapper.Compile(definition.Name, definition.Maps, additionalSources: definition.AdditionalSources),
    };

    // As RavenDB: an index may not write its results into a collection it maps (it would feed itself).
    private static JavaScriptMapper CheckOutput(IndexDefinition definition, JavaScriptMapper mapper)
    {
        var output = definition.ReduceSpec?.OutputReduceToCollection;
        var references = definition.ReduceSpec?.ReferencesCollection;
        foreach (var name in new[] { output, references })
        {
            // Output ids are {collection}/{hash}: the collection must make valid ids.
            if (name is not null && Documents.DocumentIds.Validate(name + "/1") is { } problem)
            {
                mapper.Dispose();
                throw new IndexCompilationException(definition.Name, $"its output collection '{name}' cannot name documents: {problem}");
            }
        }
        foreach (var collection in mapper.Collections)
        {
            if (string.Equals(collection, output, StringComparison.OrdinalIgnoreCase) || string.Equals(collection, references, StringComparison.OrdinalIgnoreCase))
            {
                mapper.Dispose();
                throw new IndexCompilationException(definition.Name, $"it maps the collection '{collection}' and writes its results into it (OutputReduceToCollection); an index cannot output to a collection it reads.");
            }
        }
        return mapper;
    }

    /// <summary>
    /// A new index: opened first, then its definition stored. A disk that fails creating its files
    /// leaves no stored definition without an open index; a definition that cannot be stored takes
    /// its files with it (and a crash in between leaves an orphan folder, removed at the next open).
    /// Its loop starts after <paramref name="added"/> (which makes it known and announces it), so
    /// that no batch of it is announced before it is.
    /// </summary>
    private async Task<Index> CreateAsync(IndexRecord record, Action<Index> added)
    {
        Index index;
        try
        {
            index = OpenIndex(record, start: false);
        }
        catch
        {
            DeleteFolder(Path.Combine(IndexesFolder, record.Folder));
            throw;
        }
        try
        {
            await StoreAsync(record).ConfigureAwait(false);
        }
        catch
        {
            await index.DisposeAsync().ConfigureAwait(false);
            DeleteFolder(index.Folder);
            throw;
        }
        added(index);
        index.Start();
        return index;
    }

    private Task StoreAsync(IndexRecord record) =>
        _database.EnqueueAsync(new JsonRecords.StoreCommand(TreeName, record.Name, record.ToJson()));

    private List<IndexRecord> ReadRecords()
    {
        var records = new List<IndexRecord>();
        JsonRecords.ReadAll(_database, TreeName, json => records.Add(IndexRecord.FromJson(json)),
            e => _logger.LogError(e, "An index definition of database {Database} cannot be read; it is skipped", _database.Name));
        // A replacement whose index is gone (deleted while it was building) is dropped with it.
        var names = records.Where(r => r.ReplacementOf is null).Select(r => r.Name).ToHashSet(StringComparer.OrdinalIgnoreCase);
        foreach (var orphan in records.Where(r => r.ReplacementOf is not null && !names.Contains(r.ReplacementOf)).ToList())
        {
            _logger.LogWarning("Replacement {Index} of database {Database} replaces nothing; dropped", orphan.Name, _database.Name);
            _database.EnqueueAsync(new JsonRecords.StoreCommand(TreeName, orphan.Name, null)).GetAwaiter().GetResult();
            records.Remove(orphan);
        }
        return records;
    }

    private void RemoveOrphanFolders(List<IndexRecord> records)
    {
        var known = records.Select(r => r.Folder).ToHashSet(StringComparer.Ordinal);
        foreach (var folder in Directory.GetDirectories(IndexesFolder))
        {
            if (!known.Contains(Path.GetFileName(folder)))
            {
                DeleteFolder(folder);
            }
        }
    }

    private void DeleteFolder(string folder)
    {
        try
        {
            if (Directory.Exists(folder))
            {
                Directory.Delete(folder, recursive: true);
            }
        }
        catch (IOException e)
        {
            _logger.LogWarning(e, "Index folder {Folder} could not be deleted; it goes at the next open", folder);
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
        {
            await index.DisposeAsync().ConfigureAwait(false);
        }
        _indexes.Clear();
    }
}
