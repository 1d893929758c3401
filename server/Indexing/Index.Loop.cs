using System.Diagnostics;
using Jackdaw.Server.Indexing.Definitions;
using Jackdaw.Server.Indexing.Lucene;
using Jackdaw.Server.Indexing.Workers;

namespace Jackdaw.Server.Indexing;

// The indexing loop: wake-ups, batches, refreshes and commits, pacing (priority, a yielding
// replacement). Failures are in Index.Failures.cs.
public sealed partial class Index
{
    public static readonly TimeSpan CommitInterval = TimeSpan.FromSeconds(2);

    /// <summary>How long a caught-up index waits for more work before it commits what it indexed.</summary>
    public static readonly TimeSpan IdleCommitDelay = TimeSpan.FromMilliseconds(250);

    /// <summary>The time a batch may take: the priority's share of the indexing time.</summary>
    public static TimeSpan BatchTimeFor(IndexPriority priority) => priority switch
    {
        IndexPriority.Low => Batch.MaxTime / 4,
        IndexPriority.High => Batch.MaxTime * 2,
        _ => Batch.MaxTime,
    };

    /// <summary>The longest batch of a replacement that yields to requests (<see cref="OriginalQueried"/>).</summary>
    public static readonly TimeSpan YieldingBatchTime = TimeSpan.FromMilliseconds(250);

    /// <summary>A yielding replacement rests this many times as long as its batch took: a quarter of a core at most.</summary>
    public const int YieldingRestFactor = 3;

    private static readonly TimeSpan MaxYieldingRest = YieldingBatchTime * YieldingRestFactor;

    /// <summary>A replacement yields while the database had a write, or its original a query, this recently.</summary>
    public static readonly TimeSpan YieldWindow = TimeSpan.FromSeconds(1);

    /// <summary>The shortest time between two refreshes while writes stream in (a query that waits refreshes at once).</summary>
    public static readonly TimeSpan RefreshInterval = TimeSpan.FromMilliseconds(100);

    /// <summary>The longest a small batch waits to become searchable while more writes stream in.</summary>
    public static readonly TimeSpan MaxRefreshInterval = TimeSpan.FromSeconds(1);

    /// <summary>The most segments a replacement keeps when it caught up, before its swap.</summary>
    public const int SegmentsAfterBuild = 4;

    /// <summary>The most entries an index merged down to one segment when its writes stop (<see cref="MergeWhenIdle"/>).</summary>
    public const int MaxEntriesMergedWhenIdle = 500_000;

    /// <summary>
    /// The most bytes of segments merged down to one when writes stop: with full-text fields or
    /// stored reduce results 500,000 entries can be hundreds of MB, too much to rewrite each
    /// <see cref="IdleMergeSpacing"/> under a trickle of writes.
    /// </summary>
    public const long MaxBytesMergedWhenIdle = 32L << 20;

    /// <summary>The least time between two merges after going idle: a stream of writes with pauses merges this often at most.</summary>
    public static readonly TimeSpan IdleMergeSpacing = TimeSpan.FromSeconds(60);

    /// <summary>The wait before trying again after failures in a row: 1 s, doubled per failure up to 30 s (a full disk is not hammered).</summary>
    public static TimeSpan RetryDelay(int failuresInARow) =>
        TimeSpan.FromSeconds(Math.Min(30, 1 << Math.Clamp(failuresInARow - 1, 0, 5)));

    private void Wake() => Volatile.Read(ref _wake).TrySetResult();

    private void ResetWake() => Interlocked.Exchange(ref _wake, new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously));

    // Wakes whoever waits for the loop's next batch (queries waiting for progress).
    private void SignalBatchDone() => Interlocked.Exchange(ref _batchDone, new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously)).TrySetResult();

    private async Task RunAsync()
    {
        var token = _stop.Token;
        while (!token.IsCancellationRequested)
        {
            var wake = Volatile.Read(ref _wake).Task;
            var seenEtag = _database.LastEtag;
            var batchStarted = Stopwatch.GetTimestamp();
            bool more;
            // Output documents (OutputReduceToCollection) of the last commits; a replacement writes
            // them once it is the index (the one it replaces writes them until then). A failure
            // keeps the marks and is tried again later, but never holds the batches up.
            if (_outputDue && !_outputHeld && !_rollbackNeeded && !token.IsCancellationRequested && Stopwatch.GetTimestamp() >= _outputRetryAt)
            {
                try
                {
                    _outputDue = false;
                    await WriteReduceOutputAsync().ConfigureAwait(false);
                    _outputFailures = 0;
                }
                catch (Exception) when (token.IsCancellationRequested || _database.IsClosing)
                {
                    break;
                }
                catch (Exception e)
                {
                    _outputDue = true;
                    var delay = RetryDelay(++_outputFailures);
                    _outputRetryAt = Stopwatch.GetTimestamp() + (long)(delay.TotalSeconds * Stopwatch.Frequency);
                    _logger.LogError(e, "Index {Index}: writing its results to its output collection failed; it tries again in {Delay}", Name, delay);
                    RecordError("", "Output", e.Message);
                    _ = Task.Delay(delay, token).ContinueWith(_ => Wake(), TaskScheduler.Default);
                }
            }
            try
            {
                if (_rollbackNeeded)
                {
                    RollBackToLastCommit();
                }
                var running = _state is IndexState.Normal && !_disabled && !_pausedAlone && !_paused();
                more = running && RunBatch();
                _lastBatchFailed = false;
                if (!more && running)
                {
                    if (ReplacementOf is not null)
                    {
                        MergeAfterBuild();
                    }
                    CaughtUp?.Invoke(this);
                }
            }
            catch (Exception) when (token.IsCancellationRequested || _database.IsClosing)
            {
                // Closing: no commit keeps what this batch did (DisposeAsync rolls back).
                _rollbackNeeded = true;
                break;
            }
            catch (Exception e)
            {
                // Not a document's fault (those are index errors): the disk, Lucene. Try again later.
                _lastBatchFailed = true;
                // Queries waiting for a batch look again (they see the failure).
                SignalBatchDone();
                if (!await FailedAsync(e, "Indexing", "a batch", token).ConfigureAwait(false))
                {
                    break;
                }
                // Straight to the rollback: a refresh now would publish the failed batch's
                // positions as searchable.
                continue;
            }
            if (!more && _refreshPending)
            {
                // Caught up with a batch not yet searchable: refresh when its interval is up (or a
                // query asks), then look for work again.
                try
                {
                    // A replacement that caught up refreshes at once: its swap waits for it.
                    var left = ReplacementOf is not null ? TimeSpan.Zero : _refreshInterval - Stopwatch.GetElapsedTime(_lastRefresh);
                    if (left > TimeSpan.Zero && !_refreshWanted)
                    {
                        await Task.WhenAny(Task.Delay(left, token), wake).ConfigureAwait(false);
                    }
                    if (token.IsCancellationRequested)
                    {
                        break;
                    }
                    var timer = new BatchTimer();
                    if (_refreshWanted || wake.IsCompleted)
                    {
                        Refresh(timer);
                    }
                    else
                    {
                        RefreshOnInterval(timer, streaming: _database.LastEtag != seenEtag);
                    }
                    timer.EndLoop();
                    Publish(timer);
                }
                catch (Exception) when (token.IsCancellationRequested || _database.IsClosing)
                {
                    _rollbackNeeded = true;
                    break;
                }
                catch (Exception e)
                {
                    if (!await FailedAsync(e, "Refresh", "a refresh", token).ConfigureAwait(false))
                    {
                        break;
                    }
                }
                SignalBatchDone();
                if (wake.IsCompleted)
                {
                    ResetWake();
                }
                continue;
            }
            SignalBatchDone();
            var lastEtag = _database.LastEtag;
            if (lastEtag != _etagSeenWriting)
            {
                _etagSeenWriting = lastEtag;
                _lastWriteSeen = Stopwatch.GetTimestamp();
            }
            if (more && ReplacementOf is not null && (Stopwatch.GetElapsedTime(_lastWriteSeen) < YieldWindow || OriginalQueried?.Invoke() == true))
            {
                // A replacement building while the database serves writes or its original answers
                // queries yields: short batches, each followed by a rest three times as long.
                _yielding = true;
                var rest = Stopwatch.GetElapsedTime(batchStarted) * YieldingRestFactor;
                try
                {
                    await Task.WhenAny(Task.Delay(rest < MaxYieldingRest ? rest : MaxYieldingRest, token), wake).ConfigureAwait(false);
                }
                catch (OperationCanceledException)
                {
                    break;
                }
                if (wake.IsCompleted)
                {
                    ResetWake();
                }
                continue;
            }
            _yielding = false;
            if (more)
            {
                // A low-priority index leaves the cores to the others between its batches.
                if (Priority == IndexPriority.Low)
                {
                    try
                    {
                        await Task.Delay(50, token).ConfigureAwait(false);
                    }
                    catch (OperationCanceledException)
                    {
                        break;
                    }
                }
                continue;
            }
            try
            {
                var commit = _database.Notifications.WaitForEtagAsync(seenEtag + 1, token);
                if (_dirty || IdleMergeWanted())
                {
                    // Caught up with uncommitted work (or several segments to merge): commit unless
                    // more comes soon (a steady stream of writes then commits every CommitInterval
                    // from the batches).
                    var idle = Task.Delay(IdleCommitDelay, token);
                    await Task.WhenAny(commit, wake, _database.Notifications.Closed, idle).ConfigureAwait(false);
                    if (idle.IsCompletedSuccessfully && !commit.IsCompleted && !wake.IsCompleted)
                    {
                        CommitIdle();
                    }
                    if (!commit.IsCompleted && !wake.IsCompleted && !_database.Notifications.Closed.IsCompleted)
                    {
                        await Task.WhenAny(commit, wake, _database.Notifications.Closed, IdleMergeLater(token)).WaitAsync(token).ConfigureAwait(false);
                    }
                }
                else
                {
                    // Caught up with nothing to commit: whatever failed before is behind it. A merge
                    // held back only by the spacing comes back when the spacing is over.
                    _failuresInARow = 0;
                    await Task.WhenAny(commit, wake, _database.Notifications.Closed, IdleMergeLater(token)).WaitAsync(token).ConfigureAwait(false);
                }
                if (wake.IsCompleted)
                {
                    ResetWake();
                }
                if (_database.Notifications.Closed.IsCompleted)
                {
                    break;
                }
            }
            catch (OperationCanceledException)
            {
                break;
            }
            catch (Exception e)
            {
                if (token.IsCancellationRequested || _database.IsClosing)
                {
                    _rollbackNeeded = true;
                    break;
                }
                if (!await FailedAsync(e, "Commit", "the commit after catching up", token).ConfigureAwait(false))
                {
                    break;
                }
            }
        }
    }

    /// <summary>One batch: returns whether there is more to do at once.</summary>
    private bool RunBatch()
    {
        var timer = new BatchTimer();
        var batchTime = _yielding ? YieldingBatchTime : BatchTimeFor(Priority);
        var batch = new Batch(new Dictionary<string, CollectionPosition>(_positions), batchTime, timer);
        using (var reader = _database.BeginRead())
        {
            batch.Run(reader, _lowerCollections, _files, _map, _cleanup, _references);
        }
        // A map-reduce reduces the keys the batch changed and writes their results.
        _map.EndBatch(timer);
        timer.EndLoop();

        if (batch.Count > 0)
        {
            var now = Stopwatch.GetTimestamp();
            if (Stopwatch.GetElapsedTime(_lastWork, now) > _refreshInterval * 2)
            {
                _refreshInterval = RefreshInterval;
            }
            _lastWork = now;
            _dirty = true;
            _refreshPending = true;
            BatchesRun++;
            Interlocked.Exchange(ref _lastIndexingTicks, DateTime.UtcNow.Ticks);
        }
        _positions = batch.Positions;
        _pendingProgress = new IndexProgress(batch.Positions, batch.Full ? (_pendingProgress ?? _progress).CaughtUpTo : batch.SnapshotEtag);
        // Queries see a batch once the searcher is refreshed, and only then does the index count as
        // having indexed it. A refresh flushes a segment (and resolves the delete-by-id terms): after
        // a big batch, or when a query waits, at once; after the small batches a stream of writes
        // makes, at most every RefreshInterval (one tiny segment per durable commit cost 4-5× the
        // CPU of a PUT).
        if (!_refreshPending)
        {
            _progress = _pendingProgress;
        }
        else if (_yielding && !_refreshWanted)
        {
            // A replacement that yields is not queried before its swap: it refreshes (for its
            // progress) at most every MaxRefreshInterval, not after each short batch.
            if (Stopwatch.GetElapsedTime(_lastRefresh) >= MaxRefreshInterval)
            {
                Refresh(timer);
            }
        }
        else if (batch.Full || _refreshWanted)
        {
            Refresh(timer);
        }
        else if (Stopwatch.GetElapsedTime(_lastRefresh) >= _refreshInterval)
        {
            RefreshOnInterval(timer, streaming: false);
        }
        if (_dirty && (_commitSoon || Stopwatch.GetElapsedTime(_lastCommitTimestamp) > CommitInterval))
        {
            var commitStarted = Stopwatch.GetTimestamp();
            Commit();
            timer.AddCommit(Stopwatch.GetTimestamp() - commitStarted);
        }
        CheckErrorRate();
        if (batch.Count > 0 || timer.Committed)
        {
            Publish(timer);
        }
        return batch.Full;
    }

    /// <summary>A commit on its own, after the loop caught up: recorded as a batch of one operation.</summary>
    private void CommitIdle()
    {
        if (!_dirty && !IdleMergeWanted())
        {
            return;
        }
        var timer = new BatchTimer();
        if (_dirty)
        {
            var started = Stopwatch.GetTimestamp();
            Commit();
            timer.AddCommit(Stopwatch.GetTimestamp() - started);
        }

        MergeWhenIdle(timer);
        timer.EndLoop();
        Publish(timer);
    }

    /// <summary>
    /// An index whose writes stopped is read more than written: a small one is merged down to one
    /// segment, so that a query looks each term up once instead of in every segment the batches
    /// left (the 100,000 orders' auto-index on Company: 4 segments, TermContext.Build 9% of an
    /// equality query's server samples). At most once per <see cref="IdleMergeSpacing"/>, and
    /// only up to <see cref="MaxEntriesMergedWhenIdle"/> entries and <see cref="MaxBytesMergedWhenIdle"/>
    /// (well under a second of merging); not for a paused, disabled or errored index; a replacement merges after its build instead (<see cref="MergeAfterBuild"/>).
    /// </summary>
    private void MergeWhenIdle(BatchTimer timer)
    {
        if (!IdleMergeWanted())
        {
            return;
        }

        var started = Stopwatch.GetTimestamp();
        _lastIdleMerge = started;
        _files.ForceMerge(1);
        Commit();
        timer.AddCommit(Stopwatch.GetTimestamp() - started);
        Refresh(timer);
    }

    /// <summary>
    /// Whether <see cref="MergeWhenIdle"/> would merge now: a running index (not paused, disabled
    /// or errored), several segments, a small index, not merged within the spacing.
    /// </summary>
    private bool IdleMergeWanted() => !IdleMergeSpaced(out _) && IdleMergeCandidate();

    /// <summary>
    /// A task that ends when a merge now held back only by <see cref="IdleMergeSpacing"/> becomes
    /// due, so that the loop, waiting for writes, comes back to do it; one that never ends otherwise.
    /// One delay per merge: the loop waits again after every write, and a delay made each time
    /// would keep a timer each for up to the spacing.
    /// </summary>
    private Task IdleMergeLater(CancellationToken token)
    {
        if (!IdleMergeSpaced(out var remaining))
        {
            return NeverEnds;
        }

        if (_idleMergeDue is null || _idleMergeDueAfter != _lastIdleMerge)
        {
            if (!IdleMergeCandidate())
            {
                return NeverEnds;
            }

            _idleMergeDueAfter = _lastIdleMerge;
            _idleMergeDue = Task.Delay(remaining, token);
        }

        return _idleMergeDue;
    }

    private static readonly Task NeverEnds = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously).Task;

    // The delay IdleMergeLater made, and the merge (its start) it counts from.
    private Task? _idleMergeDue;
    private long _idleMergeDueAfter;

    private bool IdleMergeSpaced(out TimeSpan remaining)
    {
        remaining = _lastIdleMerge == 0 ? TimeSpan.Zero : IdleMergeSpacing - Stopwatch.GetElapsedTime(_lastIdleMerge);
        return remaining > TimeSpan.Zero;
    }

    private bool IdleMergeCandidate()
    {
        if (ReplacementOf is not null || _state is not IndexState.Normal || _disabled || _pausedAlone || _paused())
        {
            return false;
        }

        var (segments, entries, bytes) = _files.ReadSearchable(static reader =>
        {
            long size = 0;
            foreach (var leaf in reader.Leaves)
            {
                size += leaf.AtomicReader is global::Lucene.Net.Index.SegmentReader segment ? segment.SegmentInfo.GetSizeInBytes() : 0;
            }

            return (reader.Leaves.Count, reader.MaxDoc, size);
        });
        return segments > 1 && entries <= MaxEntriesMergedWhenIdle && bytes <= MaxBytesMergedWhenIdle;
    }

    private void Publish(BatchTimer timer)
    {
        var batch = IndexingBatch.Of(timer, Interlocked.Increment(ref _batchIds));
        Performance.Add(batch);
        try
        {
            BatchCompleted?.Invoke(this, batch);
        }
        catch (Exception e)
        {
            _logger.LogWarning(e, "Index {Index}: a batch listener failed", Name);
        }
    }

    /// <summary>
    /// A replacement built in short batches (yielding to requests) is made of many small segments,
    /// fewer than Lucene's merge policy merges on its own; a query reads each one (the swapped-in
    /// index answered at 60% of the old one's rate). Once, when it first caught up, it is merged
    /// down to <see cref="SegmentsAfterBuild"/> segments and refreshed, before the swap.
    /// </summary>
    private void MergeAfterBuild()
    {
        if (_mergedAfterBuild)
        {
            return;
        }
        if (SegmentsCount > SegmentsAfterBuild || _refreshPending)
        {
            var timer = new BatchTimer();
            var started = Stopwatch.GetTimestamp();
            _files.ForceMerge(SegmentsAfterBuild);
            Commit();
            timer.AddCommit(Stopwatch.GetTimestamp() - started);
            Refresh(timer);
            timer.EndLoop();
            Publish(timer);
        }
        // Only once it worked: a failure rolls back and the replacement merges when it caught up again.
        _mergedAfterBuild = true;
    }

    /// <summary>
    /// A refresh because the interval was up: when writes kept coming while it waited
    /// (<paramref name="streaming"/>), the next one comes twice as late.
    /// </summary>
    private void RefreshOnInterval(BatchTimer timer, bool streaming)
    {
        Refresh(timer);
        if (streaming)
        {
            _refreshInterval = TimeSpan.FromTicks(Math.Min(_refreshInterval.Ticks * 2, MaxRefreshInterval.Ticks));
        }
    }

    /// <summary>Makes everything written searchable and publishes the progress that goes with it.</summary>
    private void Refresh(BatchTimer? timer)
    {
        var started = Stopwatch.GetTimestamp();
        _refreshWanted = false;
        _files.Refresh();
        _progress = _pendingProgress ?? _progress;
        _refreshPending = false;
        _lastRefresh = Stopwatch.GetTimestamp();
        timer?.AddRefresh(_lastRefresh - started);
    }

    private void Commit()
    {
        // A map-reduce's store first: Lucene never holds results the store could lose.
        _reduceStore?.Commit(_positions);
        _files.Commit(_positions);
        _reduceStore?.LuceneCommitted();
        if (_reduce is { OutputChanged: true })
        {
            // Lucene and the store have the results: their output documents are written next.
            _reduce.OutputChanged = false;
            _outputDue = true;
            Wake();
        }
        _dirty = false;
        _commitSoon = false;
        _failuresInARow = 0;
        _lastCommitTimestamp = Stopwatch.GetTimestamp();
        _committed = new Dictionary<string, CollectionPosition>(_positions);
    }
}
