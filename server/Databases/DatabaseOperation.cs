namespace Jackdaw.Server.Databases;

/// <summary>
/// One long-running operation of a database (a bulk insert, a backup), as RavenDB's clients follow
/// it by id: its status, its progress and, once ended, its result or why it failed. A bulk insert's
/// request writes its counts; any other kind describes its progress and result as JSON of its own
/// (<see cref="OperationDetails"/>: this layer does not know backups). <see cref="DatabaseOperations"/> publishes them about once a second while they change,
/// and the final state once when the operation ends.
/// </summary>
/// <remarks>
/// Every change of status and every publication happen under <see cref="_lock"/>, so a progress
/// event is never published after the final state of its operation. The per-document count is the
/// only write of the hot path: one field, written by the single ingesting thread, read by the
/// publisher with <see cref="Volatile"/>.
/// </remarks>
public sealed class DatabaseOperation
{
    private readonly DatabaseOperations _owner;
    private readonly CancellationTokenSource _kill = new();
    private readonly Lock _lock = new();
    private long _documentsProcessed;
    private long _total;
    private long _batchCount;
    private string? _lastProcessedId;
    private long _lastBatch;
    private OperationStatus _status = OperationStatus.InProgress;
    private OperationFailure? _failure;
    private BulkInsertProgress _published;
    private readonly Func<byte[]>? _describeProgress;
    private byte[]? _publishedDetails;
    private byte[]? _result;

    internal DatabaseOperation(DatabaseOperations owner, long id, Func<byte[]>? describeProgress = null)
    {
        _owner = owner;
        Id = id;
        _describeProgress = describeProgress;
    }

    public long Id { get; }

    public OperationStatus Status
    {
        get
        {
            lock (_lock)
            {
                return _status;
            }
        }
    }

    /// <summary>How many documents it committed.</summary>
    public long Total
    {
        get
        {
            lock (_lock)
            {
                return _total;
            }
        }
    }

    /// <summary>Cancelled by <c>POST /operations/kill</c>.</summary>
    public CancellationToken Killed => _kill.Token;

    /// <summary>The operation as it stands now.</summary>
    public DatabaseOperationState State
    {
        get
        {
            lock (_lock)
            {
                return StateLocked();
            }
        }
    }

    /// <summary>One more document read off the stream (the ingesting thread alone calls it).</summary>
    public void DocumentProcessed() => Volatile.Write(ref _documentsProcessed, _documentsProcessed + 1);

    /// <summary>
    /// Batch number <paramref name="batch"/> of the stream (from 1), <paramref name="count"/>
    /// documents ending with <paramref name="lastId"/>, is durable. Batches become durable in order
    /// but may be counted out of order (from the thread pool): the latest batch names the last id.
    /// </summary>
    public void BatchCommitted(long batch, int count, string lastId)
    {
        lock (_lock)
        {
            if (_status != OperationStatus.InProgress)
            {
                return;
            }
            _total += count;
            _batchCount++;
            if (batch > _lastBatch)
            {
                _lastBatch = batch;
                _lastProcessedId = lastId;
            }
        }
    }

    /// <summary>It ended with every document committed (<paramref name="total"/> of them); publishes the final state.</summary>
    public void Complete(long total) => End(OperationStatus.Completed, total, null);

    /// <summary>An operation that describes itself (started with a progress description) ended well with <paramref name="resultJson"/>, its <c>Result</c>.</summary>
    public void Complete(byte[] resultJson)
    {
        lock (_lock)
        {
            if (_status == OperationStatus.InProgress)
            {
                _result = resultJson;
            }
        }
        End(OperationStatus.Completed, 0, null);
    }

    /// <summary>An operation that describes itself failed at <paramref name="failure"/> (<see cref="OperationStatus.Canceled"/> when it was killed).</summary>
    public void Fail(OperationFailure failure) => Fail(failure, 0);

    /// <summary>
    /// It stopped at <paramref name="failure"/> after committing <paramref name="total"/> documents:
    /// <see cref="OperationStatus.Canceled"/> when it was killed, else <see cref="OperationStatus.Faulted"/>.
    /// Publishes the final state.
    /// </summary>
    public void Fail(OperationFailure failure, long total) =>
        End(_kill.IsCancellationRequested ? OperationStatus.Canceled : OperationStatus.Faulted, total, failure);

    public void Kill() => _kill.Cancel();

    /// <summary>
    /// The state to publish as progress: only while in progress and when the counts moved since
    /// the last time (a stalled insert is not announced again every second).
    /// </summary>
    internal void PublishProgressIfChanged()
    {
        lock (_lock)
        {
            if (_status != OperationStatus.InProgress)
            {
                return;
            }
            var state = StateLocked();
            if (state.Details is { ProgressJson: { } json })
            {
                if (_publishedDetails is not null && json.AsSpan().SequenceEqual(_publishedDetails))
                {
                    return;
                }
                _publishedDetails = json;
            }
            else if (state.Progress == _published)
            {
                return;
            }
            _published = state.Progress;
            _owner.Publish(state);
        }
    }

    private void End(OperationStatus status, long total, OperationFailure? failure)
    {
        lock (_lock)
        {
            if (_status != OperationStatus.InProgress)
            {
                return;
            }
            _status = status;
            _total = total;
            _failure = failure;
            _owner.Publish(StateLocked());
        }
        _owner.Ended(this);
    }

    private DatabaseOperationState StateLocked() =>
        new(Id, _status, new BulkInsertProgress(_total, _batchCount, _lastProcessedId, Volatile.Read(ref _documentsProcessed)), _failure,
            _describeProgress is null ? null : new OperationDetails(_status == OperationStatus.InProgress ? _describeProgress() : null, _result));
}
