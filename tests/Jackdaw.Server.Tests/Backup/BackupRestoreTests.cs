using System.Net;
using System.Text;
using System.Text.Json;
using Jackdaw.Server.Backup;
using Jackdaw.Server.Databases;
using Jackdaw.Server.Indexing;
using Jackdaw.Server.Tests.Infrastructure;

namespace Jackdaw.Server.Tests.Backup;

/// <summary>
/// Backups taken while writers write, restored into new databases: each restore holds exactly the
/// acknowledged history up to the etag its last file covers (<see cref="BackupModel"/>), its index
/// goes on from its commit instead of rebuilding, and its subscription stands where it stood.
/// </summary>
public sealed class BackupRestoreTests
{
    private const string IndexName = "Items/ByGroup";

    private static async Task<InProcessServer> StartWithSourceAsync(BackupModel model, int seed)
    {
        var server = await InProcessServer.StartAsync();
        using (var created = await server.Client.PutAsync("/admin/databases?name=Source", null))
        {
            Assert.Equal(HttpStatusCode.Created, created.StatusCode);
        }
        for (var start = 0; start < seed; start += 1000)
        {
            await model.WriteAsync(server.Client, "Source", Enumerable.Range(start, Math.Min(1000, seed - start)).Select(i => ($"items/seed-{i}", (int?)(i % 10))).ToList());
        }
        var definition = JsonSerializer.Serialize(new { Indexes = new[] { new { Name = IndexName, Maps = new[] { "map('Items', i => ({ Group: i.Group }))" } } } });
        using (var put = await server.Client.PutAsync("/databases/Source/admin/indexes", Api.Json(definition)))
        {
            Assert.True(put.IsSuccessStatusCode, await put.Content.ReadAsStringAsync());
        }
        await CountGroupAsync(server.Client, "Source", 3, wait: true);
        // The index commits once caught up: a backup then holds files with positions, not its empty first commit.
        var index = IndexStore.Of(Database(server, "Source")).Indexes.Single();
        await Poll.UntilAsync(() =>
        {
            using var commit = index.CaptureCommit()!;
            return Task.FromResult(commit.Positions.Count > 0);
        }, TimeSpan.FromSeconds(60), "the index's first commit with positions");
        return server;
    }

    private static async Task<long> CountGroupAsync(HttpClient client, string db, int group, bool wait)
    {
        var body = JsonSerializer.Serialize(new { Query = $"from index '{IndexName}' where Group = {group}", WaitForNonStaleResults = wait, WaitForNonStaleResultsTimeout = "00:02:00", PageSize = 0 });
        using var response = await client.PostAsync($"/databases/{db}/queries", Api.Json(body));
        var json = await Api.JsonAsync(response);
        Assert.True(response.StatusCode == HttpStatusCode.OK, json.ToString());
        return json.GetProperty("TotalResults").GetInt64();
    }

    /// <summary>Writers that put new documents, update them and delete some (never writing a deleted id again), until stopped.</summary>
    private static Task[] StartWriters(HttpClient client, BackupModel model, int count, CancellationToken stop, string round = "") =>
        Enumerable.Range(0, count).Select(w => Task.Run(async () =>
        {
            var random = new Random(w);
            var live = new List<string>();
            var next = 0;
            while (!stop.IsCancellationRequested)
            {
                var changes = new List<(string, int?)>();
                var touched = new HashSet<string>();
                for (var i = 0; i < 8; i++)
                {
                    var roll = random.Next(10);
                    if (roll < 5 || live.Count < 10)
                    {
                        var id = $"items/w{w}{round}-{next++}";
                        live.Add(id);
                        touched.Add(id);
                        changes.Add((id, random.Next(10)));
                    }
                    else
                    {
                        var at = random.Next(live.Count);
                        var id = live[at];
                        if (!touched.Add(id))
                        {
                            continue;
                        }
                        if (roll < 9)
                        {
                            changes.Add((id, random.Next(10)));
                        }
                        else
                        {
                            live.RemoveAt(at);
                            changes.Add((id, null));
                        }
                    }
                }
                await model.WriteAsync(client, "Source", changes);
            }
        })).ToArray();

    /// <summary>Waits until the model holds more than <paramref name="puts"/> acknowledged PUTs; a writer's failure is thrown at once.</summary>
    private static Task UntilWrittenAsync(BackupModel model, int puts, Task[] writers) =>
        Poll.UntilAsync(async () =>
        {
            if (writers.FirstOrDefault(w => w.IsFaulted) is { } failed)
            {
                await failed;
            }
            return model.Puts > puts;
        }, TimeSpan.FromSeconds(90), $"{puts} acknowledged PUTs");

    private static DocumentDatabase Database(InProcessServer server, string name) => server.Host.Server.Databases.GetDatabase(name);

    private static Task<BackupResult> BackupAsync(InProcessServer server, string folder, bool full, bool minimal = false) =>
        DatabaseBackups.RunAsync(Database(server, "Source"), new BackupRequest { Folder = folder, Full = full, Minimal = minimal, RetainJournals = true }, new BackupRun(), CancellationToken.None);

    private static Task<RestoreResult> RestoreAsync(InProcessServer server, string folder, string name, string? last = null) =>
        DatabaseRestore.RestoreAsync(server.Host.Server.Databases, new RestoreRequest { BackupLocation = folder, DatabaseName = name, LastFileNameToRestore = last }, new BackupRun(), CancellationToken.None);

    [Fact]
    public async Task ASnapshotUnderSixteenWritersRestoresTheStateAtItsEtag()
    {
        var model = new BackupModel();
        await using var server = await StartWithSourceAsync(model, seed: 3000);
        using var folder = new TempFolder("jackdaw-backup");
        using (var subscription = await server.Client.PutAsync("/databases/Source/subscriptions", Api.Json(JsonSerializer.Serialize(new { Name = "Feed", Query = "from Items", ChangeVector = $"A:1500-{Database(server, "Source").DatabaseId}" }))))
        {
            Assert.True(subscription.IsSuccessStatusCode, await subscription.Content.ReadAsStringAsync());
        }

        using var stop = new CancellationTokenSource();
        var writers = StartWriters(server.Client, model, 16, stop.Token);
        await UntilWrittenAsync(model, 6000, writers);
        var backup = await BackupAsync(server, folder.Path, full: true);
        var before = model.Puts;
        await UntilWrittenAsync(model, before + 2000, writers);
        stop.Cancel();
        await Task.WhenAll(writers);

        Assert.Equal(BackupKind.Full, backup.Kind);
        Assert.True(File.Exists(backup.FilePath));
        Assert.Empty(Directory.GetFiles(folder.Path, "*.in-progress"));
        var source = DatabaseState.Read(Database(server, "Source"));
        Assert.True(source.LastEtag > backup.Etag, "the writers went on after the backup");

        var restored = await RestoreAsync(server, folder.Path, "Restored");
        Assert.Equal(backup.Etag, restored.Etag);
        model.AssertRestored(backup.Etag, source, DatabaseState.Read(Database(server, "Restored")));

        // The index was restored with its files: it maps only what came after its commit.
        var (expected, _) = model.At(backup.Etag, source);
        var group3 = expected.Keys.Count(id => source.Documents.TryGetValue(id, out var d) && d.Etag == expected[id] && JsonGroup(d.Bytes) == 3);
        Assert.True(await CountGroupAsync(server.Client, "Restored", 3, wait: true) >= group3);
        using (var stats = await server.Client.GetAsync("/databases/Restored/indexes/stats"))
        {
            var index = (await Api.JsonAsync(stats)).GetProperty("Results")[0];
            Assert.True(index.GetProperty("DocumentsMappedSinceOpen").GetInt64() < expected.Count, index.ToString());
        }

        // The subscription stands where it stood; the restored database has an id of its own.
        var (sourceAt, restoredAt) = (await SubscriptionStateAsync(server.Client, "Source"), await SubscriptionStateAsync(server.Client, "Restored"));
        Assert.Equal(BackupModel.EtagOf(sourceAt), BackupModel.EtagOf(restoredAt));
        Assert.NotEqual(Database(server, "Source").DatabaseId, Database(server, "Restored").DatabaseId);
    }

    [Fact]
    public async Task AChainOfEveryKindRestoresToEachOfItsFiles()
    {
        var model = new BackupModel();
        await using var server = await StartWithSourceAsync(model, seed: 1000);
        using var folder = new TempFolder("jackdaw-backup");
        var files = new List<BackupResult>();
        async Task RoundAsync(bool full, bool minimal)
        {
            using var stop = new CancellationTokenSource();
            var writers = StartWriters(server.Client, model, 4, stop.Token, $"r{files.Count}");
            var before = model.Puts;
            await UntilWrittenAsync(model, before + 1500, writers);
            files.Add(await BackupAsync(server, folder.Path, full, minimal));
            stop.Cancel();
            await Task.WhenAll(writers);
        }

        await RoundAsync(full: true, minimal: false);
        await RoundAsync(full: false, minimal: false);
        await RoundAsync(full: false, minimal: true);
        await RoundAsync(full: false, minimal: false);
        Assert.Equal([BackupKind.Full, BackupKind.Incremental, BackupKind.MinimalIncremental, BackupKind.Incremental], files.Select(f => f.Kind));
        Assert.All(files, f => Assert.Null(f.Note));
        var source = DatabaseState.Read(Database(server, "Source"));

        var all = await RestoreAsync(server, folder.Path, "All");
        Assert.Equal(files.Select(f => f.FileName), all.Files);
        model.AssertRestored(files[^1].Etag, source, DatabaseState.Read(Database(server, "All")));

        var two = await RestoreAsync(server, folder.Path, "Two", last: files[1].FileName);
        Assert.Equal(2, two.Files.Count);
        model.AssertRestored(files[1].Etag, source, DatabaseState.Read(Database(server, "Two")));

        var three = await RestoreAsync(server, folder.Path, "Three", last: files[2].FileName);
        model.AssertRestored(files[2].Etag, source, DatabaseState.Read(Database(server, "Three")));

        // Each restored index answers as the model says once caught up.
        foreach (var (name, file) in new[] { ("All", files[^1]), ("Two", files[1]) })
        {
            var (documents, _) = model.At(file.Etag, source);
            var restored = DatabaseState.Read(Database(server, name));
            var group = restored.Documents.Values.Count(d => JsonGroup(d.Bytes) == 5);
            Assert.Equal(group, await CountGroupAsync(server.Client, name, 5, wait: true));
            Assert.Equal(documents.Count, restored.Documents.Count);
        }
    }

    [Fact]
    public async Task AnIncrementalWithoutKeptJournalsIsASnapshotThatSaysWhy()
    {
        var model = new BackupModel();
        await using var server = await StartWithSourceAsync(model, seed: 500);
        using var folder = new TempFolder("jackdaw-backup");
        var first = await DatabaseBackups.RunAsync(Database(server, "Source"), new BackupRequest { Folder = folder.Path }, new BackupRun(), CancellationToken.None);
        Assert.Equal(BackupKind.Full, first.Kind);
        Assert.Contains("holds none", first.Note);

        // Journals were not kept after a backup that did not ask for it: once the database is
        // reopened, recovery has replayed and deleted them.
        await model.WriteAsync(server.Client, "Source", [("items/after", 1)]);
        Assert.True(await server.Host.Server.Databases.UnloadAsync("Source"));
        var database = Database(server, "Source");
        var second = await DatabaseBackups.RunAsync(database, new BackupRequest { Folder = folder.Path }, new BackupRun(), CancellationToken.None);
        Assert.Equal(BackupKind.Full, second.Kind);
        Assert.Contains("were not kept", second.Note);
    }

    [Fact]
    public async Task AnIndexResetBetweenTwoFilesIsRestoredFromItsNewFiles()
    {
        // A reset writes segments_1, _0.cfs... again under the same folder: the incremental file
        // must carry the new files, not point at the old ones of the same names.
        var model = new BackupModel();
        await using var server = await StartWithSourceAsync(model, seed: 300);
        using var folder = new TempFolder("jackdaw-backup");
        await BackupAsync(server, folder.Path, full: true);
        using (var reset = await server.Client.PostAsync($"/databases/Source/indexes/reset?name={Uri.EscapeDataString(IndexName)}", null))
        {
            Assert.True(reset.IsSuccessStatusCode, await reset.Content.ReadAsStringAsync());
        }
        Assert.Equal(30, await CountGroupAsync(server.Client, "Source", 7, wait: true));
        var index = IndexStore.Of(Database(server, "Source")).Indexes.Single();
        await Poll.UntilAsync(() =>
        {
            using var commit = index.CaptureCommit()!;
            return Task.FromResult(commit.Positions.Count > 0);
        }, TimeSpan.FromSeconds(60), "the reset index's commit");
        var incremental = await BackupAsync(server, folder.Path, full: false);
        Assert.Equal(BackupKind.Incremental, incremental.Kind);
        BackupIndex files;
        using (var file = BackupArchiveReader.Open(incremental.FilePath))
        {
            files = file.Manifest.Indexes.Single();
        }

        await RestoreAsync(server, folder.Path, "AfterReset");
        // Byte for byte the reset index's files, whichever file of the chain holds each (files a
        // reset wrote again with the same name and length, but other bytes, come from the new one).
        var sourceFolder = Path.Combine(IndexStore.Of(Database(server, "Source")).IndexesFolder, files.Folder);
        var restoredFolder = Path.Combine(IndexStore.Of(Database(server, "AfterReset")).IndexesFolder, files.Folder);
        Assert.All(files.Files, f => Assert.True(
            File.ReadAllBytes(Path.Combine(sourceFolder, f.Name)).AsSpan().SequenceEqual(File.ReadAllBytes(Path.Combine(restoredFolder, f.Name))),
            $"{f.Name} (from {f.In}) differs from the source's"));
        Assert.Equal(30, await CountGroupAsync(server.Client, "AfterReset", 7, wait: true));
        using var stats = await server.Client.GetAsync("/databases/AfterReset/indexes/stats");
        var restored = (await Api.JsonAsync(stats)).GetProperty("Results")[0];
        Assert.Equal(0, restored.GetProperty("ErrorsCount").GetInt64());
        Assert.Equal(300, restored.GetProperty("EntriesCount").GetInt64());
        Assert.Equal(0, restored.GetProperty("DocumentsMappedSinceOpen").GetInt64());
    }

    [Fact]
    public async Task AMapReduceIndexIsRebuiltFromTheRestoredDocuments()
    {
        // Its reduce store is not copied (CaptureCommit is null for it): the restored database has
        // its definition and builds it again from the documents.
        var model = new BackupModel();
        await using var server = await StartWithSourceAsync(model, seed: 300);
        var definition = JsonSerializer.Serialize(new { Indexes = new[] { new
        {
            Name = "Items/CountByGroup",
            Maps = new[] { "map('Items', i => ({ Group: i.Group, Count: 1 }))" },
            Reduce = "groupBy(r => r.Group).aggregate(g => ({ Group: g.key, Count: g.values.reduce((c, r) => c + r.Count, 0) }))",
        } } });
        using (var put = await server.Client.PutAsync("/databases/Source/admin/indexes", Api.Json(definition)))
        {
            Assert.True(put.IsSuccessStatusCode, await put.Content.ReadAsStringAsync());
        }
        using var folder = new TempFolder("jackdaw-backup");
        await BackupAsync(server, folder.Path, full: true);
        await RestoreAsync(server, folder.Path, "Restored");
        var body = JsonSerializer.Serialize(new { Query = "from index 'Items/CountByGroup' where Group = 7", WaitForNonStaleResults = true, WaitForNonStaleResultsTimeout = "00:02:00" });
        using var response = await server.Client.PostAsync("/databases/Restored/queries", Api.Json(body));
        var json = await Api.JsonAsync(response);
        Assert.True(response.StatusCode == HttpStatusCode.OK, json.ToString());
        Assert.Equal(30, json.GetProperty("Results").EnumerateArray().Single().GetProperty("Count").GetInt32());
    }

    [Fact]
    public async Task AnIncrementalOntoAnotherDatabasesChainIsASnapshot()
    {
        var model = new BackupModel();
        await using var server = await StartWithSourceAsync(model, seed: 100);
        using var folder = new TempFolder("jackdaw-backup");
        await BackupAsync(server, folder.Path, full: true);
        using (var created = await server.Client.PutAsync("/admin/databases?name=Other", null))
        {
            Assert.Equal(HttpStatusCode.Created, created.StatusCode);
        }
        await model.WriteAsync(server.Client, "Other", [("items/other", 1)]);
        var other = await DatabaseBackups.RunAsync(Database(server, "Other"), new BackupRequest { Folder = folder.Path, RetainJournals = true }, new BackupRun(), CancellationToken.None);
        Assert.Equal(BackupKind.Full, other.Kind);
        Assert.Contains("another database", other.Note);

        // A restored database is another database too: its backups never continue the source's chain.
        await RestoreAsync(server, folder.Path, "Copy");
        var copy = await DatabaseBackups.RunAsync(Database(server, "Copy"), new BackupRequest { Folder = folder.Path }, new BackupRun(), CancellationToken.None);
        Assert.Equal(BackupKind.Full, copy.Kind);
    }

    [Fact]
    public void AnOperationTheServerStartsNeverTakesAClientsId()
    {
        using var operations = new DatabaseOperations(Microsoft.Extensions.Logging.Abstractions.NullLogger.Instance);
        var clients = operations.Start(operations.NextId() + 1);
        var ours = operations.StartNew(null);
        Assert.NotEqual(clients.Id, ours.Id);
        Assert.Equal(OperationStatus.InProgress, clients.Status);
    }

    [Fact]
    public async Task RestoreRefusesWhatItCannotRestore()
    {
        var model = new BackupModel();
        await using var server = await StartWithSourceAsync(model, seed: 200);
        using var folder = new TempFolder("jackdaw-backup");
        using var empty = new TempFolder("jackdaw-backup-empty");
        var full = await BackupAsync(server, folder.Path, full: true);
        await model.WriteAsync(server.Client, "Source", [("items/x", 1)]);
        var incremental = await BackupAsync(server, folder.Path, full: false);
        await model.WriteAsync(server.Client, "Source", [("items/y", 1)]);
        var third = await BackupAsync(server, folder.Path, full: false);

        var exists = await Assert.ThrowsAsync<Errors.DatabaseAlreadyExistsException>(() => RestoreAsync(server, folder.Path, "Source"));
        var none = await Assert.ThrowsAsync<Errors.BackupException>(() => RestoreAsync(server, empty.Path, "Nothing"));
        Assert.Contains("holds no backup file", none.Message);
        var unknown = await Assert.ThrowsAsync<Errors.BackupException>(() => RestoreAsync(server, folder.Path, "Nothing", last: "nope.jackdaw-snapshot"));
        Assert.Contains("nope.jackdaw-snapshot", unknown.Message);

        // A chain with its middle file gone is broken, and says where.
        File.Move(incremental.FilePath, incremental.FilePath + ".aside");
        var broken = await Assert.ThrowsAsync<Errors.BackupException>(() => RestoreAsync(server, folder.Path, "Broken"));
        Assert.Contains("broken", broken.Message);
        Assert.Contains(third.FileName, broken.Message);
        File.Move(incremental.FilePath + ".aside", incremental.FilePath);

        // Incremental files alone are no backup.
        File.Move(full.FilePath, Path.Combine(empty.Path, full.FileName));
        var headless = await Assert.ThrowsAsync<Errors.BackupException>(() => RestoreAsync(server, folder.Path, "Headless"));
        Assert.Contains("no snapshot", headless.Message);
        Assert.DoesNotContain("Broken", server.Host.Server.Databases.Names);
        Assert.DoesNotContain("Headless", server.Host.Server.Databases.Names);
        Assert.Empty(Directory.GetDirectories(server.Host.Server.Databases.Root, "~restore-*"));
    }

    private static async Task<string> SubscriptionStateAsync(HttpClient client, string db)
    {
        using var response = await client.GetAsync($"/databases/{db}/subscriptions/state?name=Feed");
        var json = await Api.JsonAsync(response);
        Assert.True(response.StatusCode == HttpStatusCode.OK, json.ToString());
        return json.GetProperty("ChangeVectorForNextBatchStartingPoint").GetString() ?? "";
    }

    private static int JsonGroup(byte[] blittable)
    {
        var json = new System.Buffers.ArrayBufferWriter<byte>();
        Jackdaw.Storage.Blittable.BlittableJsonWriter.WriteTo(blittable, json);
        return JsonDocument.Parse(json.WrittenMemory).RootElement.GetProperty("Group").GetInt32();
    }
}
