using System.Collections.Concurrent;

namespace Jackdaw.Server.Databases;

/// <summary>
/// The long-running operations of a database, by id (RavenDB's <c>operations/next-operation-id</c>,
/// <c>operations/state</c>, <c>operations/kill</c>), and their status changes for whoever
/// subscribes (the changes feed). In memory: an operation does not outlive the server, as in
/// RavenDB. The newest <see cref="Kept"/> are kept.
/// </summary>
/// <remarks>
/// While an operation runs, a timer publishes its progress every <see cref="ProgressInterval"/>
/// when its counts moved (RavenDB's clients get bulk insert progress about once a second); the
/// final state is published by the request that ends the operation, at once. The timer exists only
/// while some operation runs, and does nothing while nobody subscribes: the bulk insert itself
/// only counts.
/// </remarks>
public sealed class DatabaseOperations : IDisposable
{
    public const int Kept = 1024;

    /// <summary>How often a running operation's progress is published (when it moved).</summary>
    public static readonly TimeSpan ProgressInterval = TimeSpan.FromSeconds(1);

    private readonly ConcurrentDictionary<long, DatabaseOperation> _operations = new();
    private readonly ConcurrentDictionary<long, DatabaseOperation> _running = new();
    private readonly ILogger _logger;
    private readonly Lock _lock = new();
    private Action<DatabaseOperationState>[] _subscribers = [];
    private Timer? _timer;
    private bool _disposed;
    private long _lastId;

    public DatabaseOperations(ILogger logger)
    {
        _logger = logger;
    }

    /// <summary>A new operation id (from 1).</summary>
    public long NextId() => Interlocked.Increment(ref _lastId);

    /// <summary>
    /// An operation the server starts of its own accord, under a new id that no running operation
    /// has: ids are also chosen by clients (an import's or a bulk insert's <c>operationId</c>), so
    /// the next id may be taken already.
    /// </summary>
    public DatabaseOperation StartNew(IOperationDetails? details)
    {
        while (true)
        {
            var id = NextId();
            if (!_operations.TryGetValue(id, out var existing) || existing.Status != OperationStatus.InProgress)
            {
                try
                {
                    return Start(id, details);
                }
                catch (Errors.BadRequestException)
                {
                    // Taken between the look and the start: the next one.
                }
            }
        }
    }

    /// <summary>The operation of that id, started now unless it already was.</summary>
    /// <param name="details">The counts of an operation that writes its own progress and result (see <see cref="IOperationDetails"/>); null for a bulk insert.</param>
    /// <exception cref="Errors.BadRequestException">An operation of that id is still running.</exception>
    public DatabaseOperation Start(long id, IOperationDetails? details = null)
    {
        var operation = new DatabaseOperation(this, id, details);
        var existing = _operations.GetOrAdd(id, operation);
        if (!ReferenceEquals(existing, operation))
        {
            if (existing.Status == OperationStatus.InProgress)
            {
                throw new Errors.BadRequestException($"Operation {id} is still running; ask operations/next-operation-id for an id of your own.");
            }
            _operations[id] = operation;
        }
        if (_operations.Count > Kept)
        {
            // Only finished operations are forgotten: a running one stays reachable by its id.
            foreach (var old in _operations.Where(o => o.Value.Status != OperationStatus.InProgress).Select(o => o.Key).Order().Take(_operations.Count - Kept).ToList())
            {
                _operations.TryRemove(old, out _);
            }
        }
        lock (_lock)
        {
            _running[id] = operation;
            if (_timer is null && !_disposed)
            {
                _timer = new Timer(static state => ((DatabaseOperations)state!).PublishProgress(), this, ProgressInterval, ProgressInterval);
            }
        }
        return operation;
    }

    public bool TryGet(long id, out DatabaseOperation operation) => _operations.TryGetValue(id, out operation!);

    /// <summary>
    /// Calls <paramref name="subscriber"/> with every status change from now on: progress of running
    /// operations (from a timer thread) and final states (from the request that ended the operation).
    /// It must only queue; it may be called for one operation from two threads, never out of order.
    /// </summary>
    public IDisposable Subscribe(Action<DatabaseOperationState> subscriber)
    {
        lock (_lock)
        {
            _subscribers = [.. _subscribers, subscriber];
        }
        return new Subscription(this, subscriber);
    }

    /// <summary>Hands a state to every subscriber (the operation holds its own lock, which keeps its states in order).</summary>
    internal void Publish(DatabaseOperationState state)
    {
        foreach (var subscriber in Volatile.Read(ref _subscribers))
        {
            try
            {
                subscriber(state);
            }
            catch (Exception e)
            {
                _logger.LogError(e, "An operation subscriber failed at operation {Operation} ({Status})", state.OperationId, state.Status);
            }
        }
    }

    internal void Ended(DatabaseOperation operation)
    {
        lock (_lock)
        {
            _running.TryRemove(new KeyValuePair<long, DatabaseOperation>(operation.Id, operation));
            if (_running.IsEmpty)
            {
                StopTimer();
            }
        }
    }

    private void PublishProgress()
    {
        if (Volatile.Read(ref _subscribers).Length == 0)
        {
            return;
        }
        foreach (var operation in _running.Values)
        {
            operation.PublishProgressIfChanged();
        }
    }

    private void StopTimer()
    {
        _timer?.Dispose();
        _timer = null;
    }

    /// <summary>The database closed: no more progress (requests still running end on their own).</summary>
    public void Dispose()
    {
        lock (_lock)
        {
            _disposed = true;
            StopTimer();
        }
    }

    private sealed class Subscription(DatabaseOperations owner, Action<DatabaseOperationState> subscriber) : IDisposable
    {
        private int _disposed;

        public void Dispose()
        {
            if (Interlocked.Exchange(ref _disposed, 1) != 0)
            {
                return;
            }
            lock (owner._lock)
            {
                owner._subscribers = Array.FindAll(owner._subscribers, s => s != subscriber);
            }
        }
    }
}
