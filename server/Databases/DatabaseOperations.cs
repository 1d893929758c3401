using System.Collections.Concurrent;

namespace Jackdaw.Server.Databases;

/// <summary>Where a long-running operation (a bulk insert) stands.</summary>
public enum OperationStatus
{
    InProgress,
    Completed,
    Faulted,
    Canceled,
}

/// <summary>One long-running operation of a database, as RavenDB's clients follow it by id.</summary>
public sealed class DatabaseOperation(long id)
{
    private readonly CancellationTokenSource _kill = new();

    public long Id { get; } = id;

    public OperationStatus Status { get; private set; } = OperationStatus.InProgress;

    /// <summary>Why it failed, when <see cref="Status"/> is <see cref="OperationStatus.Faulted"/>.</summary>
    public string? Error { get; private set; }

    /// <summary>How many items it completed (documents, for a bulk insert).</summary>
    public long Total { get; private set; }

    /// <summary>Cancelled by <c>POST /operations/kill</c>.</summary>
    public CancellationToken Killed => _kill.Token;

    public void Complete(long total)
    {
        Total = total;
        Status = OperationStatus.Completed;
    }

    public void Fail(Exception error, long total)
    {
        Total = total;
        Error = error.Message;
        Status = _kill.IsCancellationRequested ? OperationStatus.Canceled : OperationStatus.Faulted;
    }

    public void Kill() => _kill.Cancel();
}

/// <summary>
/// The long-running operations of a database, by id (RavenDB's <c>operations/next-operation-id</c>,
/// <c>operations/state</c>, <c>operations/kill</c>). In memory: an operation does not outlive the
/// server, as in RavenDB. The newest <see cref="Kept"/> are kept.
/// </summary>
public sealed class DatabaseOperations
{
    public const int Kept = 1024;

    private readonly ConcurrentDictionary<long, DatabaseOperation> _operations = new();
    private long _lastId;

    /// <summary>A new operation id (from 1).</summary>
    public long NextId() => Interlocked.Increment(ref _lastId);

    /// <summary>The operation of that id, started now unless it already was.</summary>
    /// <exception cref="Errors.BadRequestException">An operation of that id is still running.</exception>
    public DatabaseOperation Start(long id)
    {
        var operation = new DatabaseOperation(id);
        var existing = _operations.GetOrAdd(id, operation);
        if (!ReferenceEquals(existing, operation))
        {
            if (existing.Status == OperationStatus.InProgress)
                throw new Errors.BadRequestException($"Operation {id} is still running; ask operations/next-operation-id for an id of your own.");
            _operations[id] = operation;
        }
        if (_operations.Count > Kept)
        {
            // Only finished operations are forgotten: a running one stays reachable by its id.
            foreach (var old in _operations.Where(o => o.Value.Status != OperationStatus.InProgress).Select(o => o.Key).Order().Take(_operations.Count - Kept).ToList())
                _operations.TryRemove(old, out _);
        }
        return operation;
    }

    public bool TryGet(long id, out DatabaseOperation operation) => _operations.TryGetValue(id, out operation!);
}
