using System.Buffers;
using System.Net;
using System.Text;
using System.Text.Json;
using System.Text.Json.Nodes;
using Jackdaw.Server.Backup;
using Jackdaw.Server.Databases;
using Jackdaw.Server.Errors;
using Jackdaw.Server.Indexing;
using Jackdaw.Server.Subscriptions;
using Jackdaw.Server.Tests.Infrastructure;
using Jackdaw.Storage.Blittable;

namespace Jackdaw.Server.Tests.Backup;

/// <summary>
/// Logical backups (BackupType "Backup"): a periodic task's chain of a full file and incremental
/// ones, with updates, deletes and forced tombstone clean-ups between them, restores to the
/// source's documents (and none it deleted); the task holds the tombstones its next incremental
/// needs and lets them go once written; a damaged byte is found and its file named.
/// </summary>
public sealed partial class LogicalBackupTests
{
    private const string IndexName = "Items/ByGroup";

    private static DocumentDatabase Database(InProcessServer server, string name) => server.Host.Server.Databases.GetDatabase(name);

    private static async Task<InProcessServer> StartAsync()
    {
        var server = await InProcessServer.StartAsync();
        using (var created = await server.Client.PutAsync("/admin/databases?name=Source", null))
        {
            Assert.Equal(HttpStatusCode.Created, created.StatusCode);
        }
        return server;
    }

    /// <summary>One bulk_docs batch: PUTs of (id, group), DELETEs where the group is null.</summary>
    private static async Task WriteAsync(HttpClient client, IEnumerable<(string Id, int? Group)> changes)
    {
        var commands = string.Join(',', changes.Select(c => c.Group is { } g
            ? $"{{\"Type\":\"PUT\",\"Id\":\"{c.Id}\",\"Document\":{{\"Group\":{g},\"Name\":\"item {c.Id} v{g}\",\"@metadata\":{{\"@collection\":\"Items\"}}}}}}"
            : $"{{\"Type\":\"DELETE\",\"Id\":\"{c.Id}\"}}"));
        using var response = await client.PostAsync("/databases/Source/bulk_docs", new StringContent("{\"Commands\":[" + commands + "]}", Encoding.UTF8, "application/json"));
        Assert.True(response.StatusCode == HttpStatusCode.OK, await response.Content.ReadAsStringAsync());
    }

    private static IEnumerable<(string, int?)> Put(int from, int count, int group) => Enumerable.Range(from, count).Select(i => ($"items/{i}", (int?)group));

    private static IEnumerable<(string, int?)> Delete(int from, int count) => Enumerable.Range(from, count).Select(i => ($"items/{i}", (int?)null));

    /// <summary>Every document by id: its body and metadata, but for what a server stamps (<c>@change-vector</c>, <c>@last-modified</c>).</summary>
    private static SortedDictionary<string, string> Documents(DocumentDatabase database)
    {
        var result = new SortedDictionary<string, string>(StringComparer.Ordinal);
        using var reader = database.BeginRead();
        var buffer = new ArrayBufferWriter<byte>();
        foreach (var document in reader.GetDocumentsFrom(null, 0))
        {
            buffer.ResetWrittenCount();
            BlittableJsonWriter.WriteTo(document.Document, buffer);
            var json = JsonNode.Parse(buffer.WrittenSpan)!.AsObject();
            var metadata = json["@metadata"]!.AsObject();
            metadata.Remove("@change-vector");
            metadata.Remove("@last-modified");
            result.Add(metadata["@id"]!.GetValue<string>(), json.ToJsonString());
        }
        return result;
    }

    private static async Task<PeriodicBackupStatus> RunTaskAsync(PeriodicBackups backups, long taskId, bool full)
    {
        var operation = backups.StartNow(taskId, full);
        PeriodicBackupStatus status = null!;
        await Poll.UntilAsync(() => Task.FromResult(backups.RunningOf(taskId) is null && backups.TryGet(taskId, out _, out status) && status.LastOperationId == operation.Id),
            TimeSpan.FromMinutes(2), $"run {operation.Id} of task {taskId}");
        Assert.True(status.Error is null, status.Error);
        return status;
    }

    private static Task<RestoreResult> RestoreAsync(InProcessServer server, string folder, string name, string? last = null) =>
        DatabaseRestore.RestoreAsync(server.Host.Server.Databases, new RestoreRequest { BackupLocation = folder, DatabaseName = name, LastFileNameToRestore = last }, new BackupRun(), CancellationToken.None);

    private static JsonElement TaskJson(string folder, bool disabled = false, long taskId = 0) => JsonSerializer.SerializeToElement(new Dictionary<string, object?>
    {
        ["TaskId"] = taskId,
        ["Name"] = "logical",
        ["Disabled"] = disabled,
        ["BackupType"] = "Backup",
        // Once a year: the test runs the task itself.
        ["FullBackupFrequency"] = "0 0 1 1 *",
        ["IncrementalBackupFrequency"] = "0 0 1 1 *",
        ["LocalSettings"] = new Dictionary<string, object?> { ["FolderPath"] = folder },
    });

    [Fact]
    public async Task AChainWithDeletesAndTombstoneCleanUpsBetweenItsFilesRestoresTheSource()
    {
        await using var server = await StartAsync();
        using var folder = new TempFolder("jackdaw-logical");
        var source = Database(server, "Source");
        await WriteAsync(server.Client, Put(0, 300, 1));
        await WriteAsync(server.Client, Delete(250, 10));
        using (var subscription = await server.Client.PutAsync("/databases/Source/subscriptions", Api.Json("""{"Name":"Feed","Query":"from Items"}""")))
        {
            Assert.True(subscription.IsSuccessStatusCode, await subscription.Content.ReadAsStringAsync());
        }

        var backups = PeriodicBackups.Of(source);
        var taskId = (await backups.UpdateAsync(TaskJson(folder.Path))).TaskId;
        var full = await RunTaskAsync(backups, taskId, full: true);
        Assert.True(full.IsFull);
        Assert.EndsWith(LogicalChain.FullExtension, full.FileName);
        Assert.EndsWith(".jackdaw-Source-backup", full.FolderName);

        // Updates, deletes, documents made and deleted, deleted and made again, between the files.
        await WriteAsync(server.Client, Put(0, 50, 2));
        await WriteAsync(server.Client, Delete(50, 50));
        await WriteAsync(server.Client, Put(300, 50, 3));
        await WriteAsync(server.Client, Delete(300, 10));
        await WriteAsync(server.Client, Delete(100, 10));
        await WriteAsync(server.Client, Put(100, 10, 4));

        // The task holds the tombstones after its chain's last etag, and says so in the stats; the
        // ones before the full backup go.
        var held = source.Tombstones.GetState();
        Assert.Contains(held, s => s.HeldBy == $"Periodic backup task {taskId} ('logical')" && s.CleanableUpToEtag == full.LastEtag);
        using (var stats = await server.Client.GetAsync("/databases/Source/stats"))
        {
            Assert.Contains($"Periodic backup task {taskId}", await stats.Content.ReadAsStringAsync());
        }
        Assert.Equal(10, await source.Tombstones.CleanAsync());
        using (var reader = source.BeginRead())
        {
            Assert.Equal(70, reader.TombstoneCount);
        }

        var first = await RunTaskAsync(backups, taskId, full: false);
        Assert.False(first.IsFull);
        Assert.EndsWith(LogicalChain.IncrementalExtension, first.FileName);
        Assert.Equal(full.FolderName, first.FolderName);
        var atFirst = Documents(source);
        // Written: the task lets them go.
        Assert.Equal(70, await source.Tombstones.CleanAsync());

        await WriteAsync(server.Client, Delete(0, 10));
        await WriteAsync(server.Client, Put(10, 10, 5));
        await WriteAsync(server.Client, Put(400, 5, 6));
        Assert.Equal(0, await source.Tombstones.CleanAsync());
        // An index made now (another tombstone consumer from here on): the last file carries its definition.
        var definition = JsonSerializer.Serialize(new { Indexes = new[] { new { Name = IndexName, Maps = new[] { "map('Items', i => ({ Group: i.Group }))" } } } });
        using (var put = await server.Client.PutAsync("/databases/Source/admin/indexes", Api.Json(definition)))
        {
            Assert.True(put.IsSuccessStatusCode, await put.Content.ReadAsStringAsync());
        }
        var second = await RunTaskAsync(backups, taskId, full: false);
        Assert.False(second.IsFull);

        var restored = await RestoreAsync(server, full.FolderName!, "Restored");
        Assert.Equal([full.FileName!, first.FileName!, second.FileName!], restored.Files);
        Assert.Equal(second.LastEtag, restored.Etag);
        var expected = Documents(source);
        Assert.Equal(expected, Documents(Database(server, "Restored")));
        Assert.DoesNotContain("items/0", expected.Keys);
        Assert.DoesNotContain("items/55", expected.Keys);
        Assert.DoesNotContain("items/305", expected.Keys);
        Assert.Contains("items/105", expected.Keys);
        Assert.Contains(IndexStore.Of(Database(server, "Restored")).Indexes, i => i.Name == IndexName);
        Assert.Contains(Database(server, "Restored").GetComponent<SubscriptionStore>()!.Subscriptions, s => s.Record.Name == "Feed");

        var partial = await RestoreAsync(server, full.FolderName!, "AtFirst", last: first.FileName);
        Assert.Equal(2, partial.Files.Count);
        Assert.Equal(atFirst, Documents(Database(server, "AtFirst")));

        var verified = await DatabaseRestore.VerifyAsync(full.FolderName!, null, new BackupRun(), CancellationToken.None);
        Assert.Equal(3, verified.Files.Count);

        // Refusals: an existing name, a folder whose files start with an incremental one.
        await Assert.ThrowsAsync<DatabaseAlreadyExistsException>(() => RestoreAsync(server, full.FolderName!, "restored"));
        using var broken = new TempFolder("jackdaw-logical-broken");
        File.Copy(Path.Combine(full.FolderName!, second.FileName!), Path.Combine(broken.Path, second.FileName!));
        var error = await Assert.ThrowsAsync<BackupException>(() => RestoreAsync(server, broken.Path, "FromIncremental"));
        Assert.Contains("no full backup", error.Message);
        Assert.DoesNotContain("FromIncremental", server.Host.Server.Databases.Names);

        // A chain with a file missing in the middle is broken.
        using var gap = new TempFolder("jackdaw-logical-gap");
        File.Copy(Path.Combine(full.FolderName!, full.FileName!), Path.Combine(gap.Path, full.FileName!));
        File.Copy(Path.Combine(full.FolderName!, second.FileName!), Path.Combine(gap.Path, second.FileName!));
        error = await Assert.ThrowsAsync<BackupException>(() => RestoreAsync(server, gap.Path, "WithGap"));
        Assert.Contains("broken", error.Message);
        Assert.Contains(second.FileName!, error.Message);
    }

    [Fact]
    public async Task AChainTakenWhileWritersUpdateDeleteAndRecreateRestoresTheSourceOnceTheyStop()
    {
        await using var server = await StartAsync();
        using var folder = new TempFolder("jackdaw-logical");
        var source = Database(server, "Source");
        // Big enough documents that each export reads them in several snapshots (every 256 KiB).
        var padding = new string('x', 400);
        async Task WritePaddedAsync(IEnumerable<(string Id, int? Group)> changes)
        {
            var commands = string.Join(',', changes.Select(c => c.Group is { } g
                ? $"{{\"Type\":\"PUT\",\"Id\":\"{c.Id}\",\"Document\":{{\"Group\":{g},\"Pad\":\"{padding}\",\"@metadata\":{{\"@collection\":\"Items\"}}}}}}"
                : $"{{\"Type\":\"DELETE\",\"Id\":\"{c.Id}\"}}"));
            using var response = await server.Client.PostAsync("/databases/Source/bulk_docs", new StringContent("{\"Commands\":[" + commands + "]}", Encoding.UTF8, "application/json"));
            Assert.True(response.StatusCode == HttpStatusCode.OK, await response.Content.ReadAsStringAsync());
        }
        for (var i = 0; i < 2000; i += 500)
        {
            await WritePaddedAsync(Enumerable.Range(i, 500).Select(n => ($"items/{n}", (int?)0)));
        }

        var backups = PeriodicBackups.Of(source);
        var taskId = (await backups.UpdateAsync(TaskJson(folder.Path))).TaskId;
        using var stop = new CancellationTokenSource();
        // Each writer owns its ids (n % 4 == w): puts, deletes and puts again after a delete, at random.
        var writers = Enumerable.Range(0, 4).Select(w => Task.Run(async () =>
        {
            var random = new Random(w);
            var version = 0;
            while (!stop.IsCancellationRequested)
            {
                var ids = Enumerable.Range(0, 20).Select(_ => random.Next(2500) / 4 * 4 + w).Distinct().ToList();
                version++;
                await WritePaddedAsync(ids.Select(n => ($"items/{n}", random.Next(3) == 0 ? null : (int?)version)));
            }
        })).ToArray();
        try
        {
            var full = await RunTaskAsync(backups, taskId, full: true);
            await source.Tombstones.CleanAsync();
            await RunTaskAsync(backups, taskId, full: false);
            await source.Tombstones.CleanAsync();
            await RunTaskAsync(backups, taskId, full: false);
            await source.Tombstones.CleanAsync();
        }
        finally
        {
            stop.Cancel();
            await Task.WhenAll(writers);
        }
        var last = await RunTaskAsync(backups, taskId, full: false);
        Assert.Equal(4, LogicalChain.Files(last.FolderName!).Count);

        await RestoreAsync(server, last.FolderName!, "Restored");
        var expected = Documents(source);
        var actual = Documents(Database(server, "Restored"));
        Assert.Equal(expected.Keys, actual.Keys);
        Assert.Equal(expected, actual);
    }

    [Fact]
    public async Task ADisabledOrDeletedTaskLetsItsTombstonesGoAndStartsAChainAgain()
    {
        await using var server = await StartAsync();
        using var folder = new TempFolder("jackdaw-logical");
        var source = Database(server, "Source");
        await WriteAsync(server.Client, Put(0, 20, 1));
        var backups = PeriodicBackups.Of(source);
        var taskId = (await backups.UpdateAsync(TaskJson(folder.Path))).TaskId;
        var full = await RunTaskAsync(backups, taskId, full: true);
        await WriteAsync(server.Client, Delete(0, 5));
        Assert.Equal(0, await source.Tombstones.CleanAsync());

        await backups.UpdateAsync(TaskJson(folder.Path, disabled: true, taskId: taskId));
        Assert.DoesNotContain(source.Tombstones.GetState(), s => s.HeldBy?.StartsWith("Periodic backup task", StringComparison.Ordinal) == true);
        Assert.Equal(5, await source.Tombstones.CleanAsync());

        // Enabled again: its chain missed those deletions, so the next run is a full backup in a new chain.
        await backups.UpdateAsync(TaskJson(folder.Path, taskId: taskId));
        Assert.True(backups.NextOf(taskId)!.Value.IsFull);
        var again = await RunTaskAsync(backups, taskId, full: false);
        Assert.True(again.IsFull);
        Assert.EndsWith(LogicalChain.FullExtension, again.FileName);

        await backups.DeleteAsync(taskId);
        Assert.DoesNotContain(source.Tombstones.GetState(), s => s.HeldBy?.StartsWith("Periodic backup task", StringComparison.Ordinal) == true);
    }

    [Fact]
    public async Task AOneTimeLogicalBackupIsAFullFileAndAnIncrementalAskedForSaysWhyNot()
    {
        await using var server = await StartAsync();
        using var folder = new TempFolder("jackdaw-logical");
        await WriteAsync(server.Client, Put(0, 10, 1));
        var target = Path.Combine(folder.Path, "once");
        foreach (var isFull in new[] { true, false })
        {
            using var response = await server.Client.PostAsync("/databases/Source/admin/backup", Api.Json(JsonSerializer.Serialize(new { BackupType = "Backup", IsFullBackup = isFull, LocalSettings = new { FolderPath = target } })));
            var body = await Api.JsonAsync(response);
            Assert.True(response.StatusCode == HttpStatusCode.OK, body.ToString());
            JsonElement state = default;
            var url = $"/databases/Source/operations/state?id={body.GetProperty("OperationId").GetInt64()}";
            await Poll.UntilAsync(async () =>
            {
                using var poll = await server.Client.GetAsync(url);
                state = await Api.JsonAsync(poll);
                return state.GetProperty("Status").GetString() != "InProgress";
            }, TimeSpan.FromMinutes(1), url);
            Assert.True(state.GetProperty("Status").GetString() == "Completed", state.ToString());
            var result = state.GetProperty("Result");
            Assert.True(result.GetProperty("Logical").GetBoolean());
            Assert.Equal("Full", result.GetProperty("Kind").GetString());
            Assert.EndsWith(LogicalChain.FullExtension, result.GetProperty("FilePath").GetString());
            if (!isFull)
            {
                Assert.Contains("only a periodic backup task keeps them", result.GetProperty("Note").GetString());
            }
        }
        Assert.Equal(2, LogicalChain.Files(target).Count);
        Assert.Empty(Directory.EnumerateFiles(target, "*.in-progress"));
    }

    [Theory]
    [InlineData("middle")]
    [InlineData("crc")]
    public async Task ACorruptedByteIsFoundAndItsFileNamed(string where)
    {
        await using var server = await StartAsync();
        using var folder = new TempFolder("jackdaw-logical");
        // Documents that do not compress to nothing: the file is some kilobytes.
        var random = new Random(7);
        await WriteAsync(server.Client, Enumerable.Range(0, 500).Select(i => ($"items/{i}", (int?)random.Next())));
        var backup = await DatabaseBackups.RunAsync(Database(server, "Source"), new BackupRequest { Folder = folder.Path, Full = true, Logical = true }, new BackupRun(), CancellationToken.None);
        var bytes = await File.ReadAllBytesAsync(backup.FilePath);
        Assert.True(bytes.Length > 4096, $"{bytes.Length} bytes");
        // The middle of the deflate data, or the gzip trailer's CRC-32 (the 8 bytes before the length).
        var at = where == "middle" ? bytes.Length / 2 : bytes.Length - 6;
        bytes[at] ^= 0x5A;
        await File.WriteAllBytesAsync(backup.FilePath, bytes);

        var restore = await Assert.ThrowsAsync<BackupException>(() => RestoreAsync(server, folder.Path, "Damaged"));
        Assert.Contains(backup.FileName, restore.Message);
        Assert.DoesNotContain("Damaged", server.Host.Server.Databases.Names);
        Assert.Empty(Directory.EnumerateDirectories(server.Host.Server.Databases.Root, "~restore-*"));
        var verify = await Assert.ThrowsAsync<BackupException>(() => DatabaseRestore.VerifyAsync(folder.Path, null, new BackupRun(), CancellationToken.None));
        Assert.Contains(backup.FileName, verify.Message);
    }
}
