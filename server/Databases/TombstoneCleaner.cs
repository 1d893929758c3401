using System.Collections.Immutable;
using Jackdaw.Server.Documents;

namespace Jackdaw.Server.Databases;

/// <summary>What holds the tombstones of one collection.</summary>
/// <param name="Collection">Lowercased; "" for documents that had none.</param>
/// <param name="OldestEtag">The etag of its oldest tombstone.</param>
/// <param name="CleanableUpToEtag">Tombstones at or below this etag may be removed now.</param>
/// <param name="HeldBy">The consumer furthest behind, or null when none reads this collection.</param>
/// <param name="HoldReason">Why that consumer does not advance (disabled, errored); null when it runs.</param>
public readonly record struct TombstoneCollectionState(string Collection, long OldestEtag, long CleanableUpToEtag, string? HeldBy, string? HoldReason);

/// <summary>
/// Removes tombstones once every registered consumer of their collection has passed them; with no
/// consumer of a collection, all of its durable tombstones go. A consumer that stopped (disabled,
/// errored) keeps holding its tombstones, and <see cref="GetState"/> says which and why, so a
/// growing pile is never silent. Revision tombstones (removed revisions' change vectors) go the same
/// way, up to the lowest position of the consumers that read them (<see cref="IRevisionTombstoneConsumer"/>:
/// replication). Runs on a timer and on demand; removals go through the merger.
/// </summary>
public sealed class TombstoneCleaner : IAsyncDisposable
{
    private readonly DocumentDatabase _database;
    private readonly DocumentDatabaseOptions _options;
    private readonly ILogger _logger;
    private readonly Timer? _timer;
    private readonly SemaphoreSlim _running = new(1, 1);
    private ImmutableArray<ITombstoneConsumer> _consumers = [];
    private long _removed;
    private int _disposed;

    internal TombstoneCleaner(DocumentDatabase database, DocumentDatabaseOptions options, ILogger logger)
    {
        _database = database;
        _options = options;
        _logger = logger;
        if (options.TombstoneCleanupInterval != Timeout.InfiniteTimeSpan)
        {
            _timer = new Timer(static state => _ = ((TombstoneCleaner)state!).RunFromTimerAsync(), this, options.TombstoneCleanupInterval, options.TombstoneCleanupInterval);
        }
    }

    /// <summary>Tombstones removed since the database opened.</summary>
    public long Removed => Interlocked.Read(ref _removed);

    /// <summary>Registers a consumer; dispose the result when it is deleted for good (a disabled one stays registered).</summary>
    public IDisposable Register(ITombstoneConsumer consumer)
    {
        ImmutableInterlocked.Update(ref _consumers, static (list, c) => list.Add(c), consumer);
        return new Registration(this, consumer);
    }

    /// <summary>For each collection with tombstones: how far they may be removed, and who holds the rest.</summary>
    public List<TombstoneCollectionState> GetState()
    {
        using var reader = _database.BeginRead();
        var durable = reader.LastEtag;
        var consumers = _consumers;
        var result = new List<TombstoneCollectionState>();
        foreach (var (collection, oldest) in reader.GetTombstoneCollections())
        {
            ITombstoneConsumer? holder = null;
            var slowest = long.MaxValue;
            foreach (var consumer in consumers)
            {
                if (!consumer.Consumes(collection))
                {
                    continue;
                }
                var position = consumer.GetLastProcessedTombstoneEtag(collection);
                if (position < slowest)
                {
                    slowest = position;
                    holder = consumer;
                }
            }
            result.Add(new TombstoneCollectionState(collection, oldest, Math.Min(durable, slowest), holder?.Name, holder?.HoldReason));
        }
        return result;
    }

    /// <summary>Removes every tombstone that may go now; returns how many were removed.</summary>
    public async Task<long> CleanAsync(CancellationToken cancellationToken = default)
    {
        ThrowIfDisposed();
        await _running.WaitAsync(cancellationToken).ConfigureAwait(false);
        if (Volatile.Read(ref _disposed) != 0)
        {
            _running.Release();
            ThrowIfDisposed();
        }

        try
        {
            var total = await CleanRevisionTombstonesAsync().ConfigureAwait(false);
            while (true)
            {
                var work = GetState().Where(s => s.CleanableUpToEtag >= s.OldestEtag).ToList();
                if (work.Count == 0)
                {
                    return total;
                }
                var command = new RemoveTombstonesCommand(work, _options.TombstoneCleanupBatch);
                await _database.EnqueueAsync(command).ConfigureAwait(false);
                total += command.Removed;
                Interlocked.Add(ref _removed, command.Removed);
                if (command.Removed < _options.TombstoneCleanupBatch)
                {
                    return total;
                }
            }
        }
        finally
        {
            _running.Release();
        }
    }

    /// <summary>
    /// The revision etag up to which revision tombstones may go: the lowest position of the consumers
    /// that read them (<see cref="IRevisionTombstoneConsumer"/>), or all with none.
    /// </summary>
    public long RevisionTombstonesCleanableUpTo()
    {
        var upTo = long.MaxValue;
        foreach (var consumer in _consumers)
        {
            if (consumer is IRevisionTombstoneConsumer reader)
            {
                upTo = Math.Min(upTo, reader.GetLastProcessedRevisionTombstoneEtag());
            }
        }
        return upTo;
    }

    /// <summary>Removes the revision tombstones every consumer has passed, in batches; returns how many.</summary>
    private async Task<long> CleanRevisionTombstonesAsync()
    {
        long total = 0;
        while (true)
        {
            long? oldest;
            long last;
            using (var reader = _database.BeginRead())
            {
                oldest = reader.OldestRevisionTombstoneEtag;
                last = reader.LastRevisionEtag;
            }
            // Never past what existed before the consumers were asked: one registered (a backup run
            // starting) after this decision holds from a revision etag at or past it.
            var upTo = Math.Min(RevisionTombstonesCleanableUpTo(), last);
            if (oldest is null || upTo < oldest)
            {
                return total;
            }
            var command = new RemoveRevisionTombstonesCommand(upTo, _options.TombstoneCleanupBatch);
            await _database.EnqueueAsync(command).ConfigureAwait(false);
            total += command.Removed;
            Interlocked.Add(ref _removed, command.Removed);
            if (command.Removed < _options.TombstoneCleanupBatch)
            {
                return total;
            }
        }
    }

    private async Task RunFromTimerAsync()
    {
        try
        {
            var removed = await CleanAsync().ConfigureAwait(false);
            if (removed > 0)
            {
                _logger.LogDebug("Removed {Count} tombstones of {Database}", removed, _database.Name);
            }
        }
        catch (Exception e) when (e is ObjectDisposedException or Errors.DatabaseUnavailableException)
        {
            // The database is closing.
        }
        catch (Exception e)
        {
            _logger.LogWarning(e, "Tombstone clean-up of {Database} failed; it runs again at the next interval", _database.Name);
        }
    }

    private void ThrowIfDisposed()
    {
        if (Volatile.Read(ref _disposed) != 0)
        {
            throw new Errors.DatabaseUnavailableException(_database.Name, "it is closed; its tombstones are cleaned when it opens again.");
        }
    }

    public async ValueTask DisposeAsync()
    {
        if (Interlocked.Exchange(ref _disposed, 1) != 0)
        {
            return;
        }
        if (_timer is not null)
        {
            await _timer.DisposeAsync().ConfigureAwait(false);
        }
        // Let a clean-up in progress finish before the merger closes; later calls fail at once.
        await _running.WaitAsync().ConfigureAwait(false);
        _running.Release();
    }

    private sealed class RemoveTombstonesCommand(List<TombstoneCollectionState> work, int max) : IMergedCommand<DocumentsTransaction>
    {
        public int Removed { get; private set; }

        public void Execute(DocumentsTransaction transaction)
        {
            Removed = 0;
            foreach (var state in work)
            {
                if (Removed >= max)
                {
                    break;
                }
                Removed += transaction.RemoveTombstones(System.Text.Encoding.UTF8.GetBytes(state.Collection), state.CleanableUpToEtag, max - Removed);
            }
        }
    }

    private sealed class RemoveRevisionTombstonesCommand(long upToEtag, int max) : IMergedCommand<DocumentsTransaction>
    {
        public int Removed { get; private set; }

        public void Execute(DocumentsTransaction transaction) => Removed = transaction.RemoveRevisionTombstones(upToEtag, max);
    }

    private sealed class Registration(TombstoneCleaner owner, ITombstoneConsumer consumer) : IDisposable
    {
        private int _disposed;

        public void Dispose()
        {
            if (Interlocked.Exchange(ref _disposed, 1) == 0)
            {
                ImmutableInterlocked.Update(ref owner._consumers, static (list, c) => list.Remove(c), consumer);
            }
        }
    }
}
