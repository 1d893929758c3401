using Jackdaw.Server.Databases;
using Jackdaw.Server.Indexing.Definitions;

namespace Jackdaw.Server.Indexing;

// Side-by-side replacement: a changed definition of an index X is built beside it as
// ReplacementOf/X while X answers queries, then swapped in under X's name in one transaction.
public sealed partial class IndexStore
{
    public const string ReplacementPrefix = "ReplacementOf/";

    /// <summary>The name a replacement of <paramref name="name"/> is built under, beside it.</summary>
    public static string ReplacementName(string name) => ReplacementPrefix + name;

    /// <param name="lockMode">The lock mode a new index is created with (Unlock when null).</param>
    /// <param name="priority">The priority a new index is created with (Normal when null).</param>
    private async Task<PutResult> PutOneAsync(IndexDefinition definition, bool ignoreLock = false, IndexLockMode? lockMode = null, IndexPriority? priority = null)
    {
        if (!_indexes.TryGetValue(definition.Name, out var existing))
        {
            var record = new IndexRecord(definition, IndexRecord.NewFolder(definition.Name), null, lockMode ?? IndexLockMode.Unlock, priority ?? IndexPriority.Normal, false);
            await CreateAsync(record, index =>
            {
                _indexes[definition.Name] = index;
                _logger.LogInformation("Index {Index} of database {Database} created", definition.Name, _database.Name);
                OnIndexEvent(definition.Name, IndexEventKind.Added);
            }).ConfigureAwait(false);
            return new PutResult(definition.Name, PutOutcome.Created);
        }
        var replacementName = ReplacementName(existing.Name);
        var replacement = TryGet(replacementName);
        if (existing.Definition.SameAs(definition))
        {
            // Back to the current definition: a replacement building is no longer wanted.
            if (replacement is not null)
            {
                await DropAsync(replacement).ConfigureAwait(false);
            }
            return new PutResult(existing.Name, PutOutcome.Unchanged);
        }
        if (existing.LockMode == IndexLockMode.LockedIgnore && !ignoreLock)
        {
            _logger.LogInformation("Index {Index} is locked (LockedIgnore): its changed definition is ignored", existing.Name);
            return new PutResult(existing.Name, PutOutcome.IgnoredLocked);
        }
        var renamed = definition.WithName(replacementName);
        if (replacement is not null)
        {
            if (replacement.Definition.SameAs(renamed))
            {
                return new PutResult(existing.Name, PutOutcome.ReplacementStarted);
            }
            await DropAsync(replacement).ConfigureAwait(false);
        }
        var replacementRecord = new IndexRecord(renamed, IndexRecord.NewFolder(replacementName), existing.Name, existing.LockMode, existing.Priority, false);
        await CreateAsync(replacementRecord, index =>
        {
            _indexes[replacementName] = index;
            OnIndexEvent(replacementName, IndexEventKind.Added);
            _logger.LogInformation("Index {Index} of database {Database}: a changed definition builds side by side as {Replacement}", existing.Name, _database.Name, replacementName);
        }).ConfigureAwait(false);
        return new PutResult(existing.Name, PutOutcome.ReplacementStarted);
    }

    /// <summary>
    /// Swaps a replacement in for the index it replaces: one transaction stores the new definition
    /// under the index's name (pointing at the replacement's folder) and removes the replacement's
    /// record; then the name resolves to the replacement (a query runs wholly on the old or wholly on
    /// the new), and the old index's files go once no query reads them. With
    /// <paramref name="onlyIfCaughtUp"/>, nothing happens while the replacement is stale.
    /// </summary>
    /// <returns>Whether a swap happened.</returns>
    public async Task<bool> SwapAsync(string name, bool onlyIfCaughtUp)
    {
        await _changes.WaitAsync().ConfigureAwait(false);
        try
        {
            var replacement = TryGet(ReplacementName(name));
            if (replacement is null || replacement.IsDisposed)
            {
                return false;
            }
            if (onlyIfCaughtUp)
            {
                using var reader = _database.BeginRead();
                if (replacement.IsStale(reader) || replacement.State != IndexState.Normal)
                {
                    return false;
                }
            }
            var original = replacement.ReplacementOf!;
            var old = TryGet(original);
            var definition = replacement.Definition.WithName(old?.Name ?? original);
            var record = new IndexRecord(definition, Path.GetFileName(replacement.Folder), null, old?.LockMode ?? replacement.LockMode, old?.Priority ?? replacement.Priority, old?.Disabled ?? false);
            // One transaction: the index's record takes the replacement's definition and folder, the replacement's record goes.
            await _database.EnqueueAsync(new JsonRecords.StoreCommand(TreeName, [(record.Name, record.ToJson()), (replacement.Name, null)])).ConfigureAwait(false);
            replacement.BecomeReplaced(definition);
            _indexes[definition.Name] = replacement;
            _indexes.TryRemove(ReplacementName(definition.Name), out _);
            if (old is not null)
            {
                await RetireAsync(old).ConfigureAwait(false);
            }
            // Its output documents (OutputReduceToCollection) only now that the old index wrote its last.
            replacement.ReleaseOutput();
            _logger.LogInformation("Index {Index} of database {Database}: its replacement has caught up and was swapped in", definition.Name, _database.Name);
            OnIndexEvent(definition.Name, IndexEventKind.ReplacementSwapped);
            return true;
        }
        finally
        {
            _changes.Release();
        }
    }

    /// <summary>Closes an index that no name resolves to any more; its files go once no query reads them.</summary>
    private async Task RetireAsync(Index index)
    {
        await index.DisposeAsync().ConfigureAwait(false);
        index.DeleteFilesWhenUnused(() => DeleteFolder(index.Folder));
    }

    /// <summary>Deletes an index's record and, once unused, its files (under the changes lock).</summary>
    private async Task DropAsync(Index index)
    {
        await _database.EnqueueAsync(new JsonRecords.StoreCommand(TreeName, index.Name, null)).ConfigureAwait(false);
        _indexes.TryRemove(index.Name, out _);
        await RetireAsync(index).ConfigureAwait(false);
        OnIndexEvent(index.Name, IndexEventKind.Removed);
    }
}
