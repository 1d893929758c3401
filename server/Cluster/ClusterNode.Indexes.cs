using Jackdaw.Server.Errors;
using Jackdaw.Server.Indexing.Definitions;

namespace Jackdaw.Server.Cluster;

/// <summary>
/// Index definitions, locks and priorities of a clustered database, committed in its record; every
/// node of the database builds them (<see cref="ClusterDatabases"/>). Proposed on the leader: the
/// request's definitions were checked (compiled) before, so a bad one is refused before anything
/// is committed. Each method returns the state's etag with the change, to wait for with
/// <see cref="WaitForLocalAsync"/>.
/// </summary>
public sealed partial class ClusterNode
{
    /// <summary>The record of <paramref name="database"/> when this node is clustered and the cluster has one; null for a lone server.</summary>
    public ClusterDatabaseRecord? RecordOf(string database) =>
        IsClustered && State.Databases.TryGetValue(database, out var record) ? record : null;

    /// <summary>
    /// Puts <paramref name="definitions"/> (each with a lock mode or priority to set, or null) in the
    /// record of <paramref name="database"/>. A definition the record holds already (the same, as
    /// <see cref="IndexDefinition.SameAs"/> says) keeps its committed JSON, so that nothing is rebuilt.
    /// </summary>
    /// <exception cref="IndexLockedException">A changed definition of an index locked with <c>LockedError</c>.</exception>
    /// <exception cref="IndexCompilationException">A field names an analyzer neither built in nor in the record.</exception>
    public async Task<long> PutIndexesAsync(
        string database, IReadOnlyList<(IndexDefinition Definition, IndexLockMode? LockMode, IndexPriority? Priority)> definitions, string commandId, CancellationToken token)
    {
        var record = RequireRecord(database);
        CheckAnalyzers(record, [.. definitions.Select(d => d.Definition)]);
        var changes = new List<ClusterIndexChange>();
        foreach (var (definition, lockMode, priority) in definitions)
        {
            var json = definition.ToJson().ToJsonString();
            if (record.Indexes.TryGetValue(definition.Name, out var existing))
            {
                if (ClusterDatabases.Read(existing.Definition).SameAs(definition))
                {
                    json = existing.Definition;
                }
                else if (existing.LockMode == IndexLockMode.LockedError)
                {
                    throw new IndexLockedException(existing.Name);
                }
            }
            changes.Add(new ClusterIndexChange(definition.Name) { Definition = json, LockMode = lockMode, Priority = priority });
        }
        return await ExecuteIndexCommandAsync(ClusterCommandKind.PutIndexes, record.Name, changes, commandId, token).ConfigureAwait(false);
    }

    /// <summary>
    /// Deletes the index <paramref name="name"/> from the record of <paramref name="database"/>. As on
    /// a lone server: <c>LockedError</c> refuses, <c>LockedIgnore</c> changes nothing.
    /// </summary>
    public async Task<long> DeleteIndexAsync(string database, string name, string commandId, CancellationToken token)
    {
        var record = RequireRecord(database);
        if (!record.Indexes.TryGetValue(name, out var existing))
        {
            if (State.WasApplied(commandId))
            {
                return State.Etag;
            }
            throw new IndexDoesNotExistException(name);
        }
        if (existing.LockMode == IndexLockMode.LockedError)
        {
            throw new IndexLockedException(existing.Name);
        }
        if (existing.LockMode == IndexLockMode.LockedIgnore)
        {
            return State.Etag;
        }
        return await ExecuteIndexCommandAsync(ClusterCommandKind.DeleteIndexes, record.Name, [new ClusterIndexChange(existing.Name)], commandId, token).ConfigureAwait(false);
    }

    /// <summary>Sets the lock mode of the indexes <paramref name="names"/> of <paramref name="database"/>.</summary>
    public Task<long> SetIndexLockAsync(string database, IReadOnlyList<string> names, IndexLockMode mode, string commandId, CancellationToken token) =>
        SetIndexSettingAsync(database, names, ClusterCommandKind.SetIndexLock, name => new ClusterIndexChange(name) { LockMode = mode }, commandId, token);

    /// <summary>Sets the priority of the indexes <paramref name="names"/> of <paramref name="database"/>.</summary>
    public Task<long> SetIndexPriorityAsync(string database, IReadOnlyList<string> names, IndexPriority priority, string commandId, CancellationToken token) =>
        SetIndexSettingAsync(database, names, ClusterCommandKind.SetIndexPriority, name => new ClusterIndexChange(name) { Priority = priority }, commandId, token);

    private async Task<long> SetIndexSettingAsync(
        string database, IReadOnlyList<string> names, ClusterCommandKind kind, Func<string, ClusterIndexChange> change, string commandId, CancellationToken token)
    {
        var record = RequireRecord(database);
        var changes = new List<ClusterIndexChange>();
        foreach (var name in names)
        {
            if (!record.Indexes.TryGetValue(name, out var existing))
            {
                throw new IndexDoesNotExistException(name);
            }
            changes.Add(change(existing.Name));
        }
        if (changes.Count == 0)
        {
            return State.Etag;
        }
        return await ExecuteIndexCommandAsync(kind, record.Name, changes, commandId, token).ConfigureAwait(false);
    }

    /// <summary>
    /// Puts the static indexes of this node's database <paramref name="database"/> in its record (a
    /// lone server founding a cluster): the definition each index is being changed to when a
    /// replacement builds. Auto-indexes stay local (queries make them again on each node).
    /// </summary>
    private async Task RecordLocalIndexesAsync(string database, CancellationToken token)
    {
        try
        {
            var store = Indexing.IndexStore.Of(_databases().GetDatabase(database));
            var definitions = new List<(IndexDefinition, IndexLockMode?, IndexPriority?)>();
            foreach (var index in store.Indexes)
            {
                if (index.ReplacementOf is not null || index.Definition.IsAutoIndex)
                {
                    continue;
                }
                var definition = store.TryGet(Indexing.IndexStore.ReplacementName(index.Name)) is { } replacement
                    ? replacement.Definition.WithName(index.Name)
                    : index.Definition;
                definitions.Add((definition, index.LockMode, index.Priority));
            }
            if (definitions.Count == 0)
            {
                return;
            }
            await PutIndexesAsync(database, definitions, $"found/indexes/{database}", token).ConfigureAwait(false);
        }
        catch (Exception e) when (e is not OperationCanceledException)
        {
            // The cluster is founded all the same; the indexes stay on this node (PUT them again to record them).
            LogIndexesNotRecorded(_logger, e, database);
        }
    }

    [LoggerMessage(EventId = 717, Level = LogLevel.Error, Message = "The indexes of database {Database} could not be put in its record; they stay on this node only")]
    private static partial void LogIndexesNotRecorded(ILogger logger, Exception exception, string database);

    private ClusterDatabaseRecord RequireRecord(string database) =>
        RecordOf(database) ?? throw new DatabaseDoesNotExistException(database);

    private async Task<long> ExecuteIndexCommandAsync(ClusterCommandKind kind, string database, IReadOnlyList<ClusterIndexChange> changes, string commandId, CancellationToken token)
    {
        await ExecuteAsync(new ClusterCommand(commandId, kind) { Database = database, Indexes = changes }, token).ConfigureAwait(false);
        // The state now holds the change: its etag is the index of the change (or of a later one).
        return State.Etag;
    }

    /// <summary>
    /// Waits (up to 30 s) until this node applied the cluster's state up to <paramref name="etag"/>
    /// to its own databases and indexes: an answer given after it holds on the node that gave it.
    /// </summary>
    public async Task WaitForLocalAsync(long etag, CancellationToken token)
    {
        if (!IsClustered || etag <= 0)
        {
            return;
        }
        if (!await _local.WaitForAsync(etag, TimeSpan.FromSeconds(30), token).ConfigureAwait(false))
        {
            LogLocalLagging(_logger, etag, _local.DoneEtag);
        }
    }

    [LoggerMessage(EventId = 716, Level = LogLevel.Warning, Message = "This node had not applied the cluster's state up to {Etag} within 30 s (it is at {Done}); the answer goes anyway")]
    private static partial void LogLocalLagging(ILogger logger, long etag, long done);
}
