using System.Buffers.Binary;
using System.Net;
using System.Text.Json;
using Jackdaw.Server.Backup;
using Jackdaw.Server.Errors;
using Jackdaw.Server.Tests.Infrastructure;
using static Jackdaw.Server.Tests.Backup.BackupSafetyKit;

namespace Jackdaw.Server.Tests.Backup;

/// <summary>
/// A chain of every kind (snapshot, incremental, minimal incremental), each with a storage entry and
/// index file entries of its own, shared by the tests of <see cref="BackupSafetyTests"/>.
/// </summary>
public sealed class BackupChainFixture : IAsyncLifetime
{
    private readonly TempFolder _folder = new("jackdaw-backup-safety");

    internal BackupModel Model { get; } = new();

    internal InProcessServer Server { get; private set; } = null!;

    public string Folder => Path.Combine(_folder.Path, "chain");

    /// <summary>Scratch space for copies of the chain.</summary>
    public string Scratch => _folder.Path;

    public List<BackupResult> Files { get; } = [];

    public async Task InitializeAsync()
    {
        Server = await StartWithSourceAsync(Model, seed: 1500);
        Files.Add(await BackupAsync(Server, Folder, full: true));
        foreach (var minimal in new[] { false, true })
        {
            // New documents, updates and deletes; the index commits files the chain does not hold.
            var round = Files.Count;
            await SeedAsync(Server.Client, Model, $"r{round}", 700);
            await Model.WriteAsync(Server.Client, Source, Enumerable.Range(0, 200).Select(i => ($"items/seed-{(i * 7) + round}", i % 5 == 0 ? null : (int?)(i % 3))).ToList());
            await WaitForIndexAsync(Server.Client);
            using (var last = BackupArchiveReader.Open(Files[^1].FilePath))
            {
                await UntilIndexCommittedAsync(Server, last.Manifest);
            }
            Files.Add(await BackupAsync(Server, Folder, full: false, minimal));
        }
        Assert.Equal([BackupKind.Full, BackupKind.Incremental, BackupKind.MinimalIncremental], Files.Select(f => f.Kind));
    }

    public async Task DisposeAsync()
    {
        await Server.DisposeAsync();
        _folder.Dispose();
    }
}

/// <summary>
/// Damaged chains. A byte flipped in any part of any kind of file (the header, the storage entry's
/// blocks, an index file's blocks, the manifest, the tail) is found: restore, in-process and over
/// HTTP, refuses with a <see cref="BackupException"/> naming the file, creates no database and
/// leaves no <c>~restore-*</c> folder; verify says the same. Leftovers, misnamed files and several
/// snapshots in one folder are read as the chain's rules say.
/// </summary>
public sealed class BackupSafetyTests(BackupChainFixture chain) : IClassFixture<BackupChainFixture>
{
    private InProcessServer Server => chain.Server;

    /// <summary>The places of a backup file to damage, each named, read from its own manifest and tail.</summary>
    private static List<(string Part, long Offset)> PartsOf(string path)
    {
        var parts = new List<(string, long)>
        {
            ("the header's magic", 3),
            ("the header's format version", 8),
            ("the header's reserved bytes", 13),
        };
        using var reader = BackupArchiveReader.Open(path);
        var bytes = File.ReadAllBytes(path);
        void Entry(string what, BackupEntry entry)
        {
            var firstStored = BinaryPrimitives.ReadInt32LittleEndian(bytes.AsSpan((int)entry.Offset + 4));
            var end = entry.Offset + entry.StoredLength;
            parts.Add(($"{what}: its first block's length", entry.Offset + 1));
            parts.Add(($"{what}: its first block's checksum", entry.Offset + 9));
            parts.Add(($"{what}: its first block's content", entry.Offset + BackupArchive.BlockHeaderSize + (firstStored / 2)));
            parts.Add(($"{what}: the last byte of its last block", end - BackupArchive.BlockHeaderSize - 1));
            parts.Add(($"{what}: its end block's length", end - BackupArchive.BlockHeaderSize));
            parts.Add(($"{what}: its end block's checksum", end - 3));
        }
        Entry("the storage entry", reader.Manifest.Entries.Single(e => e.Name == DatabaseBackups.StorageEntry));
        var index = reader.Manifest.Entries.Where(e => e.Name.StartsWith("indexes/", StringComparison.Ordinal)).MaxBy(e => e.Length);
        Assert.True(index is not null, $"{reader.FileName} holds no index file");
        Entry($"index entry '{index.Name}'", index);
        var length = bytes.LongLength;
        var manifest = BinaryPrimitives.ReadInt64LittleEndian(bytes.AsSpan((int)length - BackupArchive.TailSize));
        parts.Add(("the manifest's first byte", manifest));
        parts.Add(("the manifest's middle", manifest + ((length - BackupArchive.TailSize - manifest) / 2)));
        parts.Add(("the tail's manifest offset", length - 32));
        parts.Add(("the tail's manifest length", length - 24));
        parts.Add(("the tail's manifest checksum", length - 16));
        parts.Add(("the tail's magic", length - 2));
        return parts;
    }

    [Theory]
    [InlineData(BackupKind.Full)]
    [InlineData(BackupKind.Incremental)]
    [InlineData(BackupKind.MinimalIncremental)]
    public async Task AByteFlippedAnywhereInAFileIsFoundAndNothingIsRestored(BackupKind kind)
    {
        var at = chain.Files.FindIndex(f => f.Kind == kind);
        var target = chain.Files[at];
        var names = chain.Files.Take(at + 1).Select(f => f.FileName).ToList();
        var landlord = Server.Host.Server.Databases;

        // Undamaged, the same files restore to the state at the target's etag: the damage is what fails.
        var control = CopyFiles(chain.Folder, names, chain.Scratch);
        var restored = await RestoreAsync(Server, control, $"Control-{kind}");
        Assert.Equal(names, restored.Files);
        chain.Model.AssertRestored(target.Etag, DatabaseState.Read(Database(Server, Source)), DatabaseState.Read(Database(Server, $"Control-{kind}")));

        var missed = new List<string>();
        foreach (var (part, offset) in PartsOf(target.FilePath))
        {
            var folder = CopyFiles(chain.Folder, names, chain.Scratch);
            FlipByte(Path.Combine(folder, target.FileName), offset);
            var name = $"Broken-{kind}";

            var failures = new List<string>();
            try
            {
                await RestoreAsync(Server, folder, name);
                failures.Add("restore succeeded");
            }
            catch (BackupException e)
            {
                if (!e.Message.Contains(target.FileName, StringComparison.Ordinal))
                {
                    failures.Add($"restore's error does not name the file: {e.Message}");
                }
            }
            try
            {
                await DatabaseRestore.VerifyAsync(folder, null, new BackupRun(), CancellationToken.None);
                failures.Add("verify succeeded");
            }
            catch (BackupException e)
            {
                if (!e.Message.Contains(target.FileName, StringComparison.Ordinal))
                {
                    failures.Add($"verify's error does not name the file: {e.Message}");
                }
            }
            if (failures.Count > 0)
            {
                missed.Add($"{part} (offset {offset}): {string.Join("; ", failures)}");
                if (landlord.Names.Contains(name, StringComparer.OrdinalIgnoreCase))
                {
                    await landlord.TryDeleteAsync(name);
                }
                continue;
            }

            // Over HTTP the same: the restore's and verification's operations end Faulted, naming the file.
            using (var response = await Server.Client.PostAsync("/admin/restore/database", Api.Json(JsonSerializer.Serialize(new { DatabaseName = name, BackupLocation = folder }))))
            {
                var body = await Api.JsonAsync(response);
                Assert.True(response.StatusCode == HttpStatusCode.OK, body.ToString());
                var message = AssertFaultedWithBackupException(await EndedAsync(Server.Client, $"/operations/state?id={body.GetProperty("OperationId").GetInt64()}"));
                Assert.Contains(target.FileName, message, StringComparison.Ordinal);
            }
            using (var response = await Server.Client.PostAsync($"/admin/backup/verify?path={Uri.EscapeDataString(folder)}", null))
            {
                var body = await Api.JsonAsync(response);
                Assert.True(response.StatusCode == HttpStatusCode.OK, body.ToString());
                var message = AssertFaultedWithBackupException(await EndedAsync(Server.Client, $"/operations/state?id={body.GetProperty("OperationId").GetInt64()}"));
                Assert.Contains(target.FileName, message, StringComparison.Ordinal);
            }
            Assert.DoesNotContain(name, landlord.Names, StringComparer.OrdinalIgnoreCase);
            using (var missing = await Server.Client.GetAsync($"/databases/{name}/stats"))
            {
                Assert.NotEqual(HttpStatusCode.OK, missing.StatusCode);
            }
            Assert.Empty(Directory.GetDirectories(landlord.Root, "~restore-*"));
            Directory.Delete(folder, recursive: true);
        }
        Assert.True(missed.Count == 0, $"damage in {target.FileName} ({kind}) that was not refused:\n{string.Join("\n", missed)}");
    }

    [Fact]
    public async Task VerifyChecksEveryEntryEvenThoseARestoreDoesNotRead()
    {
        // The snapshot's segments_N: later commits have their own, so a restore of the whole chain
        // never reads it; verify must.
        var snapshot = chain.Files[0];
        HashSet<(string, string)> used;
        using (var last = BackupArchiveReader.Open(chain.Files[^1].FilePath))
        {
            used = last.Manifest.Indexes.SelectMany(i => i.Files.Select(f => (f.In, DatabaseBackups.IndexEntry(i.Folder, f.Name)))).ToHashSet();
        }
        BackupEntry unused;
        using (var first = BackupArchiveReader.Open(snapshot.FilePath))
        {
            unused = first.Manifest.Entries.First(e => e.Name.StartsWith("indexes/", StringComparison.Ordinal) && !used.Contains((snapshot.FileName, e.Name)));
        }
        var folder = CopyFiles(chain.Folder, chain.Files.Select(f => f.FileName), chain.Scratch);
        FlipByte(Path.Combine(folder, snapshot.FileName), unused.Offset + BackupArchive.BlockHeaderSize + 1);

        var error = await Assert.ThrowsAsync<BackupException>(() => DatabaseRestore.VerifyAsync(folder, null, new BackupRun(), CancellationToken.None));
        Assert.Contains(snapshot.FileName, error.Message, StringComparison.Ordinal);
        Assert.Contains(unused.Name, error.Message, StringComparison.Ordinal);
        // A restore reads what it applies: the damaged entry is not among it.
        var restored = await RestoreAsync(Server, folder, "UnusedDamaged");
        Assert.Equal(chain.Files.Count, restored.Files.Count);
        chain.Model.AssertRestored(chain.Files[^1].Etag, DatabaseState.Read(Database(Server, Source)), DatabaseState.Read(Database(Server, "UnusedDamaged")));
    }

    [Fact]
    public async Task ALeftoverInTheMiddleOfAChainIsNoPartOfItAndTheNextBackupDeletesIt()
    {
        var folder = CopyFiles(chain.Folder, chain.Files.Select(f => f.FileName), chain.Scratch);
        // What a run that died between the first two files left: half of a file, under its temporary name.
        var leftover = BackupChain.NextName(chain.Files[0].FileName, BackupKind.Incremental, DateTime.MinValue) + BackupChain.InProgressExtension;
        Assert.True(string.CompareOrdinal(leftover, chain.Files[1].FileName) < 0);
        var half = File.ReadAllBytes(chain.Files[1].FilePath);
        File.WriteAllBytes(Path.Combine(folder, leftover), half.AsSpan(0, half.Length / 2).ToArray());

        var restored = await RestoreAsync(Server, folder, "WithLeftover");
        Assert.Equal(chain.Files.Select(f => f.FileName), restored.Files);
        var verified = await DatabaseRestore.VerifyAsync(folder, null, new BackupRun(), CancellationToken.None);
        Assert.Equal(chain.Files.Select(f => f.FileName), verified.Files);
        var named = await Assert.ThrowsAsync<BackupException>(() => RestoreAsync(Server, folder, "NamedLeftover", last: leftover));
        Assert.Contains(leftover, named.Message, StringComparison.Ordinal);

        // The next backup into the folder continues the chain and deletes the leftover.
        await chain.Model.WriteAsync(Server.Client, Source, [("items/after-leftover", 1)]);
        var next = await BackupAsync(Server, folder, full: false);
        Assert.Equal(BackupKind.Incremental, next.Kind);
        Assert.False(File.Exists(Path.Combine(folder, leftover)));
        Assert.Empty(Strangers(folder));
        var all = await RestoreAsync(Server, folder, "AfterLeftover");
        Assert.Equal(chain.Files.Count + 1, all.Files.Count);
        chain.Model.AssertRestored(next.Etag, DatabaseState.Read(Database(Server, Source)), DatabaseState.Read(Database(Server, "AfterLeftover")));
    }

    [Fact]
    public async Task AFileNamedAsAnotherKindIsRefusedNamingIt()
    {
        var names = chain.Files.Select(f => f.FileName).ToList();
        string Renamed(int at, string extension, out string folder)
        {
            folder = CopyFiles(chain.Folder, names, chain.Scratch);
            var name = Path.GetFileNameWithoutExtension(names[at]) + extension;
            File.Move(Path.Combine(folder, names[at]), Path.Combine(folder, name));
            return name;
        }

        // An incremental named as a minimal one, a minimal one named as an incremental, an incremental named as a snapshot.
        foreach (var (at, extension) in new[] { (1, BackupChain.MinimalIncrementalExtension), (2, BackupChain.IncrementalExtension), (1, BackupChain.SnapshotExtension) })
        {
            var name = Renamed(at, extension, out var folder);
            var error = await Assert.ThrowsAsync<BackupException>(() => RestoreAsync(Server, folder, "Misnamed"));
            Assert.Contains(name, error.Message, StringComparison.Ordinal);
            Assert.Contains("named as another kind", error.Message, StringComparison.Ordinal);
            var verify = await Assert.ThrowsAsync<BackupException>(() => DatabaseRestore.VerifyAsync(folder, null, new BackupRun(), CancellationToken.None));
            Assert.Contains(name, verify.Message, StringComparison.Ordinal);
        }

        // The snapshot named as an incremental: the folder holds no snapshot (over HTTP, refused by the request).
        var renamed = Renamed(0, BackupChain.IncrementalExtension, out var headless);
        var none = await Assert.ThrowsAsync<BackupException>(() => RestoreAsync(Server, headless, "Misnamed"));
        Assert.Contains("no snapshot", none.Message, StringComparison.Ordinal);
        using (var response = await Server.Client.PostAsync("/admin/restore/database", Api.Json(JsonSerializer.Serialize(new { DatabaseName = "Misnamed", BackupLocation = headless }))))
        {
            Assert.Contains(headless, await Api.AssertErrorAsync(response, HttpStatusCode.BadRequest, "BackupException"), StringComparison.Ordinal);
        }
        Assert.True(File.Exists(Path.Combine(headless, renamed)));

        // Something that is no backup at all, named as one at the end of the chain.
        var stranger = BackupChain.NextName(names[^1], BackupKind.Incremental, DateTime.MinValue);
        var folderWithStranger = CopyFiles(chain.Folder, names, chain.Scratch);
        File.WriteAllText(Path.Combine(folderWithStranger, stranger), "not a backup");
        var junk = await Assert.ThrowsAsync<BackupException>(() => RestoreAsync(Server, folderWithStranger, "Misnamed"));
        Assert.Contains(stranger, junk.Message, StringComparison.Ordinal);
        // Up to the last real file, the chain restores.
        var upTo = await RestoreAsync(Server, folderWithStranger, "BeforeStranger", last: names[^1]);
        Assert.Equal(names, upTo.Files);

        Assert.DoesNotContain("Misnamed", Server.Host.Server.Databases.Names, StringComparer.OrdinalIgnoreCase);
        Assert.Empty(Directory.GetDirectories(Server.Host.Server.Databases.Root, "~restore-*"));
    }

    [Fact]
    public async Task WithTwoSnapshotsInAFolderARestoreStartsAtTheLastOneAtOrBeforeItsLastFile()
    {
        using var temp = new TempFolder("jackdaw-two-snapshots");
        var files = new List<BackupResult>();
        foreach (var full in new[] { true, false, true, false })
        {
            await chain.Model.WriteAsync(Server.Client, Source, [($"items/two-{files.Count}", files.Count)]);
            files.Add(await BackupAsync(Server, temp.Path, full));
        }
        Assert.Equal([BackupKind.Full, BackupKind.Incremental, BackupKind.Full, BackupKind.Incremental], files.Select(f => f.Kind));
        var source = DatabaseState.Read(Database(Server, Source));

        async Task RestoresAsync(string? last, int[] expected, string name)
        {
            var restored = await RestoreAsync(Server, temp.Path, name, last);
            Assert.Equal(expected.Select(i => files[i].FileName), restored.Files);
            var etag = files[expected[^1]].Etag;
            Assert.Equal(etag, restored.Etag);
            chain.Model.AssertRestored(etag, source, DatabaseState.Read(Database(Server, name)));
            var verified = await DatabaseRestore.VerifyAsync(temp.Path, last, new BackupRun(), CancellationToken.None);
            Assert.Equal(restored.Files, verified.Files);
        }

        await RestoresAsync(null, [2, 3], "TwoLast");
        await RestoresAsync(files[1].FileName, [0, 1], "TwoFirstChain");
        // LastFileNameToRestore naming a snapshot: that snapshot alone.
        await RestoresAsync(files[2].FileName, [2], "TwoSecondSnapshot");
        await RestoresAsync(files[0].FileName, [0], "TwoFirstSnapshot");

        // Over HTTP too.
        using var response = await Server.Client.PostAsync("/admin/restore/database", Api.Json(JsonSerializer.Serialize(new { DatabaseName = "TwoOverHttp", BackupLocation = temp.Path, LastFileNameToRestore = files[0].FileName })));
        var body = await Api.JsonAsync(response);
        var state = await EndedAsync(Server.Client, $"/operations/state?id={body.GetProperty("OperationId").GetInt64()}");
        Assert.True(state.GetProperty("Status").GetString() == "Completed", state.ToString());
        chain.Model.AssertRestored(files[0].Etag, source, DatabaseState.Read(Database(Server, "TwoOverHttp")));
    }

    [Fact]
    public async Task TwoBackupsIntoOneFolderTakeTurnsAndNeitherTakesTheOthersFileForALeftover()
    {
        using var temp = new TempFolder("jackdaw-two-at-once");
        using var started = new ManualResetEventSlim();
        using var go = new ManualResetEventSlim();
        // The first backup stops at its first write, its .in-progress file made; the second runs whole meanwhile.
        var first = BackupAsync(Server, temp.Path, full: true, createFile: path => new FullDiskStream(path, long.MaxValue, beforeFirstWrite: () =>
        {
            started.Set();
            go.Wait(TimeSpan.FromSeconds(60));
        }));
        Assert.True(started.Wait(TimeSpan.FromSeconds(60)), "the first backup did not start writing");
        // What a periodic run does in the task's other chain folders: the file being written is no leftover.
        Assert.Equal(0, BackupChain.DeleteLeftovers(temp.Path));
        Assert.Single(Directory.GetFiles(temp.Path, "*" + BackupChain.InProgressExtension));
        // The second waits for the first (one run per folder at a time), then goes on.
        var pending = BackupAsync(Server, temp.Path, full: true);
        await Task.Delay(200);
        Assert.False(pending.IsCompleted);
        go.Set();
        var firstResult = await first;
        var second = await pending;
        Assert.Equal([firstResult.FileName, second.FileName], BackupChain.Files(temp.Path).Select(Path.GetFileName));
        Assert.Empty(Directory.GetFiles(temp.Path, "*" + BackupChain.InProgressExtension));
        var restored = await RestoreAsync(Server, temp.Path, "TwoAtOnce", last: firstResult.FileName);
        Assert.Equal([firstResult.FileName], restored.Files);
    }

    [Fact]
    public async Task TwoIncrementalsIntoOneFolderAtOnceMakeAChainThatRestores()
    {
        using var temp = new TempFolder("jackdaw-two-incrementals");
        await BackupAsync(Server, temp.Path, full: true);
        await chain.Model.WriteAsync(Server.Client, Source, [("items/two-incrementals-1", 1)]);
        using var started = new ManualResetEventSlim();
        using var go = new ManualResetEventSlim();
        var first = BackupAsync(Server, temp.Path, full: false, createFile: path => new FullDiskStream(path, long.MaxValue, beforeFirstWrite: () =>
        {
            started.Set();
            go.Wait(TimeSpan.FromSeconds(60));
        }));
        Assert.True(started.Wait(TimeSpan.FromSeconds(60)), "the first backup did not start writing");
        var second = BackupAsync(Server, temp.Path, full: false);
        await Task.Delay(200);
        await chain.Model.WriteAsync(Server.Client, Source, [("items/two-incrementals-2", 2)]);
        go.Set();
        var results = await Task.WhenAll(first, second);
        Assert.All(results, r => Assert.Equal(BackupKind.Incremental, r.Kind));
        var restored = await RestoreAsync(Server, temp.Path, "TwoIncrementals");
        Assert.Equal(3, restored.Files.Count);
        chain.Model.AssertRestored(results.Max(r => r.Etag), DatabaseState.Read(Database(Server, Source)), DatabaseState.Read(Database(Server, "TwoIncrementals")));
    }
}
