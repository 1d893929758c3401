using System.Collections.Immutable;

namespace Jackdaw.Server.Databases;

/// <summary>
/// The one signal that a database's changes are durable. The writer hands over each commit with
/// its journal write's task; once that write is on disk (and every earlier one), the commit is
/// published, in commit order: <see cref="DurableEtag"/> moves, waiters of
/// <see cref="WaitForEtagAsync"/> wake, and the synchronous subscribers are called.
/// </summary>
public sealed class DurableNotifications
{
    private readonly Lock _lock = new();
    private readonly Queue<(Task Durable, DurableCommit Commit)> _pending = new();
    private readonly ILogger _logger;
    private ImmutableArray<Action<DurableCommit>> _subscribers = [];
    private TaskCompletionSource _next = new(TaskCreationOptions.RunContinuationsAsynchronously);
    private long _durableEtag;
    private long _published;
    private readonly TaskCompletionSource _closed = new(TaskCreationOptions.RunContinuationsAsynchronously);

    internal DurableNotifications(long durableEtag, ILogger logger)
    {
        _durableEtag = durableEtag;
        _logger = logger;
    }

    /// <summary>The etag of the last durable change: nothing above it is acknowledged or visible.</summary>
    public long DurableEtag => Volatile.Read(ref _durableEtag);

    /// <summary>Completes when the database closes: no commit is published after it (waiters fail).</summary>
    public Task Closed => _closed.Task;

    /// <summary>Commits published so far.</summary>
    public long Published => Volatile.Read(ref _published);

    /// <summary>
    /// Completes once every change up to <paramref name="etag"/> is durable (at once if it is).
    /// </summary>
    /// <exception cref="Errors.DatabaseUnavailableException">The database closed before the etag became durable.</exception>
    public Task WaitForEtagAsync(long etag, CancellationToken cancellationToken = default)
    {
        // Read the signal before the etag: a publish after this read completes this signal, and a
        // publish before it has already moved the etag (it writes the etag before swapping).
        var next = Volatile.Read(ref _next);
        if (DurableEtag >= etag)
        {
            return Task.CompletedTask;
        }
        return WaitSlowAsync(next.Task, etag, cancellationToken);
    }

    private async Task WaitSlowAsync(Task next, long etag, CancellationToken cancellationToken)
    {
        while (true)
        {
            await next.WaitAsync(cancellationToken).ConfigureAwait(false);
            next = Volatile.Read(ref _next).Task;
            if (DurableEtag >= etag)
            {
                return;
            }
        }
    }

    /// <summary>
    /// Calls <paramref name="subscriber"/> with every commit published from now on, in order, on
    /// the thread that publishes it: it must be quick and must not block (queue the work). Its
    /// exceptions are logged and do not reach other subscribers. Dispose the result to stop.
    /// </summary>
    public IDisposable Subscribe(Action<DurableCommit> subscriber)
    {
        lock (_lock)
            _subscribers = _subscribers.Add(subscriber);
        return new Subscription(this, subscriber);
    }

    /// <summary>
    /// Called by the writer, in commit order, with the task of the commit's journal write. The task
    /// returned completes after the commit is published (or faults as the write did); a commit
    /// whose write failed is never published.
    /// </summary>
    internal Task Track(Task durable, DurableCommit commit)
    {
        lock (_lock)
            _pending.Enqueue((durable, commit));
        return durable.ContinueWith(
            static (task, state) =>
            {
                ((DurableNotifications)state!).PublishCompleted();
                task.GetAwaiter().GetResult();
            },
            this,
            CancellationToken.None,
            TaskContinuationOptions.ExecuteSynchronously,
            TaskScheduler.Default);
    }

    private void PublishCompleted()
    {
        lock (_lock)
        {
            // Journal writes complete in order, but continuations may run out of order: publish
            // only from the head, so a later commit never goes out before an earlier one.
            while (_pending.TryPeek(out var head) && head.Durable.IsCompleted)
            {
                _pending.Dequeue();
                if (!head.Durable.IsCompletedSuccessfully)
                {
                    continue;
                }
                Volatile.Write(ref _durableEtag, head.Commit.LastEtag);
                _published++;
                foreach (var subscriber in _subscribers)
                {
                    try
                    {
                        subscriber(head.Commit);
                    }
                    catch (Exception e)
                    {
                        _logger.LogError(e, "A durable-commit subscriber failed at etag {Etag}", head.Commit.LastEtag);
                    }
                }
                var released = _next;
                Volatile.Write(ref _next, new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously));
                released.TrySetResult();
            }
        }
    }

    /// <summary>
    /// Ends the signal when the database closes (after its last commit was published): waiters of
    /// etags not reached fail with <see cref="Errors.DatabaseUnavailableException"/>, so index loops
    /// and subscription senders notice instead of waiting forever, and <see cref="Closed"/> completes.
    /// </summary>
    internal void Close(string database)
    {
        lock (_lock)
        {
            if (_closed.Task.IsCompleted)
            {
                return;
            }
            _next.TrySetException(new Errors.DatabaseUnavailableException(database, "it closed (unloaded, deleted, or reopened after a storage failure); wait on the database opened next."));
            _closed.TrySetResult();
        }
    }

    private sealed class Subscription(DurableNotifications owner, Action<DurableCommit> subscriber) : IDisposable
    {
        private int _disposed;

        public void Dispose()
        {
            if (Interlocked.Exchange(ref _disposed, 1) != 0)
            {
                return;
            }
            lock (owner._lock)
                owner._subscribers = owner._subscribers.Remove(subscriber);
        }
    }
}
