using System.Diagnostics;
using Jackdaw.Server.Documents;
using Jackdaw.Server.Indexing.Definitions;
using Jackdaw.Server.Indexing.Lucene;
using Jackdaw.Server.Indexing.Workers;
using Lucene.Net.Search;

namespace Jackdaw.Server.Indexing;

// What queries use of an index: searchers, staleness, waits for progress, field plans.
public sealed partial class Index
{
    /// <summary>Whether some entry of this index has several values in the field (then <c>F &gt;= a and F &lt; b</c> must stay two conditions).</summary>
    public bool IsMultiValued(string luceneName) => _files.IsMultiValued(luceneName);

    /// <summary>The plan of a field this index writes (for queries).</summary>
    public FieldPlan PlanOf(string luceneName)
    {
        if (Definition.IsAuto)
        {
            return _autoPlans.TryGetValue(luceneName, out var plan) ? plan : new FieldPlan(luceneName, FieldIndexing.Default, false);
        }
        var options = Definition.OptionsOf(luceneName);
        return new FieldPlan(luceneName, options.Indexing, options.Stored, Analyzers.For(luceneName));
    }

    /// <summary>A searcher over everything indexed so far; release it with <see cref="Release"/>.</summary>
    /// <exception cref="ObjectDisposedException">The index was deleted, reset or replaced meanwhile (look it up again).</exception>
    public IndexSearcher Acquire()
    {
        MarkQueried();
        ObjectDisposedException.ThrowIf(_stop.IsCancellationRequested, this);
        Interlocked.Increment(ref _activeSearchers);
        try
        {
            return _files.AcquireSearcher();
        }
        catch
        {
            ReleaseSearcherCount();
            throw;
        }
    }

    public void Release(IndexSearcher searcher)
    {
        try
        {
            _files.ReleaseSearcher(searcher);
        }
        finally
        {
            ReleaseSearcherCount();
        }
    }

    private void ReleaseSearcherCount()
    {
        if (Interlocked.Decrement(ref _activeSearchers) == 0 && _stop.IsCancellationRequested)
        {
            Interlocked.Exchange(ref _deleteWhenUnused, null)?.Invoke();
        }
    }

    /// <summary>
    /// For a closed index that was replaced or deleted: runs <paramref name="delete"/> (removing its
    /// files) once no query still reads it, at once if none does.
    /// </summary>
    public void DeleteFilesWhenUnused(Action delete)
    {
        Volatile.Write(ref _deleteWhenUnused, delete);
        if (Volatile.Read(ref _activeSearchers) == 0)
        {
            Interlocked.Exchange(ref _deleteWhenUnused, null)?.Invoke();
        }
    }

    /// <summary>Marks the index queried now (an auto-index chosen by the planner).</summary>
    /// <remarks>An idle auto-index wakes up and catches up.</remarks>
    public void MarkQueried()
    {
        Interlocked.Exchange(ref _lastQueryingTicks, DateTime.UtcNow.Ticks);
        if (_state == IndexState.Idle)
        {
            _state = IndexState.Normal;
            Wake();
        }
    }

    /// <summary>Whether a query used the index within <paramref name="window"/>.</summary>
    public bool QueriedWithin(TimeSpan window) => DateTime.UtcNow.Ticks - Interlocked.Read(ref _lastQueryingTicks) < window.Ticks;

    /// <summary>Whether the index has not yet indexed everything in <paramref name="reader"/>'s snapshot for its collections.</summary>
    public bool IsStale(DocumentsReader reader) => IsStale(reader, long.MaxValue);

    /// <summary>
    /// Whether the index has yet to process a change of its collections (or, when its map loads
    /// documents, of any document) at or below etag <paramref name="upToEtag"/> in
    /// <paramref name="reader"/>'s snapshot: staleness with a cut-off, for a writer that keeps writing.
    /// </summary>
    public bool IsStale(DocumentsReader reader, long upToEtag)
    {
        var progress = _progress;
        if (progress.CaughtUpTo >= Math.Min(reader.LastEtag, upToEtag))
        {
            return false;
        }
        foreach (var collection in _lowerCollections)
        {
            var position = progress.Positions.GetValueOrDefault(collection);
            if (HasChangeUpTo(reader, collection, position, upToEtag))
            {
                return true;
            }
        }
        // A change of any document may change what the map loaded.
        return _mapper.UsesLoad && HasChangeUpTo(reader, null, progress.Positions.GetValueOrDefault(HandleReferences.Position), upToEtag);
    }

    private static bool HasChangeUpTo(DocumentsReader reader, string? collection, CollectionPosition position, long upToEtag)
    {
        foreach (var document in reader.GetDocumentsFrom(collection, position.Documents, 1))
        {
            if (document.Etag <= upToEtag)
            {
                return true;
            }
        }
        foreach (var tombstone in reader.GetTombstonesFrom(collection, position.Tombstones, 1))
        {
            if (tombstone.Etag <= upToEtag)
            {
                return true;
            }
        }
        return false;
    }

    /// <summary>
    /// How far behind <paramref name="reader"/>'s snapshot the index is: the documents and deletions
    /// of its collections it has not yet processed (counted up to <paramref name="max"/>, so that a
    /// large backlog costs a bounded read), and the UTC ticks of the oldest of them (0 when none).
    /// Changes seen only through a <c>LoadDocument</c> reference are not counted.
    /// </summary>
    public (long Items, long OldestTicks) Lag(DocumentsReader reader, long max)
    {
        var progress = _progress;
        if (progress.CaughtUpTo >= reader.LastEtag)
        {
            return (0, 0);
        }
        long items = 0;
        var oldest = long.MaxValue;
        foreach (var collection in _lowerCollections)
        {
            var position = progress.Positions.GetValueOrDefault(collection);
            foreach (var record in reader.GetDocumentsFrom(collection, position.Documents))
            {
                oldest = Math.Min(oldest, record.LastModifiedTicks);
                if (++items >= max)
                {
                    return (items, oldest);
                }
            }
            foreach (var tombstone in reader.GetTombstonesFrom(collection, position.Tombstones))
            {
                oldest = Math.Min(oldest, tombstone.DeletedAtTicks);
                if (++items >= max)
                {
                    return (items, oldest);
                }
            }
        }
        return (items, items == 0 ? 0 : oldest);
    }

    /// <summary>
    /// A query of an index that has not yet made a batch visible since it was opened (just created,
    /// or reset) waits for that first batch, at most <paramref name="timeout"/>, as RavenDB's do: the
    /// first query of a new auto-index over a small collection answers with its documents rather
    /// than nothing. An index that is up to date, stopped, disabled or in error is not waited for.
    /// </summary>
    public async Task WaitForFirstBatchAsync(TimeSpan timeout, CancellationToken cancellationToken)
    {
        var deadline = Stopwatch.GetTimestamp() + (long)(timeout.TotalSeconds * Stopwatch.Frequency);
        var woken = false;
        while (ReferenceEquals(_progress, _openedProgress))
        {
            var done = Volatile.Read(ref _batchDone).Task;
            if (_state != IndexState.Normal || _disabled || _pausedAlone || _paused() || _stop.IsCancellationRequested || _lastBatchFailed)
            {
                return;
            }
            using (var reader = _database.BeginRead())
            {
                if (!IsStale(reader))
                {
                    return;
                }
            }
            if (!woken)
            {
                _refreshWanted = true;
                Wake();
                woken = true;
            }
            if (!await WaitForBatchAsync(done, deadline, cancellationToken).ConfigureAwait(false))
            {
                return;
            }
        }
    }

    /// <summary>
    /// Completes when the index has indexed every change up to <paramref name="etag"/> (false after
    /// <paramref name="timeout"/>, or when the index is in error).
    /// </summary>
    public async Task<bool> WaitForEtagAsync(long etag, TimeSpan timeout, CancellationToken cancellationToken)
    {
        var deadline = Stopwatch.GetTimestamp() + (long)(timeout.TotalSeconds * Stopwatch.Frequency);
        while (true)
        {
            var done = Volatile.Read(ref _batchDone).Task;
            if (_progress.CaughtUpTo >= etag)
            {
                return true;
            }
            // Asked on every pass: a refresh that published an earlier batch cleared the wish,
            // and the batch that reaches the etag must not wait for the refresh interval.
            _refreshWanted = true;
            Wake();
            using (var reader = _database.BeginRead())
            {
                if (!IsStale(reader) && reader.LastEtag >= etag)
                {
                    return true;
                }
            }
            if (_state == IndexState.Error)
            {
                return false;
            }
            ObjectDisposedException.ThrowIf(_stop.IsCancellationRequested, this);
            if (!await WaitForBatchAsync(done, deadline, cancellationToken).ConfigureAwait(false))
            {
                return false;
            }
        }
    }

    /// <summary>Waits for the batch signal <paramref name="done"/> until <paramref name="deadline"/> (a timestamp); false when it passed first.</summary>
    private static async Task<bool> WaitForBatchAsync(Task done, long deadline, CancellationToken cancellationToken)
    {
        var left = deadline - Stopwatch.GetTimestamp();
        if (left <= 0)
        {
            return false;
        }
        try
        {
            await done.WaitAsync(TimeSpan.FromSeconds((double)left / Stopwatch.Frequency), cancellationToken).ConfigureAwait(false);
            return true;
        }
        catch (TimeoutException)
        {
            return false;
        }
    }

    /// <summary>The Lucene segments of what is searchable now (a query reads each).</summary>
    public int SegmentsCount => _files.ReadSearchable(static reader => reader.Leaves.Count);

    /// <summary>The number of entries (Lucene documents) searchable now.</summary>
    public int EntriesCount => _files.ReadSearchable(static reader => reader.NumDocs);

    /// <summary>
    /// Changes when the index rolls back (<see cref="RollBackToLastCommit"/>): the progress read
    /// before it may be ahead of the searchers after it. A query reads it before
    /// <see cref="Progress"/> and again after <see cref="Acquire"/>, and starts again when it changed.
    /// </summary>
    public long Generation => Interlocked.Read(ref _generation);
}
