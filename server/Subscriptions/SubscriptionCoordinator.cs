using System.Text;
using Jackdaw.Server.Documents;
using Jackdaw.Server.Errors;
using Jackdaw.Server.Rql;
using Microsoft.Extensions.Logging;

namespace Jackdaw.Server.Subscriptions;

/// <summary>
/// The runtime coordinator of one subscription: its record, the workers connected, and the
/// batches in flight (not RavenDB's <c>SubscriptionState</c>, which is the stored record:
/// <see cref="SubscriptionRecord"/> here).
/// Ranges are handed out in etag order from <c>_sentUpTo</c>; a worker that goes without
/// acknowledging gives its range back (sent again to the next worker: at least once); the
/// acknowledged position advances over contiguous acknowledged ranges and is stored (durably)
/// before the worker is told.
/// </summary>
public sealed partial class SubscriptionCoordinator
{
    /// <summary>The most documents scanned (matching or not) to make one batch.</summary>
    public const int MaxScan = 64 * 1024;

    private readonly SubscriptionStore _store;
    private readonly object _lock = new();
    private readonly object _takeLock = new();
    private readonly List<SubscriptionSession> _sessions = new();
    private SortedDictionary<long, long> _doneRanges = new(); // start → end, acknowledged beyond _acked (replaced whole, under _lock)
    private readonly Queue<(long Start, long End)> _resend = new();
    private readonly RqlEvaluator _evaluator;
    private readonly string? _collection;
    private TaskCompletionSource _free = new(TaskCreationOptions.RunContinuationsAsynchronously);
    private volatile SubscriptionRecord _record;
    private long _sentUpTo;

    internal SubscriptionCoordinator(SubscriptionStore store, SubscriptionRecord record, RqlQuery query)
    {
        _store = store;
        _record = record;
        Query = query;
        _evaluator = new RqlEvaluator(record.Query);
        _collection = string.Equals(query.From.Name, "@all_docs", StringComparison.OrdinalIgnoreCase) ? null : query.From.Name;
        _sentUpTo = record.AckedEtag;
    }

    public SubscriptionRecord Record => _record;

    public RqlQuery Query { get; }

    /// <summary>The workers connected now.</summary>
    public IReadOnlyList<SubscriptionSession> Sessions
    {
        get
        {
            lock (_lock)
                return _sessions.ToList();
        }
    }

    internal async Task UpdateAsync(Func<SubscriptionRecord, SubscriptionRecord> change)
    {
        // In line with the acknowledgements' stores: an older record never lands after a newer one.
        await _storeLock.WaitAsync().ConfigureAwait(false);
        try
        {
            if (_deleted)
            {
                throw new SubscriptionDoesNotExistException(_record.Name);
            }
            SubscriptionRecord record;
            lock (_lock)
                record = change(_record);
            // Stored first: what the server does (refuse workers, hand out) follows what is durable.
            await _store.StoreAsync(record).ConfigureAwait(false);
            lock (_lock)
                _record = change(_record);
        }
        finally
        {
            _storeLock.Release();
        }
    }

    /// <summary>Connects a worker with a strategy.</summary>
    /// <exception cref="SubscriptionInUseException">OpenIfFree (or Concurrent) while an exclusive worker holds it.</exception>
    /// <exception cref="SubscriptionClosedException">The subscription is disabled.</exception>
    public async Task<SubscriptionSession> ConnectAsync(SubscriptionStrategy strategy, string address, CancellationToken cancellationToken)
    {
        var takingOver = false;
        try
        {
            while (true)
            {
                Task free;
                List<SubscriptionSession> takenOver = [];
                lock (_lock)
                {
                    if (_record.Disabled)
                    {
                        throw new SubscriptionClosedException(_record.Name, "the subscription is disabled.");
                    }
                    ThrowUnlessServedHere();
                    // A worker taking over goes first: the others wait behind it (or are refused).
                    var busy = _sessions.Count > 0 || (_takeOvers > 0 && !takingOver);
                    var concurrentOnly = _sessions.All(s => s.Strategy == SubscriptionStrategy.Concurrent) && _takeOvers == 0;
                    if (!busy || (strategy == SubscriptionStrategy.Concurrent && concurrentOnly))
                    {
                        if (takingOver)
                        {
                            _takeOvers--;
                            takingOver = false;
                        }
                        return Add(strategy, address);
                    }
                    free = _free.Task;
                    switch (strategy)
                    {
                        case SubscriptionStrategy.TakeOver:
                            if (!takingOver)
                            {
                                takingOver = true;
                                _takeOvers++;
                            }
                            takenOver = _sessions.ToList();
                            break;
                        case SubscriptionStrategy.WaitForFree:
                            break;
                        default:
                            throw new SubscriptionInUseException(_record.Name, _sessions.FirstOrDefault()?.Address ?? "a worker taking it over");
                    }
                }
                foreach (var session in takenOver)
                {
                    session.Close($"the subscription was taken over by the worker at {address}.");
                }
                // Wait for the workers to go: a taker until those it closed have left. When nobody is
                // connected but a taker is about to be, the signal is already set: wait a moment.
                if (free.IsCompleted)
                {
                    await Task.Delay(10, cancellationToken).ConfigureAwait(false);
                }
                else
                {
                    await free.WaitAsync(cancellationToken).ConfigureAwait(false);
                }
            }
        }
        finally
        {
            if (takingOver)
            {
                lock (_lock)
                {
                    _takeOvers--;
                    if (_sessions.Count == 0 && _takeOvers == 0)
                    {
                        _free.TrySetResult();
                    }
                }
            }
        }
    }

    private int _takeOvers;

    private SubscriptionSession Add(SubscriptionStrategy strategy, string address)
    {
        var session = new SubscriptionSession(this, strategy, address);
        _sessions.Add(session);
        if (_sessions.Count == 1)
        {
            _free = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        }
        _store.Logger.LogInformation("Subscription {Subscription}: worker {Address} connected ({Strategy})", _record.Name, address, strategy);
        return session;
    }

    internal void Remove(SubscriptionSession session)
    {
        // The session takes nothing more once it leaves (a take in progress finishes first, and
        // is among the ranges it gives back); not under _lock: a take holds the session's lock
        // and then this one.
        var held = session.Leave();
        lock (_lock)
        {
            if (!_sessions.Remove(session))
            {
                return;
            }
            // Its batches (the one sent, the one prepared) were not acknowledged: the next
            // worker gets those ranges again.
            foreach (var batch in held)
            {
                _resend.Enqueue((batch.StartExclusive, batch.LastEtag));
            }
            if (_sessions.Count == 0)
            {
                _free.TrySetResult();
                // Nobody holds a range: start again right after the acknowledged position.
                _resend.Clear();
                _doneRanges.Clear();
                _pendingFeeds.Clear();
                _sentUpTo = _record.AckedEtag;
            }
        }
        // Workers waiting for new documents take the given-back ranges now.
        if (held.Count > 0)
        {
            Interlocked.Exchange(ref _rangesReturned, new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously)).TrySetResult();
        }
        _store.Logger.LogInformation("Subscription {Subscription}: worker {Address} disconnected", _record.Name, session.Address);
    }

    /// <summary>Closes every connection (deleted, disabled, dropped) with the reason.</summary>
    public void CloseAll(string reason, bool canReconnect = false)
    {
        foreach (var session in Sessions)
        {
            session.Close(reason, canReconnect);
        }
    }

    /// <summary>
    /// The next batch for a worker: a range given back by another worker first, else the next
    /// documents after what was handed out; null when nothing is there yet (wait for a commit).
    /// The matching documents go to <paramref name="writer"/> as they are read.
    /// </summary>
    internal SubscriptionBatch? TakeBatch(int maxDocuments, long maxBytes, ISubscriptionBatchWriter writer)
    {
        // One taker at a time (ranges go out in order), but the scan runs outside _lock: an
        // acknowledgement, a connecting or leaving worker never waits for a 16 MB batch to be read.
        lock (_takeLock)
        {
            Interlocked.Increment(ref _scans);
            long start;
            long end;
            bool fresh;
            lock (_lock)
            {
                fresh = !_resend.TryDequeue(out var range);
                (start, end) = fresh ? (_sentUpTo, long.MaxValue) : range;
            }
            var count = 0;
            var last = start;
            var rest = false;
            ReadOnlyMemory<byte> message = default;
            IReadOnlyDictionary<string, long>? feeds = null;
            try
            {
                using var reader = _store.Database.BeginRead();
                writer.Start();
                long bytes = 0;
                var scanned = 0;
                foreach (var record in reader.GetDocumentsFrom(_collection, start))
                {
                    if (record.Etag > end)
                    {
                        break;
                    }
                    if (count >= maxDocuments || bytes >= maxBytes || scanned >= MaxScan)
                    {
                        rest = true;
                        break;
                    }
                    scanned++;
                    last = record.Etag;
                    var id = record.Id;
                    if (!_evaluator.Matches(Query.Where, id, record.Document))
                    {
                        continue;
                    }
                    writer.Add(id, record.Etag, record.Document);
                    count++;
                    bytes += record.Document.Length;
                }
                if (count > 0)
                {
                    message = writer.Finish(rest || fresh ? last : end, reader);
                }
                // Read to the collection's end in this snapshot: how far each other copy's feed
                // had come is true of everything up to this batch's end (see AcknowledgedFeeds).
                if (fresh && !rest && Cluster is not null)
                {
                    feeds = _store.FeedPositions(reader);
                }
            }
            catch
            {
                // Nothing was handed out: a resent range goes back whole (a fresh one was never
                // taken: _sentUpTo did not move).
                if (!fresh)
                {
                    lock (_lock)
                        _resend.Enqueue((start, end));
                }
                throw;
            }
            lock (_lock)
            {
                // A resent range that did not fit goes back for its rest.
                if (!fresh && rest)
                {
                    _resend.Enqueue((last, end));
                }
                if (rest || fresh)
                {
                    end = last;
                }
                if (fresh)
                {
                    if (last == start)
                    {
                        return null;
                    }
                    _sentUpTo = end;
                }
            }
            return new SubscriptionBatch(start, end, count, message) { Feeds = feeds };
        }
    }

    /// <summary>A batch was acknowledged (or had nothing to send): advances and stores the position.</summary>
    internal async Task CompleteAsync(SubscriptionBatch batch, bool sent)
    {
        // One store at a time, in the order the positions were computed: a later position never
        // gets overwritten by an earlier one.
        await _storeLock.WaitAsync().ConfigureAwait(false);
        try
        {
            if (_deleted)
            {
                throw new SubscriptionDoesNotExistException(_record.Name);
            }
            await CompleteLockedAsync(batch, sent).ConfigureAwait(false);
        }
        catch (Exception) when (!sent)
        {
            // A range with nothing to send whose completion could not be stored: it goes back, so
            // that the position can pass it later (it is held by nobody, nor done).
            lock (_lock)
                _resend.Enqueue((batch.StartExclusive, batch.LastEtag));
            throw;
        }
        finally
        {
            _storeLock.Release();
        }
    }

    private readonly SemaphoreSlim _storeLock = new(1, 1);

    // Set once its delete is stored: no store of it may follow (an acknowledgement under way would
    // write the record back).
    private bool _deleted;

    /// <summary>Stores the subscription's deletion with <paramref name="delete"/>, in line with its other stores; none follows.</summary>
    internal async Task DeleteAsync(Func<Task> delete)
    {
        await _storeLock.WaitAsync().ConfigureAwait(false);
        try
        {
            await delete().ConfigureAwait(false);
            _deleted = true;
        }
        finally
        {
            _storeLock.Release();
        }
    }

    private async Task CompleteLockedAsync(SubscriptionBatch batch, bool sent)
    {
        // The position is computed on a copy of the done ranges and takes effect in memory only
        // once stored: a store that fails (a full disk) leaves the position where it was, so the
        // batch is handed out again, never skipped (the next worker starts at the position in
        // memory when nobody holds a range).
        SortedDictionary<long, long> done;
        long acked;
        DateTime? ackedAt = null;
        SubscriptionRecord? changed = null;
        lock (_lock)
        {
            done = new SortedDictionary<long, long>(_doneRanges);
            done[batch.StartExclusive] = Math.Max(batch.LastEtag, done.GetValueOrDefault(batch.StartExclusive));
            acked = _record.AckedEtag;
            while (done.Remove(acked, out var next))
            {
                acked = Math.Max(acked, next);
            }
            // Ranges that started before the position (a resend that overlapped) are done too.
            foreach (var stale in done.Keys.Where(k => k < acked).ToList())
            {
                acked = Math.Max(acked, done[stale]);
                done.Remove(stale);
            }
            if (acked != _record.AckedEtag || sent)
            {
                ackedAt = sent ? DateTime.UtcNow : _record.LastAckAt;
                changed = _record with { AckedEtag = acked, LastAckAt = ackedAt };
            }
        }
        if (changed is not null && Cluster is not null)
        {
            await StoreInClusterAsync(changed, batch).ConfigureAwait(false);
        }
        else if (changed is not null)
        {
            await _store.StoreAsync(changed).ConfigureAwait(false);
        }
        lock (_lock)
        {
            // Only this method (one store at a time) changes the done ranges while a session is
            // connected, and the acknowledging session is.
            _doneRanges = done;
            if (changed is not null)
            {
                _record = _record with { AckedEtag = acked, LastAckAt = ackedAt };
            }
        }
    }

    internal void MarkBatchSent()
    {
        lock (_lock)
            _record = _record with { LastBatchAt = DateTime.UtcNow };
    }

    /// <summary>Matching documents after the acknowledged position (counted up to <paramref name="max"/>).</summary>
    public long CountPending(long max = 100_000) => CountPending(max, long.MaxValue, out _);

    /// <summary>
    /// Matching documents after the acknowledged position, counting at most <paramref name="maxMatches"/>
    /// and reading at most <paramref name="maxScanned"/> documents (matching or not: a query that
    /// matches few of a large collection otherwise reads all of it); <paramref name="exact"/> is
    /// false when a limit stopped the count before the collection's end.
    /// </summary>
    public long CountPending(long maxMatches, long maxScanned, out bool exact) => CountPending(maxMatches, maxScanned, out exact, out _);

    /// <summary>The same, also telling how many documents it read (<paramref name="scanned"/>, at most <paramref name="maxScanned"/>).</summary>
    public long CountPending(long maxMatches, long maxScanned, out bool exact, out long scanned)
    {
        using var reader = _store.Database.BeginRead();
        long count = 0;
        scanned = 0;
        foreach (var record in reader.GetDocumentsFrom(_collection, _record.AckedEtag))
        {
            if (count >= maxMatches || scanned >= maxScanned)
            {
                exact = false;
                return count;
            }
            scanned++;
            if (_evaluator.Matches(Query.Where, record.Id, record.Document))
            {
                count++;
            }
        }
        exact = true;
        return count;
    }

    /// <summary>Completes on a commit after <paramref name="afterEtag"/>, or when a worker gives ranges back.</summary>
    internal Task WaitForChangesAsync(long afterEtag, Task rangesReturned, CancellationToken cancellationToken) =>
        Task.WhenAny(_store.Database.Notifications.WaitForEtagAsync(afterEtag + 1, cancellationToken), rangesReturned.WaitAsync(cancellationToken)).Unwrap();

    /// <summary>Completes when another worker gives ranges back after this was read.</summary>
    internal Task RangesReturned => Volatile.Read(ref _rangesReturned).Task;

    private TaskCompletionSource _rangesReturned = new(TaskCreationOptions.RunContinuationsAsynchronously);

    private long _scans;

    /// <summary>Scans for a batch since the subscription was loaded (tests see that an idle worker does not spin).</summary>
    public long Scans => Interlocked.Read(ref _scans);

    /// <summary>The database's last durable etag.</summary>
    internal long DatabaseEtag => _store.Database.LastEtag;

    internal long SentUpTo
    {
        get
        {
            lock (_lock)
                return _sentUpTo;
        }
    }
}
