using System.Net;
using System.Text;
using System.Text.Json;
using Jackdaw.Server.Indexing;
using Jackdaw.Server.Indexing.Lucene;
using Jackdaw.Server.Tests.Infrastructure;
using Lucene.Net.Store;

namespace Jackdaw.Server.Tests.Indexing;

/// <summary>
/// An index whose disk fails (a flush, a commit, an fsync) goes back to its last commit and
/// indexes again from there: when the disk works again it has every document exactly once, and
/// so does the index a restart opens.
/// </summary>
public sealed class IndexFailureTests
{
    private const string Map = "map('Items', i => ({ Group: i.Group }))";

    /// <summary>
    /// A Lucene directory that fails (a full or failing disk) creating a file whose name
    /// <see cref="Fails"/> answers true for, or an fsync (asked with <c>"sync "</c> and the names).
    /// </summary>
    private sealed class FailingDirectory(Lucene.Net.Store.Directory inner) : FilterDirectory(inner)
    {
        private int _failures;

        public Func<string, bool> Fails { get; set; } = static _ => false;

        /// <summary>Whether the files background merges write fail.</summary>
        public bool FailMerges { get; set; }

        public int Failures => Volatile.Read(ref _failures);

        public override IndexOutput CreateOutput(string name, IOContext context)
        {
            if (FailMerges && context.Context == IOContext.UsageContext.MERGE)
            {
                Interlocked.Increment(ref _failures);
                throw new IOException($"injected failure on {name} (a merge)");
            }
            Check(name);
            return base.CreateOutput(name, context);
        }

        public override void Sync(ICollection<string> names)
        {
            Check("sync " + string.Join(' ', names));
            base.Sync(names);
        }

        private void Check(string name)
        {
            if (!Fails(name))
            {
                return;
            }
            Interlocked.Increment(ref _failures);
            throw new IOException($"injected failure on {name}");
        }
    }

    private static bool IsCommitFile(string name) => name.StartsWith("segments_", StringComparison.Ordinal);

    private static bool IsSync(string name) => name.StartsWith("sync ", StringComparison.Ordinal);

    private static Task<InProcessServer> StartAsync(string dataDir, Func<string, bool>? fails, List<FailingDirectory> directories) =>
        InProcessServer.StartAsync(
            o => o.Indexing = new IndexingOptions
            {
                OpenDirectory = folder =>
                {
                    var directory = new FailingDirectory(new PreadDirectory(new DirectoryInfo(folder)));
                    if (fails is not null)
                    {
                        directory.Fails = fails;
                    }
                    lock (directories)
                        directories.Add(directory);
                    return directory;
                },
            },
            "--data-dir", dataDir);

    private static async Task PutBatchAsync(HttpClient client, IEnumerable<(string Id, int? Group)> changes)
    {
        var commands = string.Join(',', changes.Select(c => c.Group is { } g
            ? $"{{\"Type\":\"PUT\",\"Id\":\"{c.Id}\",\"Document\":{{\"Group\":{g},\"@metadata\":{{\"@collection\":\"Items\"}}}}}}"
            : $"{{\"Type\":\"DELETE\",\"Id\":\"{c.Id}\"}}"));
        using var response = await client.PostAsync("/databases/Disk/bulk_docs", new StringContent("{\"Commands\":[" + commands + "]}", Encoding.UTF8, "application/json"));
        Assert.Equal(HttpStatusCode.OK, response.StatusCode);
    }

    private static async Task<JsonElement> QueryAsync(HttpClient client, string rql, bool wait = true)
    {
        var body = JsonSerializer.Serialize(new { Query = rql, WaitForNonStaleResults = wait, WaitForNonStaleResultsTimeout = "00:01:00", PageSize = 100_000 });
        using var response = await client.PostAsync("/databases/Disk/queries", new StringContent(body, Encoding.UTF8, "application/json"));
        var json = await Api.JsonAsync(response);
        Assert.True(response.StatusCode == HttpStatusCode.OK, json.ToString());
        if (wait)
        {
            Assert.False(json.GetProperty("IsStale").GetBoolean(), rql);
        }
        return json;
    }

    private static async Task CreateAsync(HttpClient client)
    {
        using (var created = await client.PutAsync("/admin/databases?name=Disk", null))
        {
            Assert.Equal(HttpStatusCode.Created, created.StatusCode);
        }
        var definition = JsonSerializer.Serialize(new { Indexes = new[] { new { Name = "Items/ByGroup", Maps = new[] { Map } } } });
        using var put = await client.PutAsync("/databases/Disk/admin/indexes", new StringContent(definition, Encoding.UTF8, "application/json"));
        Assert.Equal(HttpStatusCode.Created, put.StatusCode);
    }

    /// <summary>Each group's ids as the index answers them equal the model's, and the index has one entry per document.</summary>
    private static async Task AssertMatchesAsync(HttpClient client, Dictionary<string, int> model)
    {
        for (var group = 0; group < 10; group++)
        {
            var json = await QueryAsync(client, $"from index 'Items/ByGroup' where Group = {group}");
            var ids = json.GetProperty("Results").EnumerateArray().Select(r => r.GetProperty("@metadata").GetProperty("@id").GetString()!).Order(StringComparer.Ordinal).ToList();
            var expected = model.Where(p => p.Value == group).Select(p => p.Key).Order(StringComparer.Ordinal).ToList();
            Assert.True(expected.SequenceEqual(ids), $"group {group}: missing {string.Join(' ', expected.Except(ids).Take(20))}; extra {string.Join(' ', ids.Except(expected).Take(20))} ({expected.Count} expected, {ids.Count} found)");
        }
        using var stats = await client.GetAsync("/databases/Disk/indexes/stats");
        var index = (await Api.JsonAsync(stats)).GetProperty("Results").EnumerateArray().Single(r => r.GetProperty("Name").GetString() == "Items/ByGroup");
        Assert.Equal(model.Count, index.GetProperty("EntriesCount").GetInt64());
    }

    private static Jackdaw.Server.Indexing.Index IndexOf(InProcessServer server) =>
        IndexStore.Of(server.Host.Server.Databases.GetDatabase("Disk")).Get("Items/ByGroup");

    [Fact]
    public async Task ABatchWhoseFlushFailsIsIndexedAgainFromTheLastCommit()
    {
        using var data = new TempFolder();
        var directories = new List<FailingDirectory>();
        // The first two compound files fail: the flush that makes the first batch searchable (its
        // documents added without a delete-by-id, as the index is new), then the same again.
        // Lucene drops a segment whose flush failed, while the positions had moved past it.
        var failuresLeft = 2;
        await using var server = await StartAsync(data.Path, name => name.EndsWith(".cfs", StringComparison.Ordinal) && Interlocked.Decrement(ref failuresLeft) >= 0, directories);
        var model = Enumerable.Range(1, 2_000).ToDictionary(i => $"items/{i}", i => i % 10, StringComparer.Ordinal);
        using (var created = await server.Client.PutAsync("/admin/databases?name=Disk", null))
        {
            Assert.Equal(HttpStatusCode.Created, created.StatusCode);
        }
        await PutBatchAsync(server.Client, model.Select(p => (p.Key, (int?)p.Value)));
        var definition = JsonSerializer.Serialize(new { Indexes = new[] { new { Name = "Items/ByGroup", Maps = new[] { Map } } } });
        using (var put = await server.Client.PutAsync("/databases/Disk/admin/indexes", new StringContent(definition, Encoding.UTF8, "application/json")))
        {
            Assert.Equal(HttpStatusCode.Created, put.StatusCode);
        }

        await AssertMatchesAsync(server.Client, model);
        Assert.Equal(2, directories.Single().Failures);
        Assert.True(IndexOf(server).RollbacksDone >= 1);
        using var errors = await server.Client.GetAsync("/databases/Disk/indexes/errors?name=Items/ByGroup");
        Assert.Contains("injected failure", (await Api.JsonAsync(errors)).ToString(), StringComparison.Ordinal);
    }

    [Fact]
    public async Task AFailedCommitOrFsyncKeepsTheIndexWhole()
    {
        using var data = new TempFolder();
        var directories = new List<FailingDirectory>();
        // Commit attempts (each begins by writing its segments_N file) fail in turn: the first
        // writing that file, the third in the fsync of the segment files, the second and fourth
        // get through (the fsync of segments_N, their last step, passes). The documents of the
        // batches between stay exactly once. (Each failure costs the loop a second.)
        var (attempts, through) = (0, 0);
        var armed = false;
        var model = new Dictionary<string, int>(StringComparer.Ordinal);
        bool Fails(string name)
        {
            if (!Volatile.Read(ref armed))
            {
                return false;
            }
            if (IsCommitFile(name))
            {
                return Interlocked.Increment(ref attempts) % 4 == 1;
            }
            if (name.StartsWith("sync segments_", StringComparison.Ordinal))
            {
                Interlocked.Increment(ref through);
                return false;
            }
            return IsSync(name) && Volatile.Read(ref attempts) % 4 == 3;
        }
        await using (var server = await StartAsync(data.Path, Fails, directories))
        {
            await CreateAsync(server.Client);
            Volatile.Write(ref armed, true);
            for (var round = 0; round < 4; round++)
            {
                var changes = Enumerable.Range(round * 300, 600).Select(i => ($"items/{i}", (int?)((i + round) % 10))).ToList();
                await PutBatchAsync(server.Client, changes);
                foreach (var (id, group) in changes)
                {
                    model[id] = group!.Value;
                }
                await AssertMatchesAsync(server.Client, model);
                // The index commits when it has been idle a moment: that commit is one of the attempts.
                var before = Volatile.Read(ref attempts);
                for (var wait = 0; wait < 200 && Volatile.Read(ref attempts) == before; wait++)
                {
                    await Task.Delay(50);
                }
            }
            // Commits fail and commits get through, the last round's included.
            for (var wait = 0; wait < 600 && Volatile.Read(ref through) < 2; wait++)
            {
                await Task.Delay(50);
            }
            Assert.True(Volatile.Read(ref through) >= 2, $"{through} commits got through of {attempts}");
            Assert.True(directories.Sum(d => d.Failures) >= 2);
            Assert.True(IndexOf(server).RollbacksDone >= 2);
            await AssertMatchesAsync(server.Client, model);
        }
        // The commits that got through open as a whole index: a restart ends with the same.
        await using var again = await StartAsync(data.Path, fails: null, directories);
        await AssertMatchesAsync(again.Client, model);
    }

    [Fact]
    public async Task AFlushThatFailsWhileTheDatabaseClosesIsNotCommitted()
    {
        using var data = new TempFolder();
        var directories = new List<FailingDirectory>();
        Func<bool> closing = () => false;
        var blocked = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        var failed = 0;
        // The first flush (a compound file) waits until the database is closing, then fails:
        // nothing of that batch may be committed on the way out (the positions had moved).
        bool Fails(string name)
        {
            if (!name.EndsWith(".cfs", StringComparison.Ordinal) || Volatile.Read(ref failed) != 0)
            {
                return false;
            }
            blocked.TrySetResult();
            var deadline = DateTime.UtcNow.AddSeconds(30);
            while (!closing() && DateTime.UtcNow < deadline)
            {
                Thread.Sleep(10);
            }
            return Interlocked.Exchange(ref failed, 1) == 0;
        }
        var model = Enumerable.Range(0, 100).ToDictionary(i => $"items/{i}", i => i % 10, StringComparer.Ordinal);
        await using (var server = await StartAsync(data.Path, Fails, directories))
        {
            await CreateAsync(server.Client);
            var database = server.Host.Server.Databases.GetDatabase("Disk");
            closing = () => database.IsClosing;
            await PutBatchAsync(server.Client, model.Select(p => (p.Key, (int?)p.Value)));
            await blocked.Task.WaitAsync(TimeSpan.FromSeconds(30));
        }
        Assert.Equal(1, failed);
        await using var again = await StartAsync(data.Path, fails: null, directories);
        await AssertMatchesAsync(again.Client, model);
    }

    [Fact]
    public async Task FailedBackgroundMergesAreReportedAndLoseNothing()
    {
        using var data = new TempFolder();
        var directories = new List<FailingDirectory>();
        var model = new Dictionary<string, int>(StringComparer.Ordinal);
        await using var server = await StartAsync(data.Path, fails: null, directories);
        await CreateAsync(server.Client);
        directories.Single().FailMerges = true;
        // Each waiting query makes a segment of the batch before it: Lucene's merge policy merges
        // them once there are more than ten, and every merge fails.
        for (var round = 0; round < 14; round++)
        {
            var changes = Enumerable.Range(round * 20, 40).Select(i => ($"items/{i}", (int?)((i + round) % 10))).ToList();
            await PutBatchAsync(server.Client, changes);
            foreach (var (id, group) in changes)
            {
                model[id] = group!.Value;
            }
            await QueryAsync(server.Client, "from index 'Items/ByGroup' where Group = 1");
        }
        for (var wait = 0; wait < 200 && directories.Single().Failures == 0; wait++)
        {
            await Task.Delay(50);
        }
        Assert.True(directories.Single().Failures > 0, "no merge was tried");
        await AssertMatchesAsync(server.Client, model);
        using (var errors = await server.Client.GetAsync("/databases/Disk/indexes/errors?name=Items/ByGroup"))
        {
            var text = (await Api.JsonAsync(errors)).ToString();
            Assert.Contains("\"Merge\"", text, StringComparison.Ordinal);
            Assert.Contains("(a merge)", text, StringComparison.Ordinal);
        }
        // When merges work again, the segments are merged and nothing changed.
        directories.Single().FailMerges = false;
        await PutBatchAsync(server.Client, [("items/0", 3)]);
        model["items/0"] = 3;
        await AssertMatchesAsync(server.Client, model);
    }

    [Fact]
    public async Task AnIndexWhoseFilesCannotBeCreatedIsNotCreated()
    {
        using var data = new TempFolder();
        var directories = new List<FailingDirectory>();
        var failing = true;
        await using var server = await StartAsync(data.Path, _ => Volatile.Read(ref failing), directories);
        using (var created = await server.Client.PutAsync("/admin/databases?name=Disk", null))
        {
            Assert.Equal(HttpStatusCode.Created, created.StatusCode);
        }
        var definition = JsonSerializer.Serialize(new { Indexes = new[] { new { Name = "Items/ByGroup", Maps = new[] { Map } } } });
        using (var put = await server.Client.PutAsync("/databases/Disk/admin/indexes", new StringContent(definition, Encoding.UTF8, "application/json")))
        {
            Assert.Contains("injected failure", await Api.AssertErrorAsync(put, HttpStatusCode.InternalServerError, "InternalServerErrorException"), StringComparison.Ordinal);
        }
        // Nothing of it stays: no definition, no folder; once the disk works it is created.
        using (var list = await server.Client.GetAsync("/databases/Disk/indexes"))
        {
            Assert.Empty((await Api.JsonAsync(list)).GetProperty("Results").EnumerateArray());
        }
        Assert.Empty(System.IO.Directory.GetDirectories(Path.Combine(server.DataDir, "Databases", "Disk", "Indexes")));
        Volatile.Write(ref failing, false);
        using (var put = await server.Client.PutAsync("/databases/Disk/admin/indexes", new StringContent(definition, Encoding.UTF8, "application/json")))
        {
            Assert.Equal(HttpStatusCode.Created, put.StatusCode);
        }
        await AssertMatchesAsync(server.Client, []);
    }

    [Fact]
    public async Task WritesAndQueriesWhileTheDiskFailsAtRandomEndWithEveryDocumentOnce()
    {
        using var data = new TempFolder();
        var directories = new List<FailingDirectory>();
        var random = new Random(2611);
        var failing = true;
        Func<string, bool> fails = _ =>
        {
            lock (random)
                return Volatile.Read(ref failing) && random.NextDouble() < 0.05;
        };
        var model = new Dictionary<string, int>(StringComparer.Ordinal);
        await using (var server = await StartAsync(data.Path, fails, directories))
        {
            await CreateAsync(server.Client);
            var changes = new List<(string Id, int? Group)>();
            for (var round = 0; round < 60; round++)
            {
                changes.Clear();
                for (var i = 0; i < 100; i++)
                {
                    int n, group;
                    lock (random)
                        (n, group) = (random.Next(800), random.Next(12));
                    // Groups 10 and 11 stand for a delete.
                    changes.Add(($"items/{n}", group < 10 ? group : null));
                }
                await PutBatchAsync(server.Client, changes);
                foreach (var (id, group) in changes)
                {
                    if (group is { } g)
                    {
                        model[id] = g;
                    }
                    else
                    {
                        model.Remove(id);
                    }
                }
                // Queries that do not wait read whatever searcher is current, also across a rollback;
                // one check in the middle waits for non-stale results while the disk still fails.
                if (round % 5 == 0)
                {
                    await QueryAsync(server.Client, $"from index 'Items/ByGroup' where Group = {round % 10}", wait: false);
                }
                if (round == 30)
                {
                    await AssertMatchesAsync(server.Client, model);
                }
                await Task.Delay(20);
            }
            Volatile.Write(ref failing, false);
            await AssertMatchesAsync(server.Client, model);
            Assert.True(directories.Sum(d => d.Failures) > 0);
            Assert.True(IndexOf(server).RollbacksDone > 0);
        }
        await using var again = await StartAsync(data.Path, fails: null, directories);
        await AssertMatchesAsync(again.Client, model);
    }
}
