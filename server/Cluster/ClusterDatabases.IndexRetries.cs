using Jackdaw.Server.Indexing;

namespace Jackdaw.Server.Cluster;

// Indexes that failed to apply on this node, remembered apart from the acted state: the acted state
// advances past them (so that what follows is not applied again at every retry), and each is tried
// again on its own, 5 s after it failed, the wait doubling up to a minute while it keeps failing.
// A later definition of the name, or its delete, replaces the retry (the comparison of states
// applies it, and it succeeds or fails afresh). Across a restart: every index of the records this
// node holds that its index store does not have as recorded is tried again at start
// (RecomputeFailedIndexes); a delete that failed is kept in the acted state as it is saved
// (WithFailedDeletes), so the next start's comparison deletes it again. All of it runs on the loop.
internal sealed partial class ClusterDatabases
{
    /// <summary>
    /// An index that failed here: what was wanted when it failed (null: a delete), how often, and
    /// when it is tried next. <see cref="Had"/>: for a failed delete, the record's index this node
    /// still holds (what the saved acted state keeps), when known.
    /// </summary>
    private sealed record FailedIndex(ClusterIndex? Wanted, int Attempts, TimeSpan Delay, DateTime NextAt, ClusterIndex? Had = null);

    // Database → index name → failure (both ignoring case, as their names do). Only the loop touches it.
    private readonly Dictionary<string, Dictionary<string, FailedIndex>> _failedIndexes = new(StringComparer.OrdinalIgnoreCase);
    // When the pending wake-up for the failed indexes is due (ticks), 0 when none is pending: the
    // wake-up clears it, so that one that fires a moment before its index is due is followed by another.
    private long _indexWakeAt;
    // The newest state applied (whole or not): the failed indexes are brought in line with its records.
    private ClusterState _lastApplied = ClusterState.Empty;

    /// <param name="had">For a delete: the index the record had (null when a retry fails again: the one remembered stays).</param>
    private void IndexFailed(string database, string name, ClusterIndex? wanted, Exception exception, ClusterIndex? had = null)
    {
        if (!_failedIndexes.TryGetValue(database, out var failures))
        {
            _failedIndexes[database] = failures = new Dictionary<string, FailedIndex>(StringComparer.OrdinalIgnoreCase);
        }
        // The same definition failing again waits longer; another one (or a delete) starts afresh.
        var failure = failures.TryGetValue(name, out var was) && was.Wanted == wanted
            ? new FailedIndex(wanted, was.Attempts + 1, was.Delay * 2 < RetryAtMost ? was.Delay * 2 : RetryAtMost, default)
            : new FailedIndex(wanted, 1, RetryAfter, default);
        failure = failure with { NextAt = DateTime.UtcNow + failure.Delay, Had = wanted is null ? had ?? was?.Had : null };
        failures[name] = failure;
        LogIndexFailing(_logger, exception, database, name, failure.Attempts, (int)failure.Delay.TotalSeconds);
    }

    private void IndexApplied(string database, string name)
    {
        if (!_failedIndexes.TryGetValue(database, out var failures) || !failures.Remove(name, out var was))
        {
            return;
        }
        if (failures.Count == 0)
        {
            _failedIndexes.Remove(database);
        }
        if (was.Attempts > 0)
        {
            LogIndexRecovered(_logger, database, name, was.Attempts);
        }
    }

    /// <summary>How many deletes failed here and are still pending (each keeps its index in the saved acted state).</summary>
    private int FailedDeletes => _failedIndexes.Values.Sum(failures => failures.Values.Count(f => f is { Wanted: null, Had: not null }));

    /// <summary>
    /// <paramref name="acted"/> as it is saved: each index whose delete failed here (and is still
    /// pending) stays in its record, so that a restart before the retry succeeds compares the
    /// record without it against this and deletes it again. A database the acted state no longer
    /// holds is left out (its deletion removed its indexes with it).
    /// </summary>
    private ClusterState WithFailedDeletes(ClusterState acted)
    {
        var databases = acted.Databases;
        foreach (var (database, failures) in _failedIndexes)
        {
            if (!databases.TryGetValue(database, out var record))
            {
                continue;
            }
            var indexes = record.Indexes;
            foreach (var (name, failure) in failures)
            {
                if (failure is { Wanted: null, Had: { } had } && !indexes.ContainsKey(name))
                {
                    indexes = indexes.Add(name, had);
                }
            }
            if (indexes != record.Indexes)
            {
                databases = databases.SetItem(database, record with { Indexes = indexes });
            }
        }
        return databases == acted.Databases ? acted : acted.WithDatabases(databases);
    }

    /// <summary>
    /// At start: every index of a record this node holds that the local store lacks, or has with
    /// another definition, lock mode or priority, is tried again now (it failed in a run before, or
    /// its step was cut short). A recorded auto-index counts as in line when this node has a copy.
    /// </summary>
    private void RecomputeFailedIndexes(ClusterState state)
    {
        var me = _node.NodeTag;
        var landlord = _databases();
        foreach (var record in state.Databases.Values)
        {
            if (!record.Nodes.Contains(me) || record.Indexes.IsEmpty || !landlord.Names.Contains(record.Name, StringComparer.OrdinalIgnoreCase))
            {
                continue;
            }
            IndexStore store;
            try
            {
                store = IndexStore.Of(landlord.GetDatabase(record.Name));
            }
            catch (Exception e) when (e is not OperationCanceledException)
            {
                LogIndexFailed(_logger, e, record.Name, "*");
                continue;
            }
            foreach (var (name, index) in record.Indexes)
            {
                try
                {
                    if (InLine(store, name, index))
                    {
                        continue;
                    }
                }
                catch (Exception e) when (e is not OperationCanceledException)
                {
                    LogIndexFailed(_logger, e, record.Name, name);
                }
                if (!_failedIndexes.TryGetValue(record.Name, out var failures))
                {
                    _failedIndexes[record.Name] = failures = new Dictionary<string, FailedIndex>(StringComparer.OrdinalIgnoreCase);
                }
                failures.TryAdd(name, new FailedIndex(index, 0, RetryAfter / 2, DateTime.UtcNow));
            }
        }
    }

    private static bool InLine(IndexStore store, string name, ClusterIndex index)
    {
        var definition = Read(index.Definition);
        if (store.TryGet(name) is not { } local)
        {
            return false;
        }
        if (definition.IsAutoIndex)
        {
            // Present is enough: a recorded auto-index goes only through the record, and a copy a
            // node lacks would also never be reported idle, so the leader would keep it for ever.
            return true;
        }
        var same = local.Definition.SameAs(definition)
            || store.TryGet(IndexStore.ReplacementName(name)) is { } replacement && replacement.Definition.WithName(name).SameAs(definition);
        return same && local.LockMode == index.LockMode && local.Priority == index.Priority;
    }

    /// <summary>Tries again the failed indexes whose wait is over, as the newest state applied says now; then waits for the next one.</summary>
    private async Task RetryFailedIndexesAsync()
    {
        try
        {
            var deletes = FailedDeletes;
            await RetryDueIndexesAsync().ConfigureAwait(false);
            if (FailedDeletes != deletes)
            {
                // The saved acted state no longer keeps an index whose delete went through now.
                SaveActed(WithFailedDeletes(_acted));
            }
        }
        catch (Exception e) when (e is not OperationCanceledException)
        {
            LogFailed(_logger, e);
        }
        ScheduleIndexRetry();
    }

    private async Task RetryDueIndexesAsync()
    {
        // A timer may fire a little before the wall clock says the wait is over.
        var now = DateTime.UtcNow + TimeSpan.FromMilliseconds(50);
        List<(string Database, List<string> Names)> due = [.. _failedIndexes
            .Select(d => (d.Key, d.Value.Where(f => f.Value.NextAt <= now).Select(f => f.Key).ToList()))
            .Where(d => d.Item2.Count > 0)];
        var me = _node.NodeTag;
        var landlord = _databases();
        foreach (var (database, names) in due)
        {
            if (!_lastApplied.Databases.TryGetValue(database, out var record) || !record.Nodes.Contains(me))
            {
                // The database left this node: nothing of it to retry.
                _failedIndexes.Remove(database);
                continue;
            }
            IndexStore store;
            try
            {
                store = IndexStore.Of(landlord.GetDatabase(database));
            }
            catch (Exception e) when (e is not OperationCanceledException)
            {
                foreach (var name in names)
                {
                    IndexFailed(database, name, record.Indexes.GetValueOrDefault(name), e);
                }
                continue;
            }
            foreach (var name in names)
            {
                record.Indexes.TryGetValue(name, out var wanted);
                try
                {
                    if (wanted is null)
                    {
                        if (await store.ApplyDecidedDeleteAsync(name).ConfigureAwait(false))
                        {
                            LogIndexDeleted(_logger, database, name);
                        }
                    }
                    else
                    {
                        var outcome = await store.ApplyDecidedAsync(Read(wanted.Definition), wanted.LockMode, wanted.Priority).ConfigureAwait(false);
                        LogIndexPut(_logger, database, name, outcome.Outcome);
                    }
                    IndexApplied(database, name);
                }
                catch (Exception e) when (e is not OperationCanceledException)
                {
                    IndexFailed(database, name, wanted, e);
                }
            }
        }
    }

    /// <summary>Wakes the loop when the earliest failed index is due (unless a wake-up at or before it is set).</summary>
    private void ScheduleIndexRetry()
    {
        if (_failedIndexes.Count == 0)
        {
            return;
        }
        var next = _failedIndexes.Values.SelectMany(f => f.Values).Min(f => f.NextAt);
        var pending = Interlocked.Read(ref _indexWakeAt);
        if (pending != 0 && pending <= next.Ticks)
        {
            return;
        }
        Interlocked.Exchange(ref _indexWakeAt, next.Ticks);
        var now = DateTime.UtcNow;
        _ = WakeForIndexRetryAsync(next > now ? next - now : TimeSpan.Zero, next.Ticks);
    }

    private async Task WakeForIndexRetryAsync(TimeSpan delay, long at)
    {
        try
        {
            await Task.Delay(delay, _stopping.Token).ConfigureAwait(false);
            Interlocked.CompareExchange(ref _indexWakeAt, 0, at);
            // The acted state again: the loop finds nothing new in it and tries the failed indexes.
            _changes.Writer.TryWrite(Volatile.Read(ref _acted));
        }
        catch (OperationCanceledException)
        {
            // Stopping: the next start finds the indexes not in line and tries them again.
        }
    }

    [LoggerMessage(EventId = 744, Level = LogLevel.Error, Message = "Database {Database}: index {Index} could not be brought in line with the cluster's record (failed {Attempts} time(s)); tried again in {Seconds} s")]
    private static partial void LogIndexFailing(ILogger logger, Exception exception, string database, string index, int attempts, int seconds);

    [LoggerMessage(EventId = 745, Level = LogLevel.Information, Message = "Database {Database}: index {Index} is in line with the cluster's record again, after {Attempts} failed attempt(s)")]
    private static partial void LogIndexRecovered(ILogger logger, string database, string index, int attempts);
}
