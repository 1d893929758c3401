using System.IO.Compression;
using System.Net.Http;
using System.Text.Json;
using Jackdaw.Server.Backup;
using Jackdaw.Server.Databases;
using Jackdaw.Server.Tests.Infrastructure;

namespace Jackdaw.Server.Tests.Backup;

/// <summary>
/// Revisions in a logical chain: an incremental file holds the revisions written since the previous
/// file and the revisions removed since (revision tombstones), so a restore of the chain has exactly
/// the source's revisions; the task keeps the revision tombstones its next file needs.
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
}
