using System.Collections.Concurrent;
using System.Text.Json;
using Jackdaw.Server.Backup;
using Jackdaw.Server.Databases;
using Jackdaw.Server.Errors;
using Jackdaw.Server.Tests.Databases;
using Jackdaw.Server.Tests.Infrastructure;
using Microsoft.Extensions.Logging.Abstractions;
using Microsoft.Extensions.Time.Testing;

namespace Jackdaw.Server.Tests.Backup;

/// <summary>
/// The periodic backups of a clustered database's copies on two nodes, driven by a fake clock, a fake
/// backup and a fake cluster record: only the responsible node's timer runs the task, its status goes
/// to the record, and the node that takes the task over schedules from that status and starts a chain
/// of its own with a snapshot.
/// </summary>
public sealed class PeriodicBackupClusterSchedulerTests : IAsyncDisposable
{
    private static readonly DateTimeOffset Start = new(2025, 1, 1, 0, 0, 0, TimeSpan.Zero);

    private readonly TempFolder _data = new("jackdaw-periodic-cluster-db");
    private readonly TempFolder _backups = new("jackdaw-periodic-cluster-backups");
    private readonly FakeTimeProvider _time = new(Start);
    private readonly Record _record = new();
    private readonly ConcurrentQueue<(DocumentDatabase Database, BackupRequest Request)> _runs = new();
    private readonly List<DocumentDatabase> _open = [];

    private DocumentDatabase Open(string tag)
    {
        var options = new PeriodicBackupOptions { Time = _time, Run = RunAsync, StopRetainingJournals = _ => { } };
        var database = DocumentDatabase.Open("Test", Path.Combine(_data.Path, tag), NullLoggerFactory.Instance,
            DatabaseTestKit.NoTimer() with { Components = [PeriodicBackups.Component(options, NullLoggerFactory.Instance, new FakeCluster(tag, _record))] });
        _open.Add(database);
        return database;
    }

    /// <summary>When set, a run creates its folder, says so, and then waits until it is cancelled.</summary>
    private TaskCompletionSource<string>? _hung;

    private async Task<BackupResult> RunAsync(DocumentDatabase database, BackupRequest request, BackupRun progress, CancellationToken cancel)
    {
        Directory.CreateDirectory(request.Folder);
        if (_hung is { } hung)
        {
            hung.TrySetResult(request.Folder);
            await Task.Delay(Timeout.Infinite, cancel);
        }
        var path = Path.Combine(request.Folder, $"{Guid.NewGuid():N}.jackdaw-{(request.Full ? "snapshot" : "incremental")}");
        await File.WriteAllTextAsync(path, "backup", cancel);
        _runs.Enqueue((database, request));
        return new BackupResult { FileName = Path.GetFileName(path), FilePath = path, Kind = request.Full ? BackupKind.Full : BackupKind.Incremental, SizeInBytes = 6, TransactionId = 10, Etag = 1 };
    }

    private List<BackupRequest> RunsOf(DocumentDatabase database) => [.. _runs.Where(r => ReferenceEquals(r.Database, database)).Select(r => r.Request)];

    private async Task WaitForAsync(DocumentDatabase database, int runs)
    {
        await Poll.UntilAsync(() => Task.FromResult(RunsOf(database).Count >= runs && PeriodicBackups.Of(database).RunningOf(1) is null), TimeSpan.FromSeconds(30), $"{runs} run(s)");
        // The status is proposed after the run returns: wait for the record to have it.
        await Poll.UntilAsync(() => Task.FromResult(_record.Statuses >= _runs.Count), TimeSpan.FromSeconds(30), "the status in the record");
    }

    [Fact]
    public async Task OnlyTheResponsibleNodeRunsTheTaskAndTheNodeThatTakesItOverStartsWithASnapshot()
    {
        var configuration = JsonSerializer.Serialize(new
        {
            TaskId = 1,
            Name = "quarterly",
            BackupType = "Snapshot",
            FullBackupFrequency = "0 2 * * *",
            IncrementalBackupFrequency = "*/15 * * * *",
            LocalSettings = new { FolderPath = _backups.Path },
            CreatedAt = Start.UtcDateTime,
        });
        _record.Task = new ClusteredBackupTask(1, configuration, "A", "http://a");
        var (a, b) = (Open("A"), Open("B"));
        Assert.Equal(("A", "http://a"), PeriodicBackups.Of(b).ResponsibleOf(1));

        // The first occurrence: a snapshot on A, in a chain named after A; nothing on B.
        _time.Advance(TimeSpan.FromMinutes(15));
        await WaitForAsync(a, 1);
        var first = Assert.Single(RunsOf(a));
        Assert.True(first.Full);
        Assert.EndsWith(".jackdaw-Test-A-snapshot", first.Folder, StringComparison.Ordinal);
        Assert.Equal("A", _record.Task.Status!.NodeTag);
        await PeriodicBackups.Of(b).RefreshFromClusterAsync();
        Assert.True(PeriodicBackups.Of(b).TryGet(1, out _, out var seenOnB));
        Assert.Equal(_record.Task.Status, seenOnB);

        _time.Advance(TimeSpan.FromMinutes(15));
        await WaitForAsync(a, 2);
        Assert.False(RunsOf(a)[1].Full);
        Assert.Equal(first.Folder, RunsOf(a)[1].Folder);
        Assert.Empty(RunsOf(b));

        // The task moves to B: A stops, B's next run (an incremental by the schedule) is a snapshot of its own chain.
        _record.Task = _record.Task with { ResponsibleNode = "B", ResponsibleUrl = "http://b" };
        await PeriodicBackups.Of(a).RefreshFromClusterAsync();
        await PeriodicBackups.Of(b).RefreshFromClusterAsync();
        Assert.Equal(new DateTime(2025, 1, 1, 0, 45, 0, DateTimeKind.Utc), PeriodicBackups.Of(b).NextOf(1)!.Value.DateTime);
        _time.Advance(TimeSpan.FromMinutes(15));
        await WaitForAsync(b, 1);
        var taken = Assert.Single(RunsOf(b));
        Assert.True(taken.Full);
        Assert.EndsWith(".jackdaw-Test-B-snapshot", taken.Folder, StringComparison.Ordinal);
        Assert.Equal(("B", true), (_record.Task.Status!.NodeTag, _record.Task.Status.IsFull));
        Assert.Equal(2, RunsOf(a).Count);

        // Deleted from the record: no node runs it any more.
        _record.Task = null!;
        await PeriodicBackups.Of(b).RefreshFromClusterAsync();
        Assert.Empty(PeriodicBackups.Of(b).Configurations);
    }

    [Fact]
    public async Task ANodeThatLosesTheTaskMidRunCancelsItsRunAndProposesNoStatus()
    {
        var configuration = JsonSerializer.Serialize(new
        {
            TaskId = 1,
            Name = "nightly",
            BackupType = "Snapshot",
            FullBackupFrequency = "*/15 * * * *",
            LocalSettings = new { FolderPath = _backups.Path },
            CreatedAt = Start.UtcDateTime,
        });
        _record.Task = new ClusteredBackupTask(1, configuration, "A", "http://a");
        var (a, b) = (Open("A"), Open("B"));
        _hung = new TaskCompletionSource<string>(TaskCreationOptions.RunContinuationsAsynchronously);
        _time.Advance(TimeSpan.FromMinutes(15));
        var folder = await _hung.Task.WaitAsync(TimeSpan.FromSeconds(30));
        var operationId = PeriodicBackups.Of(a).RunningOf(1)!.Value.OperationId;

        // The leader gives the task to B (A did not answer): A learns it and stops at once.
        _hung = null;
        _record.Task = _record.Task with { ResponsibleNode = "B", ResponsibleUrl = "http://b" };
        await PeriodicBackups.Of(a).RefreshFromClusterAsync();
        await Poll.UntilAsync(() => Task.FromResult(PeriodicBackups.Of(a).RunningOf(1) is null), TimeSpan.FromSeconds(30), "A's run to stop");
        Assert.False(Directory.Exists(folder));
        Assert.True(a.Operations.TryGet(operationId, out var operation));
        var failure = operation.State.Failure;
        Assert.NotNull(failure);
        Assert.Contains("now runs on node B", failure.Message, StringComparison.Ordinal);
        Assert.Equal(0, _record.Statuses);
        Assert.True(PeriodicBackups.Of(a).TryGet(1, out _, out var statusOnA));
        Assert.Null(statusOnA.Error);
        // A run asked of A now (a request passed on before it learnt of the move) is B's to run.
        Assert.Throws<DatabaseUnavailableException>(() => PeriodicBackups.Of(a).StartNow(1, isFull: true));

        // B runs the task from the record's status, alone.
        await PeriodicBackups.Of(b).RefreshFromClusterAsync();
        _time.Advance(TimeSpan.FromMinutes(15));
        await WaitForAsync(b, 1);
        Assert.Equal("B", _record.Task.Status!.NodeTag);
        Assert.Empty(RunsOf(a));
    }

    public async ValueTask DisposeAsync()
    {
        foreach (var database in _open)
        {
            await database.DisposeAsync();
        }
        _data.Dispose();
        _backups.Dispose();
    }

    /// <summary>The database's record as the fake cluster keeps it: one task (or none).</summary>
    private sealed class Record
    {
        private ClusteredBackupTask? _task;
        private int _statuses;

        /// <summary>How many statuses were recorded.</summary>
        public int Statuses => Volatile.Read(ref _statuses);

        public void Recorded() => Interlocked.Increment(ref _statuses);

        public ClusteredBackupTask Task
        {
            get => Volatile.Read(ref _task)!;
            set => Volatile.Write(ref _task, value);
        }
    }

    private sealed class FakeCluster(string tag, Record record) : IPeriodicBackupCluster
    {
        public string NodeTag => tag;

        public bool Keeps(string database) => true;

        public bool IsLoading(string database) => false;

        public IReadOnlyList<ClusteredBackupTask> Current(string database) => record.Task is { } task ? [task] : [];

        public Task ProposeStatusAsync(string database, PeriodicBackupStatus status, CancellationToken token)
        {
            // As the state's Apply: only the responsible node's status is taken.
            if (record.Task is not { } task || task.ResponsibleNode != status.NodeTag)
            {
                throw new ClusterException($"Node {status.NodeTag} no longer runs the task.");
            }
            record.Task = task with { Status = status };
            record.Recorded();
            return System.Threading.Tasks.Task.CompletedTask;
        }
    }
}
