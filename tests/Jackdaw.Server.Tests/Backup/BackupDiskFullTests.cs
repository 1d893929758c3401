using System.Net;
using System.Text.Json;
using Jackdaw.Server.Backup;
using Jackdaw.Server.Databases;
using Jackdaw.Server.Errors;
using Jackdaw.Server.Tests.Infrastructure;
using Microsoft.Extensions.Time.Testing;
using static Jackdaw.Server.Tests.Backup.BackupSafetyKit;

namespace Jackdaw.Server.Tests.Backup;

/// <summary>
/// A disk that fills up during a backup (the file's stream throws ENOSPC after N bytes, or at the
/// sync), and a folder that cannot be made: the backup fails with a <see cref="BackupException"/>
/// naming the path, leaves nothing that looks like a backup, the database serves reads and writes
/// all along, and the next backup succeeds; over HTTP the operation ends Faulted with the message,
/// and a periodic task records it in its status and tries again at its next run.
/// </summary>
public sealed class BackupDiskFullTests
{
    /// <summary>Writers that put new documents and update earlier ones until stopped; each batch acknowledged before the model takes it.</summary>
    private static Task[] StartWriters(HttpClient client, BackupModel model, int count, CancellationToken stop, string round) =>
        Enumerable.Range(0, count).Select(w => Task.Run(async () =>
        {
            var next = 0;
            while (!stop.IsCancellationRequested)
            {
                var changes = Enumerable.Range(0, 8).Select(i => ($"items/{round}-w{w}-{next++}", (int?)(i % 10))).ToList();
                changes.Add(($"items/seed-{(next * 13) % 1500}", next % 10));
                await model.WriteAsync(client, Source, changes);
            }
        })).ToArray();

    [Fact]
    public async Task ADiskThatFillsUpFailsTheBackupNamingTheFileLeavesNothingAndTheNextBackupSucceeds()
    {
        var model = new BackupModel();
        await using var server = await StartWithSourceAsync(model, seed: 1500);
        using var folder = new TempFolder("jackdaw-disk-full");
        var first = await BackupAsync(server, folder.Path, full: true);
        var size = first.SizeInBytes;

        // Full at the header, inside the index files, inside the storage, inside the manifest or the
        // tail, and a disk whose error comes only with the sync; snapshots and incrementals.
        var cases = new (long Limit, bool FailFlush, bool FailTail, bool Full)[]
        {
            (10, false, false, true),
            (2_000, false, false, false),
            (size / 2, false, false, true),
            (size / 2, false, false, false),
            (long.MaxValue, false, true, true),
            (long.MaxValue, true, false, false),
            (long.MaxValue, true, false, true),
        };
        foreach (var (limit, failFlush, failTail, full) in cases)
        {
            using var stop = new CancellationTokenSource();
            var writers = StartWriters(server.Client, model, 2, stop.Token, $"full{limit}{failFlush}{failTail}{full}");
            var before = model.Puts;
            FullDiskStream? stream = null;
            var error = await Assert.ThrowsAsync<BackupException>(() => BackupAsync(server, folder.Path, full, createFile: path => stream = new FullDiskStream(path, limit, failFlush, failTail)));
            Assert.True(stream is { Failures: > 0 }, $"the disk never filled up ({limit}, {failFlush}): {error.Message}");
            Assert.Contains(folder.Path, error.Message, StringComparison.Ordinal);
            Assert.Contains("No space left on device", error.Message, StringComparison.Ordinal);
            // Nothing that looks like a backup, nor its temporary file.
            Assert.Equal([first.FileName], BackupChain.Files(folder.Path).Select(Path.GetFileName));
            Assert.Empty(Directory.GetFiles(folder.Path, "*" + BackupChain.InProgressExtension));

            // The writers went on meanwhile; reads too.
            await Poll.UntilAsync(async () =>
            {
                if (writers.FirstOrDefault(w => w.IsFaulted) is { } failed)
                {
                    await failed;
                }
                return model.Puts > before + 50;
            }, TimeSpan.FromSeconds(60), "writes after the failed backup");
            stop.Cancel();
            await Task.WhenAll(writers);
            using var read = await server.Client.GetAsync($"/databases/{Source}/docs?id=items/seed-7");
            Assert.Equal(HttpStatusCode.OK, read.StatusCode);
        }

        // The next backup succeeds (an incremental, or a snapshot when the failed runs let the
        // journals it needed go: its note says so) and the chain restores to its etag.
        var next = await BackupAsync(server, folder.Path, full: false);
        Assert.True(next.Kind == BackupKind.Incremental || next.Note is not null, $"{next.Kind} without a note");
        var restored = await RestoreAsync(server, folder.Path, "AfterDiskFull");
        Assert.Equal(next.FileName, restored.Files[^1]);
        model.AssertRestored(next.Etag, DatabaseState.Read(Database(server, Source)), DatabaseState.Read(Database(server, "AfterDiskFull")));
    }

    [Fact]
    public async Task AFolderThatCannotBeMadeFailsTheBackupNamingItInProcessAndOverHttp()
    {
        var model = new BackupModel();
        await using var server = await StartWithSourceAsync(model, seed: 200);
        using var temp = new TempFolder("jackdaw-unwritable");
        // A path under a regular file cannot be made, even by root (chmod would not stop root).
        var blocker = Path.Combine(temp.Path, "a-file");
        File.WriteAllText(blocker, "not a folder");
        var folder = Path.Combine(blocker, "backups");

        var error = await Assert.ThrowsAsync<BackupException>(() => BackupAsync(server, folder, full: true));
        Assert.Contains(folder, error.Message, StringComparison.Ordinal);

        using var response = await server.Client.PostAsync($"/databases/{Source}/admin/backup", Api.Json(JsonSerializer.Serialize(new { BackupType = "Snapshot", LocalSettings = new { FolderPath = folder } })));
        var body = await Api.JsonAsync(response);
        Assert.True(response.StatusCode == HttpStatusCode.OK, body.ToString());
        var message = AssertFaultedWithBackupException(await EndedAsync(server.Client, $"/databases/{Source}/operations/state?id={body.GetProperty("OperationId").GetInt64()}"));
        Assert.Contains(folder, message, StringComparison.Ordinal);

        // The database serves on.
        await model.WriteAsync(server.Client, Source, [("items/after-unwritable", 1)]);
        Assert.Equal("not a folder", File.ReadAllText(blocker));
    }

    [Fact]
    public async Task APeriodicTaskRecordsTheErrorServesOnAndTriesAgainAtItsNextRun()
    {
        var time = new FakeTimeProvider(new DateTimeOffset(2025, 3, 1, 0, 30, 0, TimeSpan.Zero));
        var diskFull = 0;
        var model = new BackupModel();
        await using var server = await StartWithSourceAsync(model, seed: 300, configure: options => options.Backup = options.Backup with
        {
            Time = time,
            // The real backup, onto a disk that is full while the test says so.
            Run = (database, request, run, cancel) => DatabaseBackups.RunAsync(database, Volatile.Read(ref diskFull) == 0 ? request : new BackupRequest
            {
                Folder = request.Folder,
                Full = request.Full,
                Minimal = request.Minimal,
                RetainJournals = request.RetainJournals,
                OtherChainsNeedAfter = request.OtherChainsNeedAfter,
                CreateFile = path => new FullDiskStream(path, 100),
            }, run, cancel),
        });
        using var temp = new TempFolder("jackdaw-periodic-unwritable");
        var blocker = Path.Combine(temp.Path, "a-file");
        File.WriteAllText(blocker, "not a folder");
        var configuration = JsonSerializer.Serialize(new Dictionary<string, object?>
        {
            ["TaskId"] = 0,
            ["Name"] = "hourly",
            ["BackupType"] = "Snapshot",
            ["FullBackupFrequency"] = "0 0 1 1 *",
            ["IncrementalBackupFrequency"] = "0 * * * *",
            ["LocalSettings"] = new Dictionary<string, object?> { ["FolderPath"] = Path.Combine(blocker, "backups") },
        });
        long taskId;
        using (var created = await server.Client.PostAsync($"/databases/{Source}/admin/periodic-backup", Api.Json(configuration)))
        {
            taskId = (await Api.JsonAsync(created)).GetProperty("TaskId").GetInt64();
        }
        var backups = PeriodicBackups.Of(Database(server, Source));

        async Task<PeriodicBackupStatus> RunAsync(string what)
        {
            var operations = backups.TryGet(taskId, out _, out var before) ? before.LastOperationId : null;
            time.Advance(TimeSpan.FromHours(1));
            PeriodicBackupStatus status = null!;
            await Poll.UntilAsync(() => Task.FromResult(backups.RunningOf(taskId) is null && backups.TryGet(taskId, out _, out status) && status.LastOperationId != operations), TimeSpan.FromSeconds(60), what);
            return status;
        }

        // The folder cannot be made: the error names it; the next run is the next occurrence, not a loop.
        var failed = await RunAsync("the run into a folder under a file");
        Assert.Contains(blocker, failed.Error);
        Assert.Null(failed.LastFullBackup);
        var next = backups.NextOf(taskId)!.Value;
        Assert.True(next.DateTime > backups.Now && next.DateTime <= backups.Now.AddHours(1), $"next run {next.DateTime:o}, now {backups.Now:o}");
        Assert.Equal(OperationStatus.Faulted, Database(server, Source).Operations.TryGet(failed.LastOperationId!.Value, out var operation) ? operation.Status : OperationStatus.InProgress);
        using (var status = await server.Client.GetAsync($"/periodic-backup/status?name={Source}&taskId={taskId}"))
        {
            var json = (await Api.JsonAsync(status)).GetProperty("Status");
            Assert.Contains(blocker, json.GetProperty("Error").GetProperty("Exception").GetString());
            Assert.Equal(JsonValueKind.Null, json.GetProperty("OnGoingBackup").ValueKind);
        }
        await model.WriteAsync(server.Client, Source, [("items/after-failed-run", 1)]);

        // The folder can be made now: the next run writes the snapshot and clears the error.
        File.Delete(blocker);
        var succeeded = await RunAsync("the run after the folder was freed");
        Assert.Null(succeeded.Error);
        Assert.NotNull(succeeded.LastFullBackup);
        var chain = succeeded.FolderName!;
        var snapshot = Assert.Single(BackupChain.Files(chain));

        // The disk fills up during an incremental: recorded, nothing left, the chain intact; the next one succeeds.
        Volatile.Write(ref diskFull, 1);
        await model.WriteAsync(server.Client, Source, [("items/before-full-disk", 2)]);
        var full = await RunAsync("the run onto a full disk");
        Assert.Contains("No space left on device", full.Error);
        Assert.Contains(chain, full.Error);
        Assert.Equal(chain, full.FolderName);
        Assert.Equal([snapshot], BackupChain.Files(chain));
        Assert.Empty(Directory.GetFiles(chain, "*" + BackupChain.InProgressExtension));
        await model.WriteAsync(server.Client, Source, [("items/after-full-disk", 3)]);

        Volatile.Write(ref diskFull, 0);
        var after = await RunAsync("the run after the disk was freed");
        Assert.Null(after.Error);
        Assert.Equal(2, BackupChain.Files(after.FolderName!).Count);
        await RestoreAsync(server, after.FolderName!, "PeriodicRestored");
        model.AssertRestored(after.LastEtag, DatabaseState.Read(Database(server, Source)), DatabaseState.Read(Database(server, "PeriodicRestored")));
    }
}
