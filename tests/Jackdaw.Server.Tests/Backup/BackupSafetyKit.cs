using System.Net;
using System.Text.Json;
using Jackdaw.Server.Backup;
using Jackdaw.Server.Databases;
using Jackdaw.Server.Indexing;
using Jackdaw.Server.Tests.Infrastructure;

namespace Jackdaw.Server.Tests.Backup;

/// <summary>
/// What the backup safety tests share: a server with a database "Source" (documents through
/// <see cref="BackupModel"/>, one map index that has committed), waiting for the index to commit
/// files a chain does not hold yet, operations followed over HTTP, and the shape of a chain folder.
/// </summary>
internal static class BackupSafetyKit
{
    public const string Source = "Source";
    public const string IndexName = "Items/ByGroup";

    public static DocumentDatabase Database(InProcessServer server, string name) => server.Host.Server.Databases.GetDatabase(name);

    /// <summary>A server whose database "Source" holds <paramref name="seed"/> documents and an index that committed them.</summary>
    public static async Task<InProcessServer> StartWithSourceAsync(BackupModel model, int seed, Action<Jackdaw.Server.Hosting.ServerOptions>? configure = null)
    {
        var server = await InProcessServer.StartAsync(configure);
        try
        {
            await CreateSourceAsync(server.Client, model, seed);
            await UntilIndexCommittedAsync(server, previous: null);
            return server;
        }
        catch
        {
            await server.DisposeAsync();
            throw;
        }
    }

    /// <summary>Creates "Source" with <paramref name="seed"/> documents and the index, and waits for the index to catch up.</summary>
    public static async Task CreateSourceAsync(HttpClient client, BackupModel model, int seed)
    {
        using (var created = await client.PutAsync($"/admin/databases?name={Source}", null))
        {
            Assert.Equal(HttpStatusCode.Created, created.StatusCode);
        }
        await SeedAsync(client, model, "seed", seed);
        var definition = JsonSerializer.Serialize(new { Indexes = new[] { new { Name = IndexName, Maps = new[] { "map('Items', i => ({ Group: i.Group }))" } } } });
        using (var put = await client.PutAsync($"/databases/{Source}/admin/indexes", Api.Json(definition)))
        {
            Assert.True(put.IsSuccessStatusCode, await put.Content.ReadAsStringAsync());
        }
        await WaitForIndexAsync(client);
    }

    /// <summary>Writes <paramref name="count"/> new documents <c>items/{prefix}-{i}</c> in batches of 1,000.</summary>
    public static async Task SeedAsync(HttpClient client, BackupModel model, string prefix, int count)
    {
        for (var start = 0; start < count; start += 1000)
        {
            await model.WriteAsync(client, Source, Enumerable.Range(start, Math.Min(1000, count - start)).Select(i => ($"items/{prefix}-{i}", (int?)(i % 10))).ToList());
        }
    }

    public static async Task WaitForIndexAsync(HttpClient client)
    {
        var body = JsonSerializer.Serialize(new { Query = $"from index '{IndexName}' where Group = 3", WaitForNonStaleResults = true, WaitForNonStaleResultsTimeout = "00:02:00", PageSize = 0 });
        using var response = await client.PostAsync($"/databases/{Source}/queries", Api.Json(body));
        Assert.True(response.StatusCode == HttpStatusCode.OK, await response.Content.ReadAsStringAsync());
    }

    /// <summary>
    /// Waits until the index's last commit has positions and holds a file that
    /// <paramref name="previous"/> (a chain file's manifest) does not: the next file of the chain then
    /// has an index entry of its own.
    /// </summary>
    public static Task UntilIndexCommittedAsync(InProcessServer server, BackupManifest? previous)
    {
        var index = IndexStore.Of(Database(server, Source)).Indexes.Single();
        return Poll.UntilAsync(() =>
        {
            using var commit = index.CaptureCommit();
            if (commit is null || commit.Positions.Count == 0)
            {
                return Task.FromResult(false);
            }
            if (previous is null)
            {
                return Task.FromResult(true);
            }
            var known = previous.Indexes.SelectMany(i => i.Files).Select(f => (f.Name, f.Length)).ToHashSet();
            return Task.FromResult(commit.Files.Any(f => !known.Contains((f, new FileInfo(Path.Combine(commit.Folder, f)).Length))));
        }, TimeSpan.FromSeconds(90), "the index's commit of new files");
    }

    public static Task<BackupResult> BackupAsync(InProcessServer server, string folder, bool full, bool minimal = false, Func<string, Stream>? createFile = null) =>
        DatabaseBackups.RunAsync(Database(server, Source), new BackupRequest { Folder = folder, Full = full, Minimal = minimal, RetainJournals = true, CreateFile = createFile }, new BackupRun(), CancellationToken.None);

    public static Task<RestoreResult> RestoreAsync(InProcessServer server, string folder, string name, string? last = null) =>
        DatabaseRestore.RestoreAsync(server.Host.Server.Databases, new RestoreRequest { BackupLocation = folder, DatabaseName = name, LastFileNameToRestore = last }, new BackupRun(), CancellationToken.None);

    /// <summary>Polls an operation's state until it ended; returns the last state.</summary>
    public static async Task<JsonElement> EndedAsync(HttpClient client, string stateUrl)
    {
        JsonElement state = default;
        await Poll.UntilAsync(async () =>
        {
            using var response = await client.GetAsync(stateUrl);
            state = await Api.JsonAsync(response);
            Assert.True(response.StatusCode == HttpStatusCode.OK, state.ToString());
            return state.GetProperty("Status").GetString() != "InProgress";
        }, TimeSpan.FromMinutes(2), stateUrl);
        return state;
    }

    /// <summary>Asserts an operation ended Faulted with a <c>BackupException</c> (a 400, no stack trace); returns its message.</summary>
    public static string AssertFaultedWithBackupException(JsonElement state)
    {
        Assert.True(state.GetProperty("Status").GetString() == "Faulted", state.ToString());
        var result = state.GetProperty("Result");
        Assert.True(result.GetProperty("Type").GetString() == "BackupException", result.ToString());
        Assert.Equal(400, result.GetProperty("StatusCode").GetInt32());
        var message = result.GetProperty("Message").GetString()!;
        Assert.DoesNotContain("   at ", message, StringComparison.Ordinal);
        return message;
    }

    /// <summary>The names in a chain folder that are neither a complete backup file nor a leftover <c>*.in-progress</c>.</summary>
    public static List<string> Strangers(string folder) =>
        Directory.EnumerateFileSystemEntries(folder).Select(Path.GetFileName)
            .Where(n => BackupChain.KindOf(n!) is null && !n!.EndsWith(BackupChain.InProgressExtension, StringComparison.Ordinal))
            .Select(n => n!).ToList();

    /// <summary>Copies the files of <paramref name="source"/> named by <paramref name="names"/> into a new folder under <paramref name="parent"/>.</summary>
    public static string CopyFiles(string source, IEnumerable<string> names, string parent)
    {
        var folder = Path.Combine(parent, Guid.NewGuid().ToString("N"));
        Directory.CreateDirectory(folder);
        foreach (var name in names)
        {
            File.Copy(Path.Combine(source, name), Path.Combine(folder, name));
        }
        return folder;
    }

    public static void FlipByte(string path, long offset)
    {
        using var file = new FileStream(path, FileMode.Open, FileAccess.ReadWrite);
        file.Position = offset;
        var value = file.ReadByte();
        Assert.True(value >= 0, $"offset {offset} is past the end of {path}");
        file.Position = offset;
        file.WriteByte((byte)(value ^ 0x5A));
    }
}

/// <summary>
/// A file that fills the disk: it writes through to <c>path</c> until <c>limit</c> bytes, then every
/// write (with <c>failTail</c>, the write of the file's tail, its last; with <c>failFlush</c>, a
/// flush: the error an fsync reports late) throws the <see cref="IOException"/> the OS gives for ENOSPC.
/// </summary>
internal sealed class FullDiskStream(string path, long limit, bool failFlush = false, bool failTail = false, Action? beforeFirstWrite = null) : Stream
{
    private Action? _beforeFirstWrite = beforeFirstWrite;

    private readonly FileStream _file = new(path, FileMode.CreateNew, FileAccess.Write);
    private long _written;

    public static IOException NoSpace(string path) => new($"No space left on device : '{path}'", 28);

    public int Failures { get; private set; }

    public override bool CanRead => false;

    public override bool CanSeek => false;

    public override bool CanWrite => true;

    public override long Length => _written;

    public override long Position
    {
        get => _written;
        set => throw new NotSupportedException();
    }

    public override void Write(byte[] buffer, int offset, int count) => Write(buffer.AsSpan(offset, count));

    public override void Write(ReadOnlySpan<byte> buffer)
    {
        Interlocked.Exchange(ref _beforeFirstWrite, null)?.Invoke();
        if (failTail && buffer.Length == BackupArchive.TailSize && buffer.EndsWith("JDBKTAIL"u8))
        {
            Failures++;
            throw NoSpace(_file.Name);
        }
        var room = (int)Math.Max(0, Math.Min(buffer.Length, limit - _written));
        _file.Write(buffer[..room]);
        _written += room;
        if (room < buffer.Length)
        {
            Failures++;
            throw NoSpace(_file.Name);
        }
    }

    public override void Flush()
    {
        _file.Flush();
        if (failFlush)
        {
            Failures++;
            throw NoSpace(_file.Name);
        }
    }

    protected override void Dispose(bool disposing)
    {
        if (disposing)
        {
            _file.Dispose();
        }
        base.Dispose(disposing);
    }

    public override int Read(byte[] buffer, int offset, int count) => throw new NotSupportedException();

    public override long Seek(long offset, SeekOrigin origin) => throw new NotSupportedException();

    public override void SetLength(long value) => throw new NotSupportedException();
}
