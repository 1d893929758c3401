using System.Globalization;
using System.IO.Compression;
using System.Net.Http;
using System.Text;
using System.Text.Json;
using System.Text.Json.Nodes;
using Jackdaw.Server.Backup;
using Jackdaw.Server.Databases;
using Jackdaw.Server.Errors;
using Jackdaw.Server.Tests.Infrastructure;

namespace Jackdaw.Server.Tests.Backup;

/// <summary>
/// Revisions in a logical chain: an incremental file holds the revisions written since the previous
/// file and the revisions removed since (revision tombstones), so a restore of the chain has exactly
/// the source's revisions; the task keeps the revision tombstones its next file needs. A restore
/// refuses a chain whose revision etags have a gap; a chain written before they were recorded
/// restores, and its task's next file is a full one that says why.
/// </summary>
public sealed partial class LogicalBackupTests
{
    private static async Task KeepRevisionsAsync(HttpClient client, int count)
    {
        using var response = await client.PostAsync("/databases/Source/admin/revisions/config", Api.Json("{\"Default\":{\"MinimumRevisionsToKeep\":" + count + "}}"));
        Assert.True(response.IsSuccessStatusCode, await response.Content.ReadAsStringAsync());
    }

    /// <summary>Every revision as "id change-vector".</summary>
    private static SortedSet<string> Revisions(DocumentDatabase database)
    {
        var result = new SortedSet<string>(StringComparer.Ordinal);
        using var reader = database.BeginRead();
        foreach (var key in reader.GetRevisionKeysAfter(0, int.MaxValue))
        {
            if (reader.TryGetRevisionByKey(key, out var revision))
            {
                result.Add($"{revision.Id} {revision.ChangeVector}");
            }
        }
        return result;
    }

    private static long RevisionTombstoneCount(DocumentDatabase database)
    {
        using var reader = database.BeginRead();
        return reader.RevisionTombstoneCount;
    }

    private static JsonElement Dump(PeriodicBackupStatus status)
    {
        using var input = new GZipStream(File.OpenRead(Path.Combine(status.FolderName!, status.FileName!)), CompressionMode.Decompress);
        return JsonDocument.Parse(input).RootElement.Clone();
    }

    private static int RevisionTombstonesIn(JsonElement dump) =>
        dump.GetProperty("Tombstones").EnumerateArray().Count(t => t.GetProperty("Type").GetString() == "Revision");

    /// <summary>Decompresses the file, edits its <c>JackdawBackup</c> header, and compresses it again (the rest as it was).</summary>
    private static void RewriteHeader(string path, Action<JsonObject> edit)
    {
        JsonNode dump;
        using (var input = new GZipStream(File.OpenRead(path), CompressionMode.Decompress))
        {
            dump = JsonNode.Parse(input)!;
        }
        edit(dump["JackdawBackup"]!.AsObject());
        using var output = new GZipStream(File.Create(path), CompressionLevel.Fastest);
        using var writer = new Utf8JsonWriter(output);
        dump.WriteTo(writer);
    }

    /// <summary>The header as a file written before revision positions were recorded.</summary>
    private static void WithoutRevisionEtags(JsonObject header)
    {
        header.Remove("StartRevisionEtag");
        header.Remove("LastRevisionEtag");
    }

    [Fact]
    public async Task AChainRestoresExactlyTheSourcesRevisionsAndAnIncrementalHoldsOnlyThoseWrittenSince()
    {
        await using var server = await StartAsync();
        using var folder = new TempFolder("jackdaw-logical");
        var source = Database(server, "Source");
        await KeepRevisionsAsync(server.Client, 2);
        await WriteAsync(server.Client, Put(0, 20, 1));
        await WriteAsync(server.Client, Put(0, 20, 2));
        var backups = PeriodicBackups.Of(source);
        var taskId = (await backups.UpdateAsync(TaskJson(folder.Path))).TaskId;
        var full = await RunTaskAsync(backups, taskId, full: true);
        var fullDump = Dump(full);
        Assert.Equal(40, fullDump.GetProperty("RevisionDocuments").GetArrayLength());
        Assert.Equal(40, full.LastRevisionEtag);

        // The limit removes the oldest revision of items/0..9 (10 revision tombstones); 15 new revisions.
        await WriteAsync(server.Client, Put(0, 10, 3));
        await WriteAsync(server.Client, Put(20, 5, 1));
        var first = await RunTaskAsync(backups, taskId, full: false);
        Assert.False(first.IsFull);
        var atFirst = Revisions(source);
        Assert.Equal(45, atFirst.Count);
        var firstDump = Dump(first);
        Assert.Equal(15, firstDump.GetProperty("RevisionDocuments").GetArrayLength());
        Assert.Equal(10, RevisionTombstonesIn(firstDump));
        var header = firstDump.GetProperty("JackdawBackup");
        Assert.Equal(full.LastRevisionEtag + 1, header.GetProperty("StartRevisionEtag").GetInt64());
        Assert.Equal(first.LastRevisionEtag, header.GetProperty("LastRevisionEtag").GetInt64());

        // Again: the newest-but-one revisions of items/0..4 go, and revisions made before the
        // previous file are removed now.
        await WriteAsync(server.Client, Put(0, 5, 4));
        var second = await RunTaskAsync(backups, taskId, full: false);
        var secondDump = Dump(second);
        Assert.Equal(5, secondDump.GetProperty("RevisionDocuments").GetArrayLength());
        Assert.Equal(5, RevisionTombstonesIn(secondDump));

        var restored = await RestoreAsync(server, full.FolderName!, "Restored");
        Assert.Equal(3, restored.Files.Count);
        var expected = Revisions(source);
        Assert.Equal(45, expected.Count);
        Assert.Equal(expected, Revisions(Database(server, "Restored")));
        Assert.Equal(Documents(source), Documents(Database(server, "Restored")));

        // Restored up to the first incremental: the source's revisions as they were then.
        await RestoreAsync(server, full.FolderName!, "AtFirst", last: first.FileName);
        Assert.Equal(atFirst, Revisions(Database(server, "AtFirst")));
        Assert.NotEqual(atFirst, expected);
    }

    [Fact]
    public async Task TheCleanerKeepsTheRevisionTombstonesAChainHasNotWrittenAndLetsThemGoOnceItHas()
    {
        await using var server = await StartAsync();
        using var folder = new TempFolder("jackdaw-logical");
        var source = Database(server, "Source");
        await KeepRevisionsAsync(server.Client, 1);
        await WriteAsync(server.Client, Put(0, 5, 1));
        await WriteAsync(server.Client, Put(0, 5, 2));
        // No consumer reads them: they go at the next clean-up.
        Assert.Equal(5, RevisionTombstoneCount(source));
        Assert.Equal(5, await source.Tombstones.CleanAsync());
        Assert.Equal(0, RevisionTombstoneCount(source));

        var backups = PeriodicBackups.Of(source);
        var taskId = (await backups.UpdateAsync(TaskJson(folder.Path))).TaskId;
        var full = await RunTaskAsync(backups, taskId, full: true);
        await WriteAsync(server.Client, Put(0, 5, 3));
        Assert.Equal(5, RevisionTombstoneCount(source));
        Assert.Equal(full.LastRevisionEtag, source.Tombstones.RevisionTombstonesCleanableUpTo());
        Assert.Equal(0, await source.Tombstones.CleanAsync());
        Assert.Equal(5, RevisionTombstoneCount(source));

        var incremental = await RunTaskAsync(backups, taskId, full: false);
        Assert.Equal(5, RevisionTombstonesIn(Dump(incremental)));
        Assert.Equal(5, await source.Tombstones.CleanAsync());
        Assert.Equal(0, RevisionTombstoneCount(source));
    }

    [Fact]
    public async Task ARestoreRefusesAChainWhoseRevisionEtagsHaveAGapAndLeavesNoDatabase()
    {
        await using var server = await StartAsync();
        using var folder = new TempFolder("jackdaw-logical");
        var source = Database(server, "Source");
        await KeepRevisionsAsync(server.Client, 5);
        await WriteAsync(server.Client, Put(0, 10, 1));
        var backups = PeriodicBackups.Of(source);
        var taskId = (await backups.UpdateAsync(TaskJson(folder.Path))).TaskId;
        var full = await RunTaskAsync(backups, taskId, full: true);
        await WriteAsync(server.Client, Put(0, 10, 2));
        var incremental = await RunTaskAsync(backups, taskId, full: false);
        Assert.False(incremental.IsFull);
        // The chain as written restores.
        await RestoreAsync(server, full.FolderName!, "Whole");

        // The incremental's revisions start past the full file's last revision etag: those between
        // are in no file. Its document etags still follow on, so only the revision check can see it.
        var path = Path.Combine(incremental.FolderName!, incremental.FileName!);
        RewriteHeader(path, header => header["StartRevisionEtag"] = full.LastRevisionEtag!.Value + 3);
        Assert.Equal(full.LastEtag + 1, LogicalChain.ReadHeader(path)!.StartEtag);

        var error = await Assert.ThrowsAsync<BackupException>(() => RestoreAsync(server, full.FolderName!, "WithGap"));
        Assert.Contains("broken", error.Message);
        Assert.Contains("revision etag", error.Message);
        Assert.Contains(incremental.FileName!, error.Message);
        Assert.Contains(full.FileName!, error.Message);
        Assert.DoesNotContain("WithGap", server.Host.Server.Databases.Names);
        Assert.Empty(Directory.EnumerateDirectories(server.Host.Server.Databases.Root, "~restore-*"));
        var verify = await Assert.ThrowsAsync<BackupException>(() => DatabaseRestore.VerifyAsync(full.FolderName!, null, new BackupRun(), CancellationToken.None));
        Assert.Contains("revision etag", verify.Message);

        // Up to the full file alone, there is no gap.
        await RestoreAsync(server, full.FolderName!, "FullOnly", last: full.FileName);
    }

    [Fact]
    public async Task AChainWrittenBeforeRevisionEtagsWereRecordedRestoresAndItsNextFileIsFullAndSaysWhy()
    {
        await using var server = await StartAsync();
        using var folder = new TempFolder("jackdaw-logical");
        var source = Database(server, "Source");
        await KeepRevisionsAsync(server.Client, 5);
        await WriteAsync(server.Client, Put(0, 10, 1));
        var backups = PeriodicBackups.Of(source);
        var taskId = (await backups.UpdateAsync(TaskJson(folder.Path))).TaskId;
        var full = await RunTaskAsync(backups, taskId, full: true);
        await WriteAsync(server.Client, Put(0, 10, 2));
        await WriteAsync(server.Client, Put(10, 5, 1));
        var incremental = await RunTaskAsync(backups, taskId, full: false);
        Assert.False(incremental.IsFull);

        // Made old: the files' headers and the task's stored status without revision positions.
        foreach (var file in new[] { full.FileName!, incremental.FileName! })
        {
            RewriteHeader(Path.Combine(full.FolderName!, file), WithoutRevisionEtags);
            Assert.Null(LogicalChain.ReadHeader(Path.Combine(full.FolderName!, file))!.LastRevisionEtag);
        }
        var stored = JsonNode.Parse(incremental.ToJson())!.AsObject();
        Assert.True(stored.Remove("LastRevisionEtag"));
        await source.EnqueueAsync(new JsonRecords.StoreCommand(PeriodicBackups.StatusTree, taskId.ToString(CultureInfo.InvariantCulture), Encoding.UTF8.GetBytes(stored.ToJsonString())));

        // The old chain restores: no revision positions, so no revision check refuses it.
        var old = await RestoreAsync(server, full.FolderName!, "Old");
        Assert.Equal([full.FileName!, incremental.FileName!], old.Files);
        Assert.Equal(Revisions(source), Revisions(Database(server, "Old")));
        Assert.Equal(Documents(source), Documents(Database(server, "Old")));

        // Reopened, the task reads the old status; its next run, asked to be incremental, is full.
        Assert.True(await server.Host.Server.Databases.UnloadAsync("Source"));
        source = Database(server, "Source");
        backups = PeriodicBackups.Of(source);
        Assert.True(backups.TryGet(taskId, out _, out var reopened));
        Assert.Null(reopened.LastRevisionEtag);
        Assert.Equal(incremental.FileName, reopened.FileName);
        await WriteAsync(server.Client, Put(15, 5, 1));
        var next = await RunTaskAsync(backups, taskId, full: false);
        Assert.True(next.IsFull);
        Assert.EndsWith(LogicalChain.FullExtension, next.FileName);
        Assert.Contains("written before the chain's revision etag was recorded", next.Note);
        using (var operation = await server.Client.GetAsync($"/databases/Source/operations/state?id={next.LastOperationId}"))
        {
            var result = (await Api.JsonAsync(operation)).GetProperty("Result");
            Assert.Equal("Full", result.GetProperty("Kind").GetString());
            Assert.Equal(next.Note, result.GetProperty("Note").GetString());
        }
        Assert.NotNull(next.LastRevisionEtag);
        var header = Dump(next).GetProperty("JackdawBackup");
        Assert.Equal(1, header.GetProperty("StartRevisionEtag").GetInt64());
        Assert.Equal(next.LastRevisionEtag, header.GetProperty("LastRevisionEtag").GetInt64());
    }
}
