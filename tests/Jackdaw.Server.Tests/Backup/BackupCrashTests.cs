using System.Collections.Concurrent;
using System.Net;
using System.Text;
using System.Text.Json;
using Jackdaw.Server.Backup;
using Jackdaw.Server.Tests.Infrastructure;
using static Jackdaw.Server.Tests.Backup.BackupSafetyKit;

namespace Jackdaw.Server.Tests.Backup;

/// <summary>
/// Kill -9 of the real server (a child process) during backups, at chosen stages (copying index
/// files, copying the storage, syncing) and after random delays, one-time and periodic: the folders
/// then hold complete backups that verify and restore to exactly the source as of their etag, or
/// <c>*.in-progress</c> leftovers that nothing takes for a backup; the restarted server holds every
/// acknowledged write, its periodic task is sane, and the next backups succeed and delete the
/// leftovers.
/// </summary>
[Collection(RunsAlone.Name)]
public sealed class BackupCrashTests
{
    private static readonly TimeSpan StartTimeout = TimeSpan.FromSeconds(60);

    /// <summary>Where a round kills the server: a stage of the operation's progress, or a random delay after the start.</summary>
    private static readonly string[] Targets = ["copying index folder", "copying the storage", "storage half", "syncing", "delay", "delay", "delay"];

    private sealed record Round(string Target, string Kind, string SeenStage, string SeenStatus);

    [Fact]
    public async Task AKillAtAnyMomentOfABackupLeavesCompleteBackupsOrLeftoversAndEverythingGoesOn()
    {
        using var data = new TempFolder("jackdaw-crash-backup-data");
        using var backups = new TempFolder("jackdaw-crash-backups");
        var once = Path.Combine(backups.Path, "once");
        var periodic = Path.Combine(backups.Path, "periodic");
        var acknowledged = new ConcurrentBag<string>();
        var random = new Random(29);
        var rounds = new List<Round>();
        var checkedFiles = new HashSet<string>();
        long taskId = 0;
        long snapshotSize = 0;

        for (var round = 0; round < Targets.Length; round++)
        {
            using var server = ServerProcess.Start($"--urls http://127.0.0.1:0 --data-dir \"{data.Path}\"");
            using var client = new HttpClient { BaseAddress = await server.WaitForAddressAsync(StartTimeout), Timeout = TimeSpan.FromMinutes(2) };
            if (round == 0)
            {
                var model = new BackupModel();
                await CreateSourceAsync(client, model, seed: 0);
                await SeedLargeAsync(client, acknowledged, 20_000);
                await WaitForIndexAsync(client);
                taskId = await CreatePeriodicTaskAsync(client, periodic);
            }
            else
            {
                await AssertIntactAsync(client, acknowledged, taskId);
            }

            // Writers insert while the backup runs; the kill ends them.
            using var stop = new CancellationTokenSource();
            var writers = Enumerable.Range(0, 2).Select(w => WriteUntilStoppedAsync(client, acknowledged, $"r{round}w{w}", stop.Token)).ToArray();
            var target = Targets[round];
            var (kind, stateUrl) = await StartBackupAsync(client, round, once, taskId);
            var (stage, status) = await KillWhenAsync(client, server, stateUrl, target, snapshotSize, random);
            stop.Cancel();
            await Task.WhenAll(writers);
            rounds.Add(new Round(target, kind, stage, status));

            // The folders hold complete, valid backups, or leftovers nothing lists as one.
            foreach (var folder in ChainFolders(once, periodic))
            {
                Assert.Empty(Strangers(folder));
                foreach (var file in BackupChain.Files(folder).Where(checkedFiles.Add))
                {
                    using var reader = BackupArchiveReader.Open(file);
                    reader.VerifyAll(null, CancellationToken.None);
                    if (reader.Manifest.Kind == BackupKind.Full)
                    {
                        snapshotSize = Math.Max(snapshotSize, reader.Length);
                    }
                }
                if (BackupChain.Files(folder).Any(f => BackupChain.KindOf(f) == BackupKind.Full))
                {
                    await DatabaseRestore.VerifyAsync(folder, null, new BackupRun(), CancellationToken.None);
                }
            }
        }
        var summary = string.Join("\n", rounds.Select(r => $"{r.Target} ({r.Kind}): killed at '{r.SeenStage}', {r.SeenStatus}"));
        Assert.True(rounds.Count(r => r.SeenStatus == "InProgress") >= 3, "too few kills while a backup was running:\n" + summary);
        Assert.True(rounds.Any(r => r.SeenStatus == "InProgress" && r.SeenStage == "copying the storage"), "no kill while the storage was copied:\n" + summary);

        // Restarted once more: every acknowledged write is there, and the next backups succeed and
        // delete what the killed runs left.
        using (var server = ServerProcess.Start($"--urls http://127.0.0.1:0 --data-dir \"{data.Path}\""))
        {
            using var client = new HttpClient { BaseAddress = await server.WaitForAddressAsync(StartTimeout), Timeout = TimeSpan.FromMinutes(2) };
            await AssertIntactAsync(client, acknowledged, taskId);
            foreach (var full in new[] { false, true })
            {
                var state = await EndedAsync(client, (await StartBackupAsync(client, full ? 0 : 1, once, 0)).StateUrl);
                Assert.True(state.GetProperty("Status").GetString() == "Completed", state.ToString());
                using var started = await client.PostAsync($"/databases/{Source}/admin/backup/database?isFullBackup={(full ? "false" : "true")}&taskId={taskId}", null);
                var operation = (await Api.JsonAsync(started)).GetProperty("OperationId").GetInt64();
                var periodicState = await EndedAsync(client, $"/databases/{Source}/operations/state?id={operation}");
                Assert.True(periodicState.GetProperty("Status").GetString() == "Completed", periodicState.ToString());
            }
            await AssertTaskSaneAsync(client, taskId, running: false);
            server.SendSigterm();
            Assert.Equal(0, await server.WaitForExitAsync(TimeSpan.FromSeconds(60)));
        }
        Assert.Empty(Directory.GetFiles(once, "*" + BackupChain.InProgressExtension));
        var leftovers = Directory.GetFiles(periodic, "*" + BackupChain.InProgressExtension, SearchOption.AllDirectories);
        Assert.True(leftovers.Length == 0, $"leftovers of killed periodic runs stay: {string.Join(", ", leftovers)}\n{summary}");

        // Every chain restores to exactly the source as of its last file's etag (writes only insert:
        // the source's documents at or below that etag).
        await using var check = await InProcessServer.StartAsync("--data-dir", data.Path);
        var source = DatabaseState.Read(Database(check, Source));
        var missing = acknowledged.Where(id => !source.Documents.ContainsKey(id.ToLowerInvariant())).Take(5).ToList();
        Assert.True(missing.Count == 0, $"acknowledged writes lost: {string.Join(", ", missing)}");
        var restores = 0;
        foreach (var folder in ChainFolders(once, periodic).Where(f => BackupChain.Files(f).Any(n => BackupChain.KindOf(n) == BackupKind.Full)))
        {
            var name = $"Restored{restores++}";
            var restored = await RestoreAsync(check, folder, name);
            var state = DatabaseState.Read(Database(check, name));
            var expected = source.Documents.Where(d => d.Value.Etag <= restored.Etag).ToDictionary(d => d.Key, d => d.Value.Etag);
            Assert.Equal(restored.Etag, state.LastEtag);
            Assert.Equal(expected.OrderBy(d => d.Key, StringComparer.Ordinal), state.Documents.Select(d => KeyValuePair.Create(d.Key, d.Value.Etag)).OrderBy(d => d.Key, StringComparer.Ordinal));
            foreach (var (id, (_, bytes)) in state.Documents)
            {
                Assert.True(source.Documents[id].Bytes.AsSpan().SequenceEqual(bytes), $"{id} differs in {folder}");
            }
            Assert.Empty(state.Tombstones);
        }
        Assert.True(restores >= 2, $"{restores} chains restored");
    }

    /// <summary>The one-time backups' folder and the periodic task's chain folders (those that exist).</summary>
    private static IEnumerable<string> ChainFolders(string once, string periodic) =>
        (Directory.Exists(once) ? [once] : Array.Empty<string>()).Concat(Directory.Exists(periodic) ? Directory.GetDirectories(periodic) : []);

    private static async Task SeedLargeAsync(HttpClient client, ConcurrentBag<string> acknowledged, int count)
    {
        var random = new Random(7);
        var padding = new byte[1500];
        for (var start = 0; start < count; start += 500)
        {
            var ids = Enumerable.Range(start, Math.Min(500, count - start)).Select(i => $"items/big-{i}").ToList();
            var commands = ids.Select(id =>
            {
                random.NextBytes(padding);
                return $"{{\"Type\":\"PUT\",\"Id\":\"{id}\",\"Document\":{{\"Group\":{random.Next(10)},\"Padding\":\"{Convert.ToBase64String(padding)}\",\"@metadata\":{{\"@collection\":\"Items\"}}}}}}";
            });
            using var response = await client.PostAsync($"/databases/{Source}/bulk_docs", new StringContent("{\"Commands\":[" + string.Join(',', commands) + "]}", Encoding.UTF8, "application/json"));
            Assert.Equal(HttpStatusCode.OK, response.StatusCode);
            foreach (var id in ids)
            {
                acknowledged.Add(id);
            }
        }
    }

    private static async Task WriteUntilStoppedAsync(HttpClient client, ConcurrentBag<string> acknowledged, string prefix, CancellationToken stop)
    {
        var next = 0;
        try
        {
            while (!stop.IsCancellationRequested)
            {
                var ids = Enumerable.Range(next, 20).Select(i => $"items/{prefix}-{i}").ToList();
                next += 20;
                var commands = string.Join(',', ids.Select(id => $"{{\"Type\":\"PUT\",\"Id\":\"{id}\",\"Document\":{{\"Group\":{next % 10},\"@metadata\":{{\"@collection\":\"Items\"}}}}}}"));
                using var response = await client.PostAsync($"/databases/{Source}/bulk_docs", new StringContent("{\"Commands\":[" + commands + "]}", Encoding.UTF8, "application/json"), CancellationToken.None);
                if (response.StatusCode != HttpStatusCode.OK)
                {
                    return;
                }
                foreach (var id in ids)
                {
                    acknowledged.Add(id);
                }
            }
        }
        catch (HttpRequestException)
        {
            // The server was killed: this batch was not acknowledged.
        }
    }

    private static async Task<long> CreatePeriodicTaskAsync(HttpClient client, string folder)
    {
        // Incrementals every minute: a restart after a kill may well catch one up on its own.
        var configuration = JsonSerializer.Serialize(new Dictionary<string, object?>
        {
            ["TaskId"] = 0,
            ["Name"] = "crash",
            ["BackupType"] = "Snapshot",
            ["FullBackupFrequency"] = "0 0 1 1 *",
            ["IncrementalBackupFrequency"] = "* * * * *",
            ["LocalSettings"] = new Dictionary<string, object?> { ["FolderPath"] = folder },
        });
        using var response = await client.PostAsync($"/databases/{Source}/admin/periodic-backup", Api.Json(configuration));
        var body = await Api.JsonAsync(response);
        Assert.True(response.StatusCode == HttpStatusCode.OK, body.ToString());
        return body.GetProperty("TaskId").GetInt64();
    }

    /// <summary>Rounds take turns: a one-time snapshot, a one-time incremental, the periodic task now.</summary>
    private static async Task<(string Kind, string StateUrl)> StartBackupAsync(HttpClient client, int round, string once, long taskId)
    {
        HttpResponseMessage response;
        string kind;
        if (round % 3 == 2)
        {
            var full = round % 2 == 0;
            kind = $"periodic, {(full ? "snapshot" : "incremental")}";
            response = await client.PostAsync($"/databases/{Source}/admin/backup/database?isFullBackup={(full ? "true" : "false")}&taskId={taskId}", null);
        }
        else
        {
            var full = round % 3 == 0;
            kind = $"one-time, {(full ? "snapshot" : "incremental")}";
            response = await client.PostAsync($"/databases/{Source}/admin/backup", Api.Json(JsonSerializer.Serialize(new { BackupType = "Snapshot", LocalSettings = new { FolderPath = once }, IsFullBackup = full })));
        }
        using (response)
        {
            var body = await Api.JsonAsync(response);
            Assert.True(response.StatusCode == HttpStatusCode.OK, body.ToString());
            return (kind, $"/databases/{Source}/operations/state?id={body.GetProperty("OperationId").GetInt64()}");
        }
    }

    /// <summary>Polls the operation until <paramref name="target"/> is reached (or it ended), then kills the server; returns the last stage and status seen.</summary>
    private static async Task<(string Stage, string Status)> KillWhenAsync(HttpClient client, ServerProcess server, string stateUrl, string target, long snapshotSize, Random random)
    {
        var stage = "";
        var status = "InProgress";
        if (target == "delay")
        {
            await Task.Delay(random.Next(0, 800));
        }
        else
        {
            var deadline = DateTime.UtcNow.AddSeconds(60);
            while (DateTime.UtcNow < deadline)
            {
                using var response = await client.GetAsync(stateUrl);
                var state = await Api.JsonAsync(response);
                status = state.GetProperty("Status").GetString()!;
                if (status != "InProgress")
                {
                    break;
                }
                var progress = state.GetProperty("Progress");
                stage = progress.GetProperty("Stage").GetString() ?? "";
                var reached = target switch
                {
                    "storage half" => stage == "copying the storage" && progress.GetProperty("Bytes").GetInt64() > snapshotSize / 2,
                    _ => stage.StartsWith(target, StringComparison.Ordinal),
                };
                if (reached)
                {
                    break;
                }
            }
        }
        server.KillHard();
        await server.WaitForExitAsync(TimeSpan.FromSeconds(30));
        return (stage, target == "delay" ? "after a delay" : status);
    }

    /// <summary>The restarted server: the database opens, holds every acknowledged write, takes writes; the periodic task is sane.</summary>
    private static async Task AssertIntactAsync(HttpClient client, ConcurrentBag<string> acknowledged, long taskId)
    {
        using (var stats = await client.GetAsync($"/databases/{Source}/stats"))
        {
            var json = await Api.JsonAsync(stats);
            Assert.True(stats.StatusCode == HttpStatusCode.OK, json.ToString());
            Assert.True(json.GetProperty("CountOfDocuments").GetInt64() >= acknowledged.Count, json.ToString());
        }
        foreach (var id in acknowledged.OrderBy(_ => Random.Shared.Next()).Take(20))
        {
            using var document = await client.GetAsync($"/databases/{Source}/docs?id={Uri.EscapeDataString(id)}");
            Assert.True(document.StatusCode == HttpStatusCode.OK, $"acknowledged {id}: {document.StatusCode}");
        }
        await AssertTaskSaneAsync(client, taskId, running: null);
    }

    private static async Task AssertTaskSaneAsync(HttpClient client, long taskId, bool? running)
    {
        using var response = await client.GetAsync($"/periodic-backup/status?name={Source}&taskId={taskId}");
        var body = await Api.JsonAsync(response);
        Assert.True(response.StatusCode == HttpStatusCode.OK, body.ToString());
        var status = body.GetProperty("Status");
        Assert.True(status.ValueKind == JsonValueKind.Object, body.ToString());
        // A killed run is no error of the task: the process died, nothing failed.
        Assert.True(status.GetProperty("Error").ValueKind == JsonValueKind.Null, status.ToString());
        var next = status.GetProperty("NextBackup");
        Assert.True(next.ValueKind == JsonValueKind.Object, status.ToString());
        var when = next.GetProperty("DateTime").GetDateTime().ToUniversalTime();
        Assert.True(when <= DateTime.UtcNow.AddMinutes(2), $"next run {when:o}: {status}");
        if (running is false)
        {
            Assert.Equal(JsonValueKind.Null, status.GetProperty("OnGoingBackup").ValueKind);
        }
        if (status.GetProperty("LocalBackup").GetProperty("BackupDirectory").GetString() is { } chain)
        {
            Assert.True(Directory.Exists(chain), $"the task's chain {chain} does not exist");
        }
    }
}
