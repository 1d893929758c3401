using System.Collections.Concurrent;
using Jackdaw.Server.Documents;
using Microsoft.Extensions.Logging.Abstractions;

namespace Jackdaw.Server.Tests.Documents;

public class TransactionMergerTests
{
    /// <summary>A store whose transactions buffer writes and apply them only on commit.</summary>
    private sealed class FakeStore
    {
        public ConcurrentDictionary<string, int> Committed { get; } = new();

        public int Commits;

        public int Rollbacks;

        public Func<bool> FailCommit { get; set; } = () => false;

        public ManualResetEventSlim CommitOpen { get; } = new(initialState: true);

        public FakeTransaction Begin() => new(this);

        public void Commit(FakeTransaction transaction)
        {
            CommitOpen.Wait();
            if (FailCommit())
            {
                throw new IOException("disk full (simulated)");
            }
            foreach (var (key, value) in transaction.Writes)
            {
                Committed[key] = value;
            }
            transaction.Committed = true;
            Interlocked.Increment(ref Commits);
        }
    }

    private sealed class FakeTransaction(FakeStore store) : IDisposable
    {
        public Dictionary<string, int> Writes { get; } = [];

        public bool Committed { get; set; }

        public void Dispose()
        {
            if (!Committed)
            {
                Interlocked.Increment(ref store.Rollbacks);
            }
        }
    }

    private sealed class PutCommand(string key, int value, bool fail = false) : IMergedCommand<FakeTransaction>
    {
        public int Executions;

        public void Execute(FakeTransaction transaction)
        {
            Executions++;
            transaction.Writes[key] = value;
            if (fail)
            {
                throw new InvalidOperationException($"command {key} refused");
            }
        }
    }

    private static TransactionMerger<FakeTransaction> CreateMerger(FakeStore store) =>
        new(store.Begin, store.Commit, NullLogger.Instance);

    [Fact]
    public async Task CommandIsDurableWhenItsTaskCompletes()
    {
        var store = new FakeStore();
        await using var merger = CreateMerger(store);
        await merger.EnqueueAsync(new PutCommand("a", 1));
        Assert.Equal(1, store.Committed["a"]);
        Assert.Equal(1, store.Commits);
    }

    [Fact]
    public async Task ConcurrentCommandsAreMergedIntoFewerTransactions()
    {
        var store = new FakeStore();
        await using var merger = CreateMerger(store);

        // Hold the first commit so the rest pile up behind it, as they do behind a slow fsync.
        store.CommitOpen.Reset();
        var first = merger.EnqueueAsync(new PutCommand("first", 0));
        var tasks = Enumerable.Range(0, 200).Select(i => merger.EnqueueAsync(new PutCommand($"k{i}", i))).ToList();
        store.CommitOpen.Set();
        await first;
        await Task.WhenAll(tasks);

        Assert.Equal(201, store.Committed.Count);
        Assert.Equal(201, merger.Commands);
        Assert.True(merger.Transactions < 20, $"{merger.Transactions} transactions for 201 commands");
    }

    [Fact]
    public async Task FailingCommandFailsOnlyItsOwnRequest()
    {
        var store = new FakeStore();
        await using var merger = CreateMerger(store);
        store.CommitOpen.Reset();
        var blocker = merger.EnqueueAsync(new PutCommand("blocker", 0));

        var good1 = new PutCommand("good1", 1);
        var bad = new PutCommand("bad", 2, fail: true);
        var good2 = new PutCommand("good2", 3);
        var t1 = merger.EnqueueAsync(good1);
        var tb = merger.EnqueueAsync(bad);
        var t2 = merger.EnqueueAsync(good2);
        store.CommitOpen.Set();

        await blocker;
        await t1;
        await t2;
        var error = await Assert.ThrowsAsync<InvalidOperationException>(() => tb);
        Assert.Contains("bad", error.Message, StringComparison.Ordinal);
        Assert.False(store.Committed.ContainsKey("bad"));
        Assert.Equal(1, store.Committed["good1"]);
        Assert.Equal(3, store.Committed["good2"]);
    }

    [Fact]
    public async Task FailedTransactionIsRolledBackAndRetriedWithoutTheFailure()
    {
        var store = new FakeStore();
        await using var merger = CreateMerger(store);
        var commands = new List<PutCommand>();
        var tasks = new List<Task>();
        for (var i = 0; i < 50; i++)
        {
            var command = new PutCommand($"k{i}", i, fail: i % 10 == 3);
            commands.Add(command);
            tasks.Add(merger.EnqueueAsync(command));
        }
        for (var i = 0; i < 50; i++)
        {
            if (i % 10 == 3)
            {
                await Assert.ThrowsAsync<InvalidOperationException>(() => tasks[i]);
            }
            else
            {
                await tasks[i];
            }
        }
        Assert.Equal(45, store.Committed.Count);
        Assert.All(Enumerable.Range(0, 50).Where(i => i % 10 != 3), i => Assert.Equal(i, store.Committed[$"k{i}"]));
        Assert.DoesNotContain(store.Committed.Keys, k => int.Parse(k[1..], System.Globalization.CultureInfo.InvariantCulture) % 10 == 3);
    }

    [Fact]
    public async Task CommitFailureFaultsEveryRequestOfThatTransactionAndTheMergerGoesOn()
    {
        var store = new FakeStore();
        await using var merger = CreateMerger(store);
        store.FailCommit = () => true;
        await Assert.ThrowsAsync<IOException>(() => merger.EnqueueAsync(new PutCommand("lost", 1)));
        Assert.Empty(store.Committed);

        store.FailCommit = () => false;
        await merger.EnqueueAsync(new PutCommand("kept", 2));
        Assert.Equal(2, store.Committed["kept"]);
    }

    [Fact]
    public async Task DisposeFinishesQueuedCommandsThenRefusesNewOnes()
    {
        var store = new FakeStore();
        var merger = CreateMerger(store);
        var tasks = Enumerable.Range(0, 100).Select(i => merger.EnqueueAsync(new PutCommand($"k{i}", i))).ToList();
        await merger.DisposeAsync();
        await Task.WhenAll(tasks);
        Assert.Equal(100, store.Committed.Count);
        // A closed database's writer refuses with the domain error the pipeline answers 503 for.
        await Assert.ThrowsAsync<Jackdaw.Server.Errors.DatabaseUnavailableException>(() => merger.EnqueueAsync(new PutCommand("late", 1)));
    }
    /// <summary>Pipelined commits whose durability the test completes by hand.</summary>
    private sealed class PipelinedStore
    {
        public ConcurrentQueue<TaskCompletionSource> Pending { get; } = new();

        public FakeTransaction Begin() => new(new FakeStore());

        public Task Commit(FakeTransaction transaction, bool durableAtOnce)
        {
            transaction.Committed = true;
            if (durableAtOnce)
            {
                return Task.CompletedTask;
            }
            var durable = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
            Pending.Enqueue(durable);
            return durable.Task;
        }
    }

    private sealed class SignalCommand(TaskCompletionSource executed) : IMergedCommand<FakeTransaction>
    {
        public void Execute(FakeTransaction transaction) => executed.TrySetResult();
    }

    [Fact]
    public async Task PipelinedRequestIsAnsweredOnlyAfterEveryEarlierCommitIsDurable()
    {
        var store = new PipelinedStore();
        var commits = 0;
        // The first commit stays in flight; the second (a transaction that changed nothing, say)
        // reports itself durable at once but built on the first.
        await using var merger = new TransactionMerger<FakeTransaction>(store.Begin, t => store.Commit(t, Interlocked.Increment(ref commits) > 1), NullLogger.Instance);
        var firstExecuted = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        var first = merger.EnqueueAsync(new SignalCommand(firstExecuted));
        await firstExecuted.Task.WaitAsync(TimeSpan.FromSeconds(10));
        var secondExecuted = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        var second = merger.EnqueueAsync(new SignalCommand(secondExecuted));
        await secondExecuted.Task.WaitAsync(TimeSpan.FromSeconds(10));
        while (merger.Transactions < 2)
        {
            await Task.Yield();
        }

        Assert.False(first.IsCompleted);
        Assert.False(second.IsCompleted);
        Assert.True(store.Pending.TryDequeue(out var durable));
        durable.SetResult();
        await Task.WhenAll(first, second).WaitAsync(TimeSpan.FromSeconds(10));
    }

    [Fact]
    public async Task CommandsArrivingWhileThePipelineIsFullJoinOneTransaction()
    {
        // Both pipeline slots busy (two commits in flight): the writer waits for one to be durable and
        // only then takes its batch, so every command queued meanwhile goes into a single transaction.
        var store = new PipelinedStore();
        var sizes = new ConcurrentQueue<int>();
        await using var merger = new TransactionMerger<FakeTransaction>(store.Begin, t => { sizes.Enqueue(t.Writes.Count); return store.Commit(t, durableAtOnce: false); }, NullLogger.Instance, maxInFlight: 2);
        var first = merger.EnqueueAsync(new PutCommand("a", 1));
        while (merger.Transactions < 1)
        {
            await Task.Yield();
        }
        var second = merger.EnqueueAsync(new PutCommand("b", 2));
        while (merger.Transactions < 2)
        {
            await Task.Yield();
        }

        // The first of them arrives alone, and well before the others.
        var later = new List<Task> { merger.EnqueueAsync(new PutCommand("c0", 0)) };
        await Task.Delay(100);
        later.AddRange(Enumerable.Range(1, 19).Select(i => merger.EnqueueAsync(new PutCommand($"c{i}", i))));
        await Task.Delay(100);
        Assert.Equal(2, merger.Transactions);
        Assert.True(store.Pending.TryDequeue(out var durable));
        durable.SetResult();

        // Make every commit durable as it comes, so that the merger ends whatever it did.
        var all = Task.WhenAll(later.Append(first).Append(second));
        var deadline = DateTime.UtcNow.AddSeconds(10);
        while (!all.IsCompleted && DateTime.UtcNow < deadline)
        {
            while (store.Pending.TryDequeue(out var next))
            {
                next.SetResult();
            }
            await Task.Delay(5);
        }

        await all.WaitAsync(TimeSpan.FromSeconds(1));
        Assert.Equal([1, 1, 20], sizes.ToArray());
    }

    [Fact]
    public async Task AFailedJournalWriteFailsItsRequestsAndThoseBuiltOnIt()
    {
        var store = new PipelinedStore();
        var commits = 0;
        await using var merger = new TransactionMerger<FakeTransaction>(store.Begin, t => store.Commit(t, Interlocked.Increment(ref commits) > 1), NullLogger.Instance);
        var firstExecuted = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        var first = merger.EnqueueAsync(new SignalCommand(firstExecuted));
        await firstExecuted.Task.WaitAsync(TimeSpan.FromSeconds(10));
        var second = merger.EnqueueAsync(new PutCommand("b", 2));
        while (merger.Transactions < 2)
        {
            await Task.Yield();
        }

        Assert.True(store.Pending.TryDequeue(out var durable));
        durable.SetException(new IOException("fdatasync failed (simulated)"));
        await Assert.ThrowsAsync<IOException>(() => first.WaitAsync(TimeSpan.FromSeconds(10)));
        await Assert.ThrowsAsync<IOException>(() => second.WaitAsync(TimeSpan.FromSeconds(10)));
    }
    private sealed class BigCommand(string key) : IMergedCommand<FakeTransaction>
    {
        public long EstimatedBytes => 40L << 20;

        public void Execute(FakeTransaction transaction) => transaction.Writes[key] = 1;
    }

    [Fact]
    public async Task TheByteBudgetKeepsHugeCommandsOutOfOneTransaction()
    {
        var store = new FakeStore();
        store.CommitOpen.Reset();
        await using var merger = CreateMerger(store);
        var all = new[] { "a", "b", "c" }.Select(k => merger.EnqueueAsync(new BigCommand(k))).ToArray();
        store.CommitOpen.Set();
        await Task.WhenAll(all).WaitAsync(TimeSpan.FromSeconds(10));
        // 3 x 40 MiB against a 64 MiB budget: never all three in one commit, whatever the timing.
        Assert.Equal(2, store.Commits);
        Assert.Equal(3, store.Committed.Count);
    }
}
