using System.Collections.Concurrent;
using System.Text.Json;
using Jackdaw.Server.Backup;
using Jackdaw.Server.Databases;
using Jackdaw.Server.Tests.Databases;
using Jackdaw.Server.Tests.Infrastructure;
using Microsoft.Extensions.Logging.Abstractions;
using Microsoft.Extensions.Time.Testing;

namespace Jackdaw.Server.Tests.Backup;

/// <summary>
/// The periodic backup scheduler of one database, driven by a fake clock and a fake backup (which
/// writes a small file where the real one would): when runs happen, catch-up, no overlap,
/// retention, failures and the status across a restart. The real backup is the core's
/// (tested in PeriodicBackupRoutesTests end to end).
/// </summary>
public sealed class PeriodicBackupSchedulerTests : IAsyncDisposable
{
    private static readonly DateTimeOffset Start = new(2025, 1, 1, 0, 0, 0, TimeSpan.Zero);

    private readonly TempFolder _data = new("jackdaw-periodic-db");
    private readonly TempFolder _backups = new("jackdaw-periodic-backups");
    private readonly FakeTimeProvider _time = new(Start);
    private readonly FakeBackup _backup = new();
    private readonly List<DocumentDatabase> _open = [];
    private int _stoppedRetaining;

    private PeriodicBackupOptions Options => new()
    {
        Time = _time,
        Run = _backup.RunAsync,
        StopRetainingJournals = _ => Interlocked.Increment(ref _stoppedRetaining),
        CatchUpDelay = TimeSpan.FromSeconds(1),
    };

    private DocumentDatabase Open()
    {
        var options = DatabaseTestKit.NoTimer() with { Components = [PeriodicBackups.Component(Options, NullLoggerFactory.Instance)] };
        var database = DocumentDatabase.Open("Test", _data.Path, NullLoggerFactory.Instance, options);
        _open.Add(database);
        return database;
    }

    private async Task CloseAsync(DocumentDatabase database)
    {
        await database.DisposeAsync();
        _open.Remove(database);
    }

    private string Configuration(string? full, string? incremental = null, string? keep = null, long taskId = 0) => JsonSerializer.Serialize(new Dictionary<string, object?>
    {
        ["TaskId"] = taskId,
        ["Name"] = "nightly",
        ["BackupType"] = "Snapshot",
        ["FullBackupFrequency"] = full,
        ["IncrementalBackupFrequency"] = incremental,
        ["LocalSettings"] = new Dictionary<string, object?> { ["FolderPath"] = _backups.Path },
        ["RetentionPolicy"] = new Dictionary<string, object?> { ["Disabled"] = keep is null, ["MinimumBackupAgeToKeep"] = keep },
    });

    private static async Task<PeriodicBackupConfiguration> CreateAsync(DocumentDatabase database, string json)
    {
        using var document = JsonDocument.Parse(json);
        return await PeriodicBackups.Of(database).UpdateAsync(document.RootElement);
    }

    private static PeriodicBackupStatus StatusOf(DocumentDatabase database, long taskId)
    {
        Assert.True(PeriodicBackups.Of(database).TryGet(taskId, out _, out var status));
        return status;
    }

    /// <summary>Waits until the task has no run in progress and <paramref name="runs"/> runs ended.</summary>
    private async Task WaitForRunsAsync(DocumentDatabase database, long taskId, int runs)
    {
        await Poll.UntilAsync(() => Task.FromResult(_backup.Ended >= runs && PeriodicBackups.Of(database).RunningOf(taskId) is null), TimeSpan.FromSeconds(30), $"{runs} backup run(s)");
        // The status is stored after the run returns: wait for it to say so.
        await Poll.UntilAsync(() => Task.FromResult(StatusOf(database, taskId).LastOperationId is not null), TimeSpan.FromSeconds(30), "the status of the run");
    }

    [Fact]
    public async Task ATaskRunsAtItsNextOccurrenceAndNotBefore()
    {
        var database = Open();
        var task = await CreateAsync(database, Configuration("0 2 * * *"));
        Assert.Equal(new NextBackup(new DateTime(2025, 1, 1, 2, 0, 0, DateTimeKind.Utc), true), PeriodicBackups.Of(database).NextOf(task.TaskId));

        _time.Advance(TimeSpan.FromMinutes(119));
        Assert.Equal(0, _backup.Started);
        _time.Advance(TimeSpan.FromMinutes(1));
        await WaitForRunsAsync(database, task.TaskId, 1);

        var request = Assert.Single(_backup.Requests);
        Assert.True(request.Full);
        Assert.True(request.RetainJournals);
        Assert.Equal(Path.Combine(_backups.Path, "2025-01-01-02-00-00.jackdaw-Test-snapshot"), request.Folder);
        var status = StatusOf(database, task.TaskId);
        Assert.Equal(new DateTime(2025, 1, 1, 2, 0, 0, DateTimeKind.Utc), status.LastFullBackup);
        Assert.Equal(request.Folder, status.FolderName);
        Assert.Null(status.Error);
        Assert.Equal(new DateTime(2025, 1, 2, 2, 0, 0, DateTimeKind.Utc), PeriodicBackups.Of(database).NextOf(task.TaskId)!.Value.DateTime);
    }

    [Fact]
    public async Task IncrementalsGoIntoTheChainOfTheLastSnapshot()
    {
        var database = Open();
        var task = await CreateAsync(database, Configuration("0 2 * * *", "*/15 * * * *"));
        // No chain yet: the first run, at the first occurrence of either, is a snapshot.
        Assert.Equal(new NextBackup(Start.UtcDateTime.AddMinutes(15), true), PeriodicBackups.Of(database).NextOf(task.TaskId));
        _time.Advance(TimeSpan.FromMinutes(15));
        await WaitForRunsAsync(database, task.TaskId, 1);
        Assert.Equal(new NextBackup(Start.UtcDateTime.AddMinutes(30), false), PeriodicBackups.Of(database).NextOf(task.TaskId));
        _time.Advance(TimeSpan.FromMinutes(15));
        await WaitForRunsAsync(database, task.TaskId, 2);

        Assert.Equal(2, _backup.Requests.Count);
        var (snapshot, incremental) = (_backup.Requests.First(), _backup.Requests.Last());
        Assert.True(snapshot.Full);
        Assert.False(incremental.Full);
        Assert.Equal(snapshot.Folder, incremental.Folder);
        var status = StatusOf(database, task.TaskId);
        Assert.Equal(Start.UtcDateTime.AddMinutes(30), status.LastIncrementalBackup);
        Assert.Equal(Start.UtcDateTime.AddMinutes(15), status.LastFullBackup);
    }

    [Fact]
    public async Task AMissedRunIsCaughtUpOnceWhenTheDatabaseOpensAndTheStatusSurvives()
    {
        var database = Open();
        var task = await CreateAsync(database, Configuration("0 2 * * *"));
        _time.Advance(TimeSpan.FromHours(2));
        await WaitForRunsAsync(database, task.TaskId, 1);
        var before = StatusOf(database, task.TaskId);
        await CloseAsync(database);

        // Closed over three nightly runs.
        _time.Advance(TimeSpan.FromDays(3));
        database = Open();
        var reopened = StatusOf(database, task.TaskId);
        Assert.Equal(before.LastFullBackup, reopened.LastFullBackup);
        Assert.Equal(before.FolderName, reopened.FolderName);
        Assert.Equal(before.TransactionId, reopened.TransactionId);
        Assert.True(PeriodicBackups.Of(database).TryGet(task.TaskId, out var configuration, out _));
        Assert.Equal("nightly", configuration.Name);

        _time.Advance(TimeSpan.FromSeconds(1));
        await WaitForRunsAsync(database, task.TaskId, 2);
        Assert.Equal(2, _backup.Started);
        Assert.Equal(Start.UtcDateTime.AddDays(3).AddHours(2).AddSeconds(1), StatusOf(database, task.TaskId).LastFullBackup);
        // Once: the next run is tomorrow's.
        Assert.Equal(new DateTime(2025, 1, 5, 2, 0, 0, DateTimeKind.Utc), PeriodicBackups.Of(database).NextOf(task.TaskId)!.Value.DateTime);
    }

    [Fact]
    public async Task ATaskNeverRunsTwoBackupsAtOnce()
    {
        var database = Open();
        var task = await CreateAsync(database, Configuration("*/5 * * * *"));
        _backup.Hold();
        var first = PeriodicBackups.Of(database).StartNow(task.TaskId, true);
        await Poll.UntilAsync(() => Task.FromResult(_backup.Started == 1), TimeSpan.FromSeconds(30), "the first run");
        var second = PeriodicBackups.Of(database).StartNow(task.TaskId, false);
        Assert.Same(first, second);
        // Its occurrences come and go while it runs.
        _time.Advance(TimeSpan.FromMinutes(12));
        Assert.Equal(1, _backup.Started);
        Assert.Equal(OperationStatus.InProgress, first.Status);

        _backup.Release();
        // Its occurrences passed while it ran: one run catches them up as soon as it ends, one only.
        await WaitForRunsAsync(database, task.TaskId, 2);
        Assert.Equal(OperationStatus.Completed, first.Status);
        Assert.Equal(2, _backup.Started);
        Assert.Equal(Start.UtcDateTime.AddMinutes(15), PeriodicBackups.Of(database).NextOf(task.TaskId)!.Value.DateTime);
    }

    [Fact]
    public async Task RetentionDeletesExpiredChainsButNeverTheCurrentOne()
    {
        var database = Open();
        var task = await CreateAsync(database, Configuration("0 2 * * *", "0 * * * *", keep: "7.00:00:00"));
        // Every file is written long before the clock's time: the current chain is expired too.
        _backup.FileTime = Start.UtcDateTime.AddDays(-30);
        _time.Advance(TimeSpan.FromHours(1));
        await WaitForRunsAsync(database, task.TaskId, 1);
        var current = StatusOf(database, task.TaskId).FolderName!;
        // An expired chain of this database, one of another database, and a folder that is no chain.
        var expired = Chain("2024-01-01-02-00-00.jackdaw-Test-snapshot");
        var otherDatabase = Chain("2024-01-01-02-00-00.jackdaw-Other-snapshot");
        var notAChain = Chain("keep-me.jackdaw-Test-snapshot");
        PeriodicBackups.Of(database).StartNow(task.TaskId, false);
        await WaitForRunsAsync(database, task.TaskId, 2);

        Assert.False(_backup.Requests.Last().Full);
        Assert.Equal(current, _backup.Requests.Last().Folder);
        Assert.True(Directory.Exists(current));
        Assert.False(Directory.Exists(expired));
        Assert.True(Directory.Exists(otherDatabase));
        Assert.True(Directory.Exists(notAChain));
    }

    [Fact]
    public async Task AFailedRunRecordsItsErrorAndTheNextOccurrenceTriesAgain()
    {
        var database = Open();
        var task = await CreateAsync(database, Configuration("0 * * * *"));
        _backup.FailNext(new IOException("No space left on device"));
        _time.Advance(TimeSpan.FromHours(1));
        await WaitForRunsAsync(database, task.TaskId, 1);

        var failed = StatusOf(database, task.TaskId);
        Assert.Contains("No space left on device", failed.Error);
        Assert.Contains(_backups.Path, failed.Error);
        Assert.Null(failed.LastFullBackup);
        Assert.Equal(Start.UtcDateTime.AddHours(1), failed.ErrorAt);
        // The failed chain folder is not left behind, and the database still takes writes.
        Assert.Empty(Directory.EnumerateDirectories(_backups.Path));
        await DatabaseTestKit.PutAsync(database, "orders/1", "Orders", 1);
        // Not in a loop: the next try is at the next occurrence.
        Assert.Equal(Start.UtcDateTime.AddHours(2), PeriodicBackups.Of(database).NextOf(task.TaskId)!.Value.DateTime);

        _time.Advance(TimeSpan.FromHours(1));
        await Poll.UntilAsync(() => Task.FromResult(StatusOf(database, task.TaskId).LastFullBackup is not null), TimeSpan.FromSeconds(30), "the second run");
        Assert.Null(StatusOf(database, task.TaskId).Error);
        Assert.Equal(2, _backup.Started);
    }

    [Fact]
    public async Task TheOtherTasksChainsKeepTheirJournalsAndTheLastTaskGoneStopsRetention()
    {
        var database = Open();
        var first = await CreateAsync(database, Configuration("0 * * * *"));
        var second = await CreateAsync(database, Configuration("0 0 1 1 *"));
        Assert.NotEqual(first.TaskId, second.TaskId);
        _time.Advance(TimeSpan.FromMinutes(60));
        await WaitForRunsAsync(database, first.TaskId, 1);
        var firstTransaction = StatusOf(database, first.TaskId).TransactionId;
        PeriodicBackups.Of(database).StartNow(second.TaskId, true);
        await WaitForRunsAsync(database, second.TaskId, 2);
        Assert.Equal(firstTransaction, _backup.Requests.Last().OtherChainsNeedAfter);

        await PeriodicBackups.Of(database).DeleteAsync(first.TaskId);
        Assert.Equal(0, _stoppedRetaining);
        await PeriodicBackups.Of(database).DeleteAsync(second.TaskId);
        Assert.Equal(1, _stoppedRetaining);
        Assert.Empty(PeriodicBackups.Of(database).Configurations);
        await CloseAsync(database);
        database = Open();
        Assert.Empty(PeriodicBackups.Of(database).Configurations);
    }

    [Fact]
    public void AChainOfAnotherDatabaseOrFolderIsNotContinued()
    {
        using var document = JsonDocument.Parse(Configuration("0 2 * * *", "0 * * * *"));
        var configuration = PeriodicBackupConfiguration.Parse(document.RootElement, 1, Start.UtcDateTime);
        var ours = new PeriodicBackupStatus { TaskId = 1, LastFullBackupInternal = Start.UtcDateTime, FolderName = Path.Combine(_backups.Path, "2025-01-01-00-00-00.jackdaw-Test-snapshot") };
        Assert.Equal(new NextBackup(Start.UtcDateTime.AddHours(1), false), PeriodicBackupSchedule.Next(configuration, ours, "Test", Start.UtcDateTime));
        // A status restored from database Orders names Orders' chain: this database starts its own.
        var restored = ours with { FolderName = Path.Combine(_backups.Path, "2025-01-01-00-00-00.jackdaw-Orders-snapshot") };
        Assert.Equal(new NextBackup(Start.UtcDateTime.AddHours(1), true), PeriodicBackupSchedule.Next(configuration, restored, "Test", Start.UtcDateTime));
        var elsewhere = ours with { FolderName = "/elsewhere/2025-01-01-00-00-00.jackdaw-Test-snapshot" };
        Assert.Null(PeriodicBackupSchedule.CurrentChain(configuration, elsewhere, "Test"));
    }

    [Theory]
    [InlineData("""{"FullBackupFrequency":"0 2 * *","LocalSettings":{"FolderPath":"/tmp/b"}}""", "FullBackupFrequency")]
    [InlineData("""{"IncrementalBackupFrequency":"every hour","LocalSettings":{"FolderPath":"/tmp/b"}}""", "IncrementalBackupFrequency")]
    [InlineData("""{"FullBackupFrequency":"0 2 * * *","LocalSettings":{"FolderPath":"backups"}}""", "LocalSettings.FolderPath")]
    [InlineData("""{"FullBackupFrequency":"0 2 * * *","LocalSettings":{"FolderPath":""}}""", "LocalSettings.FolderPath")]
    [InlineData("""{"FullBackupFrequency":"0 2 * * *"}""", "LocalSettings.FolderPath")]
    [InlineData("""{"LocalSettings":{"FolderPath":"/tmp/b"}}""", "FullBackupFrequency")]
    [InlineData("""{"BackupType":"Tape","FullBackupFrequency":"0 2 * * *","LocalSettings":{"FolderPath":"/tmp/b"}}""", "BackupType")]
    [InlineData("""{"FullBackupFrequency":"0 2 * * *","LocalSettings":{"FolderPath":"/tmp/b"},"RetentionPolicy":{"Disabled":false,"MinimumBackupAgeToKeep":"soon"}}""", "RetentionPolicy.MinimumBackupAgeToKeep")]
    [InlineData("""{"FullBackupFrequency":"0 2 * * *","LocalSettings":{"FolderPath":"/tmp/b"},"S3Settings":{"Disabled":false,"BucketName":"b"}}""", "S3Settings")]
    public void ABadConfigurationIsRefusedNamingTheField(string json, string field)
    {
        using var document = JsonDocument.Parse(json);
        var error = Assert.Throws<Errors.BadRequestException>(() => PeriodicBackupConfiguration.Parse(document.RootElement, 1, Start.UtcDateTime));
        Assert.Contains(field, error.Message, StringComparison.Ordinal);
    }

    private string Chain(string name)
    {
        var folder = Path.Combine(_backups.Path, name);
        Directory.CreateDirectory(folder);
        var file = Path.Combine(folder, "2024-01-01-02-00-00-000.jackdaw-snapshot");
        File.WriteAllText(file, "old");
        File.SetLastWriteTimeUtc(file, new DateTime(2024, 1, 1, 2, 0, 0, DateTimeKind.Utc));
        return folder;
    }

    public async ValueTask DisposeAsync()
    {
        _backup.Release();
        foreach (var database in _open.ToList())
        {
            await database.DisposeAsync();
        }
        _data.Dispose();
        _backups.Dispose();
    }

    /// <summary>Writes a small file into the request's folder and answers as the core would; can be held or made to fail.</summary>
    private sealed class FakeBackup
    {
        private readonly ConcurrentQueue<BackupRequest> _requests = new();
        private TaskCompletionSource _gate = CompletedGate();
        private Exception? _failNext;
        private int _started;
        private int _ended;
        private long _transaction;

        public IReadOnlyCollection<BackupRequest> Requests => _requests;

        /// <summary>The write time given to the files it writes; null: now.</summary>
        public DateTime? FileTime { get; set; }

        public int Started => Volatile.Read(ref _started);

        public int Ended => Volatile.Read(ref _ended);

        public void Hold() => Volatile.Write(ref _gate, new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously));

        public void Release() => Volatile.Read(ref _gate).TrySetResult();

        public void FailNext(Exception e) => _failNext = e;

        public async Task<BackupResult> RunAsync(DocumentDatabase database, BackupRequest request, BackupRun progress, CancellationToken cancel)
        {
            _requests.Enqueue(request);
            Interlocked.Increment(ref _started);
            try
            {
                await Volatile.Read(ref _gate).Task.WaitAsync(cancel);
                if (Interlocked.Exchange(ref _failNext, null) is { } failure)
                {
                    throw failure;
                }
                Directory.CreateDirectory(request.Folder);
                var kind = request.Full ? BackupKind.Full : BackupKind.Incremental;
                var name = $"{Guid.NewGuid():N}.jackdaw-{(request.Full ? "snapshot" : "incremental")}";
                var path = Path.Combine(request.Folder, name);
                await File.WriteAllTextAsync(path, "backup", cancel);
                if (FileTime is { } time)
                {
                    File.SetLastWriteTimeUtc(path, time);
                }
                return new BackupResult { FileName = name, FilePath = path, Kind = kind, SizeInBytes = 6, TransactionId = Interlocked.Increment(ref _transaction) * 10, Etag = 1 };
            }
            finally
            {
                Interlocked.Increment(ref _ended);
            }
        }

        private static TaskCompletionSource CompletedGate()
        {
            var gate = new TaskCompletionSource();
            gate.SetResult();
            return gate;
        }
    }
}
