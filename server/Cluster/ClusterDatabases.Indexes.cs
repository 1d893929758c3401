using System.Collections.Immutable;
using System.Text.Json;
using Jackdaw.Server.Databases;
using Jackdaw.Server.Indexing;
using Jackdaw.Server.Indexing.Definitions;

namespace Jackdaw.Server.Cluster;

// The index definitions of the records, applied to this node's index stores; and how far this node
// has applied the state, for an answer that waits until its own node has the change.
internal sealed partial class ClusterDatabases
{
    private long _doneEtag;
    private TaskCompletionSource _progress = new(TaskCreationOptions.RunContinuationsAsynchronously);

    /// <summary>The state's <see cref="ClusterState.Etag"/> up to which this node's databases and indexes are in line.</summary>
    public long DoneEtag => Interlocked.Read(ref _doneEtag);

    private void Done(ClusterState after)
    {
        if (after.Etag > Interlocked.Read(ref _doneEtag))
        {
            Interlocked.Exchange(ref _doneEtag, after.Etag);
        }
        Interlocked.Exchange(ref _progress, new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously)).TrySetResult();
    }

    /// <summary>Waits until this node applied the state up to <paramref name="etag"/>; false when <paramref name="timeout"/> ran out first.</summary>
    public async Task<bool> WaitForAsync(long etag, TimeSpan timeout, CancellationToken token)
    {
        var deadline = DateTime.UtcNow + timeout;
        while (true)
        {
            var progress = Volatile.Read(ref _progress);
            if (DoneEtag >= etag)
            {
                return true;
            }
            var left = deadline - DateTime.UtcNow;
            if (left <= TimeSpan.Zero)
            {
                return false;
            }
            try
            {
                await progress.Task.WaitAsync(left, token).ConfigureAwait(false);
            }
            catch (TimeoutException)
            {
                return false;
            }
        }
    }

    /// <summary>
    /// Brings database <paramref name="database"/>'s indexes from <paramref name="before"/> to
    /// <paramref name="after"/>: a new or changed definition is put (a changed one builds side by
    /// side), a lock mode or priority set, a definition gone deleted. An index that fails here (its
    /// definition does not compile on this node, its files cannot be made) is remembered apart and
    /// tried again on its own (<c>ClusterDatabases.IndexRetries.cs</c>); the others go on, and the
    /// acted state advances. False only when the database cannot be opened now: then the whole
    /// comparison is made again later (what was done is found unchanged).
    /// </summary>
    private async Task<bool> ApplyIndexesAsync(DatabasesLandlord landlord, string database, ImmutableSortedDictionary<string, ClusterIndex> before, ImmutableSortedDictionary<string, ClusterIndex> after)
    {
        IndexStore store;
        try
        {
            store = IndexStore.Of(landlord.GetDatabase(database));
        }
        catch (Exception e) when (e is not OperationCanceledException)
        {
            // The database cannot be opened now (being deleted, its storage failed): the other
            // records go on; its indexes are tried again.
            LogIndexFailed(_logger, e, database, "*");
            return false;
        }
        foreach (var (name, index) in after)
        {
            before.TryGetValue(name, out var was);
            if (index == was)
            {
                continue;
            }
            try
            {
                if (was is null || was.Definition != index.Definition || store.TryGet(name) is null)
                {
                    var outcome = await store.ApplyDecidedAsync(Read(index.Definition), index.LockMode, index.Priority).ConfigureAwait(false);
                    LogIndexPut(_logger, database, name, outcome.Outcome);
                }
                else
                {
                    await store.ApplyDecidedSettingsAsync(name, index.LockMode, index.Priority).ConfigureAwait(false);
                }
                IndexApplied(database, name);
            }
            catch (Exception e) when (e is not OperationCanceledException)
            {
                // A later definition (or a delete) replaces a retry pending for the name.
                IndexFailed(database, name, index, e);
            }
        }
        foreach (var name in before.Keys)
        {
            if (after.ContainsKey(name))
            {
                continue;
            }
            try
            {
                if (await store.ApplyDecidedDeleteAsync(name).ConfigureAwait(false))
                {
                    LogIndexDeleted(_logger, database, name);
                }
                IndexApplied(database, name);
            }
            catch (Exception e) when (e is not OperationCanceledException)
            {
                IndexFailed(database, name, null, e, had: before[name]);
            }
        }
        return true;
    }

    /// <summary>A definition as a record holds it (<see cref="IndexDefinition.ToJson"/>).</summary>
    public static IndexDefinition Read(string definition)
    {
        using var json = JsonDocument.Parse(definition);
        return IndexDefinition.FromStored(json.RootElement);
    }

    [LoggerMessage(EventId = 713, Level = LogLevel.Information, Message = "Database {Database}: index {Index} put as the cluster's record says ({Outcome})")]
    private static partial void LogIndexPut(ILogger logger, string database, string index, IndexStore.PutOutcome outcome);

    [LoggerMessage(EventId = 714, Level = LogLevel.Information, Message = "Database {Database}: index {Index} deleted as the cluster's record says")]
    private static partial void LogIndexDeleted(ILogger logger, string database, string index);

    [LoggerMessage(EventId = 715, Level = LogLevel.Error, Message = "Database {Database}: index {Index} could not be brought in line with the cluster's record")]
    private static partial void LogIndexFailed(ILogger logger, Exception exception, string database, string index);
}
