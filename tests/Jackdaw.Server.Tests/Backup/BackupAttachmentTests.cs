using System.Net;
using System.Text;
using Jackdaw.Server.Backup;
using Jackdaw.Server.Tests.Infrastructure;

namespace Jackdaw.Server.Tests.Backup;

/// <summary>
/// Backups keep attachments (their bytes, their entries, the contents' reference counts) and
/// revisions: a snapshot chain (the trees copied as they are) and a logical chain (through the
/// smuggler), each with an incremental file after an attachment change.
/// </summary>
public sealed class BackupAttachmentTests
{
    private static readonly byte[] Shared = Encoding.UTF8.GetBytes("the same signed time sheet");

    private static async Task<InProcessServer> StartAsync()
    {
        var server = await InProcessServer.StartAsync();
        using (var created = await server.Client.PutAsync("/admin/databases?name=Source", null))
        {
            Assert.Equal(HttpStatusCode.Created, created.StatusCode);
        }
        using (var config = await server.Client.PostAsync("/databases/Source/admin/revisions/config", Api.Json("""{"Default":null,"Collections":{"Sheets":{"Disabled":false,"MinimumRevisionsToKeep":10}}}""")))
        {
            Assert.Equal(HttpStatusCode.OK, config.StatusCode);
        }
        return server;
    }

    private static async Task PutAsync(InProcessServer server, string id, string name)
    {
        using var response = await server.Client.PutAsync($"/databases/Source/docs?id={id}", Api.Json($$$"""{"Name":"{{{name}}}","@metadata":{"@collection":"Sheets"}}"""));
        Assert.Equal(HttpStatusCode.Created, response.StatusCode);
    }

    /// <summary>sheets/1 and sheets/2 share a content; sheets/1 also has a 2 MB scan (staged in steps); sheets/3 none.</summary>
    private static async Task<byte[]> SeedAsync(InProcessServer server)
    {
        for (var i = 1; i <= 3; i++)
        {
            await PutAsync(server, $"sheets/{i}", $"sheet {i}");
        }
        var scan = new byte[2 * 1024 * 1024 + 5];
        new Random(7).NextBytes(scan);
        await DirectAttachments.PutAsync(server, "Source", "sheets/1", "sheet.txt", Shared);
        await DirectAttachments.PutAsync(server, "Source", "sheets/1", "scan.bin", scan, "application/octet-stream");
        await DirectAttachments.PutAsync(server, "Source", "sheets/2", "sheet.txt", Shared);
        await PutAsync(server, "sheets/3", "sheet 3, corrected");
        return scan;
    }

    /// <summary>The second change, between a full and an incremental file: one attachment replaced, one deleted, one added.</summary>
    private static async Task ChangeAsync(InProcessServer server)
    {
        await DirectAttachments.PutAsync(server, "Source", "sheets/2", "sheet.txt", Encoding.UTF8.GetBytes("a corrected sheet"));
        Assert.True(await DirectAttachments.DeleteAsync(server, "Source", "sheets/1", "scan.bin"));
        await DirectAttachments.PutAsync(server, "Source", "sheets/3", "note.md", Encoding.UTF8.GetBytes("# note"), "text/markdown");
    }

    private static async Task<long> RevisionCountAsync(InProcessServer server, string db, string id)
    {
        using var response = await server.Client.GetAsync($"/databases/{db}/revisions/count?id={id}");
        return (await Api.JsonAsync(response)).GetProperty("RevisionsCount").GetInt64();
    }

    /// <summary>The restored database has the source's attachments (names, types, bytes), reference counts, content count and revisions.</summary>
    private static async Task AssertSameAsync(InProcessServer server, string restored)
    {
        foreach (var id in new[] { "sheets/1", "sheets/2", "sheets/3" })
        {
            var expected = DirectAttachments.Read(server, "Source", id);
            var actual = DirectAttachments.Read(server, restored, id);
            Assert.Equal(expected.Select(a => (a.Info.Name, a.Info.Hash, a.Info.ContentType, a.Info.Size)), actual.Select(a => (a.Info.Name, a.Info.Hash, a.Info.ContentType, a.Info.Size)));
            for (var i = 0; i < expected.Count; i++)
            {
                Assert.Equal(expected[i].Content, actual[i].Content);
            }
            foreach (var (info, _) in expected)
            {
                Assert.Equal(DirectAttachments.References(server, "Source", info.Hash), DirectAttachments.References(server, restored, info.Hash));
            }
            Assert.Equal(await RevisionCountAsync(server, "Source", id), await RevisionCountAsync(server, restored, id));
            var document = (await SmugglerClient.GetAsync(server.Client, restored, id))!.Value;
            var attachments = document.GetProperty("@metadata").TryGetProperty("@attachments", out var list) ? list.EnumerateArray().Select(a => a.GetProperty("Name").GetString()).ToList() : [];
            Assert.Equal(expected.Select(a => a.Info.Name), attachments);
        }
        Assert.Equal(DirectAttachments.Stats(server, "Source").Contents, DirectAttachments.Stats(server, restored).Contents);
    }

    [Fact]
    public async Task ASnapshotChainKeepsAttachmentsReferenceCountsAndRevisions()
    {
        await using var server = await StartAsync();
        using var folder = new TempFolder("jackdaw-backup-attachments");
        var source = DirectAttachments.Database(server, "Source");
        await SeedAsync(server);
        var full = await DatabaseBackups.RunAsync(source, new BackupRequest { Folder = folder.Path, Full = true, RetainJournals = true }, new BackupRun(), CancellationToken.None);
        Assert.Equal(BackupKind.Full, full.Kind);

        await DatabaseRestore.RestoreAsync(server.Host.Server.Databases, new RestoreRequest { BackupLocation = folder.Path, DatabaseName = "AtFull" }, new BackupRun(), CancellationToken.None);
        // Two documents list it, and so do the three revisions their attachment puts stored (revisions hold references too).
        Assert.Equal(5, DirectAttachments.References(server, "AtFull", Convert.ToBase64String(System.Security.Cryptography.SHA256.HashData(Shared))));
        await AssertSameAsync(server, "AtFull");

        await ChangeAsync(server);
        var incremental = await DatabaseBackups.RunAsync(source, new BackupRequest { Folder = folder.Path, Full = false, RetainJournals = true }, new BackupRun(), CancellationToken.None);
        Assert.Equal(BackupKind.Incremental, incremental.Kind);
        await DatabaseRestore.RestoreAsync(server.Host.Server.Databases, new RestoreRequest { BackupLocation = folder.Path, DatabaseName = "AtIncremental" }, new BackupRun(), CancellationToken.None);
        await AssertSameAsync(server, "AtIncremental");
        Assert.Single(DirectAttachments.Read(server, "AtIncremental", "sheets/1"));
        // sheets/1 lists it (sheets/2 no longer does), and so do four revisions: the three before, and
        // sheets/1's new one (scan.bin deleted); sheets/2's new revision lists the corrected sheet.
        Assert.Equal(5, DirectAttachments.References(server, "AtIncremental", Convert.ToBase64String(System.Security.Cryptography.SHA256.HashData(Shared))));
    }

    [Fact]
    public async Task ALogicalChainKeepsAttachmentsAndRevisionsThroughAnIncrementalAfterAnAttachmentChange()
    {
        await using var server = await StartAsync();
        using var folder = new TempFolder("jackdaw-logical-attachments");
        var source = DirectAttachments.Database(server, "Source");
        var scan = await SeedAsync(server);
        var backups = PeriodicBackups.Of(source);
        var task = System.Text.Json.JsonSerializer.SerializeToElement(new Dictionary<string, object?>
        {
            ["TaskId"] = 0,
            ["Name"] = "logical",
            ["BackupType"] = "Backup",
            ["FullBackupFrequency"] = "0 0 1 1 *",
            ["IncrementalBackupFrequency"] = "0 0 1 1 *",
            ["LocalSettings"] = new Dictionary<string, object?> { ["FolderPath"] = folder.Path },
        });
        var taskId = (await backups.UpdateAsync(task)).TaskId;
        var full = await RunAsync(backups, taskId, full: true);
        Assert.True(full.IsFull);

        await DatabaseRestore.RestoreAsync(server.Host.Server.Databases, new RestoreRequest { BackupLocation = Path.Combine(folder.Path, full.FolderName!), DatabaseName = "LogicalFull" }, new BackupRun(), CancellationToken.None);
        await AssertSameAsync(server, "LogicalFull");
        Assert.Equal(scan, DirectAttachments.Read(server, "LogicalFull", "sheets/1").Single(a => a.Info.Name == "scan.bin").Content);

        await ChangeAsync(server);
        var incremental = await RunAsync(backups, taskId, full: false);
        Assert.False(incremental.IsFull);
        var restored = await DatabaseRestore.RestoreAsync(server.Host.Server.Databases, new RestoreRequest { BackupLocation = Path.Combine(folder.Path, full.FolderName!), DatabaseName = "LogicalIncremental" }, new BackupRun(), CancellationToken.None);
        Assert.Equal(2, restored.Files.Count);
        await AssertSameAsync(server, "LogicalIncremental");
        Assert.Single(DirectAttachments.Read(server, "LogicalIncremental", "sheets/1"));
    }

    private static async Task<PeriodicBackupStatus> RunAsync(PeriodicBackups backups, long taskId, bool full)
    {
        var operation = backups.StartNow(taskId, full);
        PeriodicBackupStatus status = null!;
        await Poll.UntilAsync(() => Task.FromResult(backups.RunningOf(taskId) is null && backups.TryGet(taskId, out _, out status) && status.LastOperationId == operation.Id),
            TimeSpan.FromMinutes(2), $"run {operation.Id} of task {taskId}");
        Assert.True(status.Error is null, status.Error);
        return status;
    }
}
