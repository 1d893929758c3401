using System.Diagnostics;
using System.Threading.Channels;

namespace Jackdaw.Server.Documents;

/// <summary>
/// A write operation queued to a <see cref="TransactionMerger{TTransaction}"/>. It may run more
/// than once: if another command of the same merged transaction fails, the transaction is rolled
/// back and the survivors are executed again in a fresh one. So <see cref="Execute"/> must read
/// everything it depends on from the transaction, and keep its results in fields it overwrites.
/// </summary>
public interface IMergedCommand<in TTransaction>
{
    /// <summary>Applies the command. Throwing fails this command only.</summary>
    void Execute(TTransaction transaction);

    /// <summary>
    /// About how many bytes the command writes; the merger stops adding commands to a transaction
    /// once their sum passes its budget, so a few huge batches do not make one giant commit.
    /// </summary>
    long EstimatedBytes => 0;
}

/// <summary>
/// One writer per database. Requests enqueue commands; a dedicated thread takes whatever is
/// waiting, executes it in a single write transaction and commits it with a single durable
/// journal write, then completes each request. A request's task completes only after its
/// transaction is durable. A command that throws fails only its own request: the transaction is
/// rolled back and retried without it.
/// </summary>
public sealed class TransactionMerger<TTransaction> : IAsyncDisposable
    where TTransaction : IDisposable
{
    private readonly Channel<Pending> _queue = Channel.CreateUnbounded<Pending>(new UnboundedChannelOptions { SingleReader = true });
    private readonly Func<TTransaction> _begin;
    private readonly Func<TTransaction, Task> _commit;
    private readonly Queue<Task> _inFlight = new();

    // The durability of the last transaction handed over; only the writer touches it.
    private Task _previousDurable = Task.CompletedTask;
    private readonly ILogger _logger;
    private readonly int _maxBatch;

    /// <summary>The byte budget of one merged transaction (a single command may exceed it alone).</summary>
    public const long MaxBatchBytes = 64L * 1024 * 1024;
    private readonly int _maxInFlight;

    // How many times the writer goes behind queued pool work before cutting a batch (see RunAsync).
    private const int YieldsUnderLoad = 2;
    private readonly Task _loop;
    private long _transactions;
    private long _commands;
    private ITransactionMergerObserver? _observer;

    /// <param name="begin">Starts a write transaction.</param>
    /// <param name="commit">Commits it durably; returns only once the journal write is on disk.</param>
    /// <param name="logger">Where failures of the merger itself are reported.</param>
    /// <param name="maxBatch">The most commands merged into one transaction.</param>
    public TransactionMerger(Func<TTransaction> begin, Action<TTransaction> commit, ILogger logger, int maxBatch = 1024)
        : this(begin, transaction => { commit(transaction); return Task.CompletedTask; }, logger, maxBatch)
    {
    }

    /// <summary>
    /// A merger with pipelined commits: <paramref name="commitPipelined"/> hands the transaction to
    /// the journal and returns a task that completes when it is durable, so the next transaction
    /// is prepared while the previous journal write is in flight. Requests are still answered only
    /// once their own transaction is durable.
    /// </summary>
    /// <param name="begin">Starts a write transaction; may begin before the previous one is durable.</param>
    /// <param name="commitPipelined">Ends the transaction and returns its durability.</param>
    /// <param name="logger">Where failures of the merger itself are reported.</param>
    /// <param name="maxBatch">The most commands merged into one transaction.</param>
    /// <param name="maxInFlight">Commits allowed in flight at once before the writer waits.</param>
    public TransactionMerger(Func<TTransaction> begin, Func<TTransaction, Task> commitPipelined, ILogger logger, int maxBatch = 1024, int maxInFlight = 2)
    {
        _maxInFlight = maxInFlight;
        _begin = begin;
        _commit = commitPipelined;
        _logger = logger;
        _maxBatch = maxBatch;
        _loop = Task.Factory.StartNew(RunAsync, CancellationToken.None, TaskCreationOptions.LongRunning, TaskScheduler.Default).Unwrap();
    }

    /// <summary>The database this merger writes, named in errors.</summary>
    public string Name { get; init; } = "(unnamed)";

    /// <summary>Transactions committed so far (each may hold many commands).</summary>
    public long Transactions => Volatile.Read(ref _transactions);

    /// <summary>Commands committed so far.</summary>
    public long Commands => Volatile.Read(ref _commands);

    /// <summary>
    /// Told of every transaction that became durable (the server's metrics); null: nobody. Called on
    /// the writer's thread or the journal's completion: it must be quick and must not block.
    /// </summary>
    public ITransactionMergerObserver? Observer
    {
        get => Volatile.Read(ref _observer);
        set => Volatile.Write(ref _observer, value);
    }

    /// <summary>Commands queued and not yet taken into a transaction (RavenDB's NumberOfTransactionMergerQueueOperations).</summary>
    public int Queued => _queue.Reader.CanCount ? _queue.Reader.Count : 0;

    /// <summary>Queues <paramref name="command"/>; the task completes once it is durable, or faults with its exception.</summary>
    public Task EnqueueAsync(IMergedCommand<TTransaction> command)
    {
        var pending = new Pending(command);
        if (!_queue.Writer.TryWrite(pending))
        {
            return Task.FromException(new Errors.DatabaseUnavailableException(Name, "it is shutting down; the write was not applied."));
        }
        return pending.Completion.Task;
    }

    /// <summary>Stops taking commands, finishes those already queued, then returns.</summary>
    public async ValueTask DisposeAsync()
    {
        _queue.Writer.TryComplete();
        await _loop.ConfigureAwait(false);
    }

    private async Task RunAsync()
    {
        var batch = new List<Pending>(_maxBatch);
        var reader = _queue.Reader;
        while (await reader.WaitToReadAsync().ConfigureAwait(false))
        {
            // Bound the pipeline: at most _maxInFlight commits wait for their journal write. Waiting
            // before taking the batch lets the commands that arrive meanwhile join it.
            while (_inFlight.Count >= _maxInFlight)
            {
                await _inFlight.Dequeue().ConfigureAwait(false);
            }

            // Under load, work is queued on the thread pool: mostly requests on their way here, or
            // answers of the last commit on their way out. Going behind it (a yield queues this loop
            // at the end of the pool's queue) makes one transaction of what would be several, and
            // each transaction costs a journal write and fdatasync (~100 µs of CPU). An idle pool (one
            // client) never waits.
            for (var y = 0; y < YieldsUnderLoad && ThreadPool.PendingWorkItemCount > 0; y++)
            {
                await Task.Yield();
            }

            long bytes = 0;
            while (batch.Count < _maxBatch && bytes < MaxBatchBytes && reader.TryRead(out var next))
            {
                batch.Add(next);
                bytes += next.Command.EstimatedBytes;
            }

            try
            {
                CommitBatch(batch);
            }
            catch (Exception e)
            {
                // Begin or commit failed: nothing of this batch is durable.
                LogCommitFailure(e, batch.Count);
                foreach (var pending in batch)
                {
                    pending.Completion.TrySetException(e);
                }
            }
            batch.Clear();
        }

        while (_inFlight.Count > 0)
        {
            await _inFlight.Dequeue().ConfigureAwait(false);
        }
    }

    private void CommitBatch(List<Pending> batch)
    {
        while (batch.Count > 0)
        {
            using var transaction = _begin();
            Pending? failed = null;
            Exception? failure = null;
            foreach (var pending in batch)
            {
                try
                {
                    pending.Command.Execute(transaction);
                }
                catch (Exception e)
                {
                    failed = pending;
                    failure = e;
                    break;
                }
            }

            if (failed is null)
            {
                // A transaction builds on every one handed over before it: its requests are answered
                // only once those are durable too (and fail if one of them failed).
                var observer = Observer;
                var handedOver = observer is null ? 0 : Stopwatch.GetTimestamp();
                var durable = _commit(transaction);
                if (!_previousDurable.IsCompletedSuccessfully)
                {
                    durable = Task.WhenAll(_previousDurable, durable);
                }
                _previousDurable = durable;
                Interlocked.Increment(ref _transactions);
                Interlocked.Add(ref _commands, batch.Count);
                if (durable.IsCompletedSuccessfully)
                {
                    observer?.Committed(batch.Count, Stopwatch.GetElapsedTime(handedOver));
                    foreach (var pending in batch)
                    {
                        pending.Completion.TrySetResult();
                    }
                    return;
                }

                // Answer the requests when the journal write is done; meanwhile the writer goes on.
                // The continuation never faults, so waiting on it (to bound the pipeline) is safe.
                // With no observer (metrics off) the state is the batch alone, as it was before
                // metrics: nothing is allocated for them.
                _inFlight.Enqueue(observer is null
                    ? durable.ContinueWith(
                        static (task, state) => CompleteAll((Pending[])state!, task),
                        batch.ToArray(),
                        CancellationToken.None,
                        TaskContinuationOptions.ExecuteSynchronously,
                        TaskScheduler.Default)
                    : durable.ContinueWith(
                        static (task, state) => ((InFlight)state!).Complete(task),
                        new InFlight(batch.ToArray(), observer, handedOver),
                        CancellationToken.None,
                        TaskContinuationOptions.ExecuteSynchronously,
                        TaskScheduler.Default));
                return;
            }

            // Roll back (dispose without commit) and retry the others without the failed one.
            failed.Completion.TrySetException(failure!);
            batch.Remove(failed);
        }
    }

    /// <summary>A transaction handed to the journal: its requests, answered once it is durable.</summary>
    private sealed class InFlight(Pending[] batch, ITransactionMergerObserver? observer, long handedOver)
    {
        public void Complete(Task durable)
        {
            if (durable.IsCompletedSuccessfully)
            {
                observer?.Committed(batch.Length, Stopwatch.GetElapsedTime(handedOver));
            }
            CompleteAll(batch, durable);
        }
    }

    private static void CompleteAll(Pending[] batch, Task durable)
    {
        if (durable.IsCompletedSuccessfully)
        {
            foreach (var pending in batch)
            {
                pending.Completion.TrySetResult();
            }
            return;
        }
        Exception error = durable.Exception?.InnerException ?? new OperationCanceledException("The commit was canceled.");
        foreach (var pending in batch)
        {
            pending.Completion.TrySetException(error);
        }
    }

    private void LogCommitFailure(Exception e, int count) =>
        _logger.LogError(e, "A merged transaction of {Count} command(s) failed to commit; the requests were answered with the error", count);

    private sealed class Pending(IMergedCommand<TTransaction> command)
    {
        public IMergedCommand<TTransaction> Command { get; } = command;

        public TaskCompletionSource Completion { get; } = new(TaskCreationOptions.RunContinuationsAsynchronously);
    }
}
