using System.Net;
using System.Text;
using System.Text.Json;
using Jackdaw.Server.Tests.Infrastructure;

namespace Jackdaw.Server.Tests.Indexing;

/// <summary>
/// A changed definition builds beside the index as <c>ReplacementOf/{Name}</c> while the index keeps
/// answering, and is swapped in once caught up; through pauses, unloads, clean restarts and kill -9.
/// Version 1 of the test index gives <c>Total = N</c>, version 2 <c>Total = N + 1,000,000</c>, so a
/// query tells which one answered.
/// </summary>
public sealed class SideBySideTests
{
    private static readonly TimeSpan StartTimeout = TimeSpan.FromSeconds(60);

    /// <summary>
    /// How long a test waits for a build or a swap. A replacement that yields to writes builds at a
    /// quarter of a core, so on a busy machine the 60,000 documents of the yield test take a minute
    /// and more; a wait ends as soon as its condition holds, so this only bounds a hang.
    /// </summary>
    private static readonly TimeSpan Patience = TimeSpan.FromMinutes(3);

    /// <summary>For the clients of server processes: longer than <see cref="Patience"/>, so that the server's own answer to a wait comes first.</summary>
    private static readonly TimeSpan RequestTimeout = Patience + TimeSpan.FromMinutes(1);
    private const string V1 = "map('Items', i => ({ Total: i.N }))";
    private const string V2 = "map('Items', i => ({ Total: i.N + 1000000 }))";
    private const string V3 = "map('Items', i => ({ Total: i.N + 2000000 }))";

    private static StringContent Json(string json) => new(json, Encoding.UTF8, "application/json");

    private static string Definition(string map, string fields = "{}") =>
        JsonSerializer.Serialize(new { Indexes = new[] { new { Name = "Items/Totals", Maps = new[] { map }, Fields = JsonDocument.Parse(fields).RootElement } } });

    private static async Task SeedAsync(HttpClient client, string db, int count)
    {
        using (await client.PutAsync($"/admin/databases?name={db}", null))
        {
        }
        for (var start = 0; start < count; start += 2000)
        {
            var commands = string.Join(',', Enumerable.Range(start, Math.Min(2000, count - start)).Select(i =>
                $"{{\"Type\":\"PUT\",\"Id\":\"items/{i}\",\"Document\":{{\"N\":{i},\"@metadata\":{{\"@collection\":\"Items\"}}}}}}"));
            using var response = await client.PostAsync($"/databases/{db}/bulk_docs", Json("{\"Commands\":[" + commands + "]}"));
            Assert.Equal(HttpStatusCode.OK, response.StatusCode);
        }
    }

    private static async Task PutIndexAsync(HttpClient client, string db, string map, HttpStatusCode expected = HttpStatusCode.Created)
    {
        using var response = await client.PutAsync($"/databases/{db}/admin/indexes", Json(Definition(map, """{"Total":{"Storage":"Yes"}}""")));
        Assert.True(expected == response.StatusCode, await response.Content.ReadAsStringAsync());
    }

    private static async Task<JsonElement> QueryAsync(HttpClient client, string db, string rql, bool wait)
    {
        var body = JsonSerializer.Serialize(new { Query = rql, WaitForNonStaleResults = wait, WaitForNonStaleResultsTimeout = Patience.ToString("c") });
        using var response = await client.PostAsync($"/databases/{db}/queries", Json(body));
        var json = await Api.JsonAsync(response);
        Assert.True(response.StatusCode == HttpStatusCode.OK, json.ToString());
        return json;
    }

    /// <summary>
    /// Which version answered: 1, 2 or 3, from the largest Total, in one query (two queries could
    /// straddle a swap and see one version each).
    /// </summary>
    private static async Task<int> VersionAsync(HttpClient client, string db, bool wait = false) =>
        1 + (int)(await MaxTotalAsync(client, db, wait) / 1_000_000);

    private static async Task<double> MaxTotalAsync(HttpClient client, string db, bool wait)
    {
        var answer = await QueryAsync(client, db, "from index 'Items/Totals' where Total >= 0 order by Total as double desc select Total limit 1", wait);
        return answer.GetProperty("Results")[0].GetProperty("Total").GetDouble();
    }

    private static async Task<List<string>> IndexNamesAsync(HttpClient client, string db)
    {
        using var response = await client.GetAsync($"/databases/{db}/indexes/stats");
        return (await Api.JsonAsync(response)).GetProperty("Results").EnumerateArray().Select(r => r.GetProperty("Name").GetString()!).ToList();
    }

    private static async Task WaitUntilAsync(Func<Task<bool>> condition, string what)
    {
        var deadline = DateTime.UtcNow + Patience;
        while (!await condition())
        {
            Assert.True(DateTime.UtcNow < deadline, $"Timed out after {Patience} waiting until {what}");
            await Task.Delay(100);
        }
    }

    private static string IndexesFolder(string dataDir, string db) => Path.Combine(dataDir, "Databases", db, "Indexes");

    [Fact]
    public async Task AChangedDefinitionBuildsBesideAndSwapsInWhenCaughtUp()
    {
        await using var server = await InProcessServer.StartAsync();
        var client = server.Client;
        await SeedAsync(client, "Side", 3000);
        await PutIndexAsync(client, "Side", V1);
        Assert.Equal(1, await VersionAsync(client, "Side", wait: true));

        // Paused, the replacement waits beside the index, which keeps answering.
        using (await client.PostAsync("/databases/Side/admin/indexes/stop", null))
        {
        }
        await PutIndexAsync(client, "Side", V2);
        Assert.Equal(["Items/Totals", "ReplacementOf/Items/Totals"], (await IndexNamesAsync(client, "Side")).Order());
        using (var stats = await client.GetAsync("/databases/Side/indexes/stats?name=ReplacementOf/Items/Totals"))
        {
            var replacement = (await Api.JsonAsync(stats)).GetProperty("Results")[0];
            Assert.Equal("Items/Totals", replacement.GetProperty("ReplacementOf").GetString());
            Assert.Equal("Paused", replacement.GetProperty("Status").GetString());
            Assert.Equal(3000, replacement.GetProperty("Progress").GetProperty("TotalDocuments").GetInt64());
            Assert.Equal(0, replacement.GetProperty("Progress").GetProperty("ProcessedDocuments").GetInt64());
        }
        Assert.Equal(1, await VersionAsync(client, "Side"));
        // The same definition again changes nothing; a third one replaces the replacement.
        await PutIndexAsync(client, "Side", "  " + V2 + "\n");
        await PutIndexAsync(client, "Side", V3);
        Assert.Equal(2, (await IndexNamesAsync(client, "Side")).Count);
        // The dropped replacement's files are gone: the index's folder and the new replacement's remain.
        Assert.Equal(2, Directory.GetDirectories(IndexesFolder(server.DataDir, "Side")).Length);

        using (await client.PostAsync("/databases/Side/admin/indexes/start", null))
        {
        }
        await WaitUntilAsync(async () => (await IndexNamesAsync(client, "Side")).Count == 1, "the replacement was swapped in");
        Assert.Equal(3, await VersionAsync(client, "Side", wait: true));
        Assert.Equal(3000, (await QueryAsync(client, "Side", "from index 'Items/Totals' where Total >= 0 limit 0", true)).GetProperty("TotalResults").GetInt64());
        using (var definitions = await client.GetAsync("/databases/Side/indexes?name=Items/Totals"))
        {
            Assert.Equal(V3, (await Api.JsonAsync(definitions)).GetProperty("Results")[0].GetProperty("Maps")[0].GetString());
        }
        await WaitUntilAsync(() => Task.FromResult(Directory.GetDirectories(IndexesFolder(server.DataDir, "Side")).Length == 1), "the old index's files were deleted");

        // Back to the running definition: nothing to build.
        await PutIndexAsync(client, "Side", V3);
        Assert.Single(await IndexNamesAsync(client, "Side"));
    }

    [Fact]
    public async Task AReplacementYieldsToWritesInShortBatchesAndIsMergedBeforeItsSwap()
    {
        await using var server = await InProcessServer.StartAsync();
        var client = server.Client;
        await SeedAsync(client, "Yield", 60_000);
        await PutIndexAsync(client, "Yield", V1);
        Assert.Equal(1, await VersionAsync(client, "Yield", wait: true));

        // Writes stream in (other documents) while the changed definition builds.
        using var stop = new CancellationTokenSource();
        var writer = Task.Run(async () =>
        {
            for (var i = 0; !stop.IsCancellationRequested; i++)
            {
                using var put = await client.PutAsync($"/databases/Yield/docs?id=others/{i}", Json("""{"@metadata":{"@collection":"Others"}}"""));
                Assert.Equal(HttpStatusCode.Created, put.StatusCode);
            }
        });
        await PutIndexAsync(client, "Yield", V2);
        await WaitUntilAsync(async () => (await IndexNamesAsync(client, "Yield")).Count == 1, "the replacement was swapped in");
        await stop.CancelAsync();
        await writer;
        Assert.Equal(2, await VersionAsync(client, "Yield", wait: true));

        // It built in short batches (one 2 s batch takes these 60,000 documents when nothing else
        // runs), and was merged down to a few segments before the swap.
        using (var performance = await client.GetAsync("/databases/Yield/indexes/performance?name=Items/Totals"))
        {
            var batches = (await Api.JsonAsync(performance)).GetProperty("Results")[0].GetProperty("Performance").EnumerateArray().ToList();
            Assert.True(batches.Count(b => b.GetProperty("InputCount").GetInt64() > 0) >= 3, $"the replacement ran {batches.Count} batches: {string.Join(" ", batches.Select(b => b.GetProperty("InputCount").GetInt64() + "/" + b.GetProperty("DurationInMs")))}");
        }
        using var stats = await client.GetAsync("/databases/Yield/indexes/stats?name=Items/Totals");
        Assert.InRange((await Api.JsonAsync(stats)).GetProperty("Results")[0].GetProperty("SegmentsCount").GetInt32(), 1, Jackdaw.Server.Indexing.Index.SegmentsAfterBuild);
    }

    [Fact]
    public async Task LockModesAndTheForcedSwap()
    {
        await using var server = await InProcessServer.StartAsync();
        var client = server.Client;
        await SeedAsync(client, "Locks", 500);
        await PutIndexAsync(client, "Locks", V1);
        Assert.Equal(1, await VersionAsync(client, "Locks", wait: true));

        using (var setLock = await client.PostAsync("/databases/Locks/indexes/set-lock", Json("""{"IndexNames":["Items/Totals"],"Mode":"LockedIgnore"}""")))
        {
            Assert.Equal(HttpStatusCode.NoContent, setLock.StatusCode);
        }
        await PutIndexAsync(client, "Locks", V2);
        Assert.Single(await IndexNamesAsync(client, "Locks"));

        using (var setLock = await client.PostAsync("/databases/Locks/indexes/set-lock", Json("""{"IndexNames":["Items/Totals"],"Mode":"LockedError"}""")))
        {
            Assert.Equal(HttpStatusCode.NoContent, setLock.StatusCode);
        }
        using (var refused = await client.PutAsync("/databases/Locks/admin/indexes", Json(Definition(V2))))
        {
            Assert.Contains("Items/Totals", await Api.AssertErrorAsync(refused, HttpStatusCode.Conflict, "IndexLockedException"), StringComparison.Ordinal);
        }
        using (var bad = await client.PostAsync("/databases/Locks/indexes/set-lock", Json("""{"IndexNames":["Items/Totals"],"Mode":"Sealed"}""")))
        {
            await Api.AssertErrorAsync(bad, HttpStatusCode.BadRequest, "BadRequestException");
        }

        using (await client.PostAsync("/databases/Locks/indexes/set-lock", Json("""{"IndexNames":["Items/Totals"],"Mode":"Unlock"}""")))
        {
        }
        using (await client.PostAsync("/databases/Locks/indexes/stop", null))
        {
        }
        await PutIndexAsync(client, "Locks", V2);
        // Forced: the replacement is swapped in at once, stale.
        using (var replace = await client.PostAsync("/databases/Locks/indexes/replace?name=Items/Totals", null))
        {
            Assert.Equal(HttpStatusCode.NoContent, replace.StatusCode);
        }
        Assert.Equal(["Items/Totals"], await IndexNamesAsync(client, "Locks"));
        using (var none = await client.PostAsync("/databases/Locks/indexes/replace?name=Items/Totals", null))
        {
            await Api.AssertErrorAsync(none, HttpStatusCode.NotFound, "IndexDoesNotExistException");
        }
        using (await client.PostAsync("/databases/Locks/indexes/start", null))
        {
        }
        Assert.Equal(2, await VersionAsync(client, "Locks", wait: true));

        // The lock mode and priority survive the swap; disabled is persisted.
        using (await client.PostAsync("/databases/Locks/indexes/set-priority", Json("""{"IndexNames":["Items/Totals"],"Priority":"High"}""")))
        {
        }
        using (var disable = await client.PostAsync("/databases/Locks/admin/indexes/disable?name=Items/Totals", null))
        {
            Assert.Equal(HttpStatusCode.NoContent, disable.StatusCode);
        }
        await server.Host.Server.Databases.UnloadAsync("Locks");
        using (var stats = await client.GetAsync("/databases/Locks/indexes/stats?name=Items/Totals"))
        {
            var entry = (await Api.JsonAsync(stats)).GetProperty("Results")[0];
            Assert.Equal("Disabled", entry.GetProperty("State").GetString());
            Assert.Equal("High", entry.GetProperty("Priority").GetString());
        }
        using (await client.PutAsync("/databases/Locks/docs?id=items/new", Json("""{"N":5,"@metadata":{"@collection":"Items"}}""")))
        {
        }
        Assert.Equal(500, (await QueryAsync(client, "Locks", "from index 'Items/Totals' where Total >= 0 limit 0", false)).GetProperty("TotalResults").GetInt64());
        using (await client.PostAsync("/databases/Locks/indexes/enable?name=Items/Totals", null))
        {
        }
        Assert.Equal(501, (await QueryAsync(client, "Locks", "from index 'Items/Totals' where Total >= 0 limit 0", true)).GetProperty("TotalResults").GetInt64());
    }

    [Fact]
    public async Task AReplacementSurvivesUnloadAndCleanRestart()
    {
        using var data = new TempFolder();
        await using (var server = await InProcessServer.StartAsync("--data-dir", data.Path))
        {
            await SeedAsync(server.Client, "Keep", 2000);
            await PutIndexAsync(server.Client, "Keep", V1);
            Assert.Equal(1, await VersionAsync(server.Client, "Keep", wait: true));
            using (await server.Client.PostAsync("/databases/Keep/indexes/stop", null))
            {
            }
            await PutIndexAsync(server.Client, "Keep", V2);
            // Unload and load: stop is for this run of the database only, the replacement is stored.
            await server.Host.Server.Databases.UnloadAsync("Keep");
            Assert.Equal(1, await VersionAsync(server.Client, "Keep"));
            await WaitUntilAsync(async () => (await IndexNamesAsync(server.Client, "Keep")).Count == 1, "the replacement swapped in after the unload");
            Assert.Equal(2, await VersionAsync(server.Client, "Keep", wait: true));
            using (await server.Client.PostAsync("/databases/Keep/indexes/stop", null))
            {
            }
            await PutIndexAsync(server.Client, "Keep", V3);
        }
        await using (var server = await InProcessServer.StartAsync("--data-dir", data.Path))
        {
            // The old one answers until the replacement has caught up; then exactly one index remains.
            var version = await VersionAsync(server.Client, "Keep");
            Assert.True(version is 2 or 3);
            await WaitUntilAsync(async () => (await IndexNamesAsync(server.Client, "Keep")).Count == 1, "the replacement swapped in after the restart");
            Assert.Equal(3, await VersionAsync(server.Client, "Keep", wait: true));
            // The swap renames first and retires the old index after (it closes, then its files
            // go): the folder is deleted a moment after the name answers with the new version.
            await WaitUntilAsync(() => Task.FromResult(Directory.GetDirectories(IndexesFolder(data.Path, "Keep")).Length == 1), "the old index's folder was deleted after the swap");
        }
    }

    private static string MapOf(int version) => $"map('Items', i => ({{ Total: i.N + {version * 1_000_000} }}))";

    /// <summary>Which version of <see cref="MapOf"/> answers (the millions of its largest Total), in one query.</summary>
    private static async Task<int> VersionOfAsync(HttpClient client, string db, int max, bool wait = false) =>
        (int)(await MaxTotalAsync(client, db, wait) / 1_000_000);

    [Fact]
    public async Task KillsBeforeDuringAndAfterTheSwapEndWithOneIndexOfTheNewDefinition()
    {
        using var data = new TempFolder();
        var random = new Random(19);
        const int Rounds = 5;
        var lastPut = 0;
        var lastSeen = 0;
        for (var round = 0; round < Rounds; round++)
        {
            using var server = ServerProcess.Start($"--urls http://127.0.0.1:0 --data-dir \"{data.Path}\"");
            using var client = new HttpClient { BaseAddress = await server.WaitForAddressAsync(StartTimeout), Timeout = RequestTimeout };
            if (round == 0)
            {
                await SeedAsync(client, "Crash", 30_000);
                await PutIndexAsync(client, "Crash", MapOf(0));
                Assert.Equal(0, await VersionOfAsync(client, "Crash", Rounds, wait: true));
            }
            else
            {
                // After the kill: the index answers, with the last definition put or an earlier one
                // that was live (until its replacement catches up), never going back; never
                // without an index, never two of that name.
                var names = await IndexNamesAsync(client, "Crash");
                Assert.Contains("Items/Totals", names);
                Assert.True(names.Count <= 2 && names.All(n => n is "Items/Totals" or "ReplacementOf/Items/Totals"), string.Join(", ", names));
                var version = await VersionOfAsync(client, "Crash", Rounds);
                Assert.True(version >= lastSeen && version <= lastPut, $"round {round}: version {version}, last seen {lastSeen}, last put {lastPut}");
                lastSeen = version;
            }
            // A new definition, then a kill at some moment of its build or swap.
            lastPut = round + 1;
            await PutIndexAsync(client, "Crash", MapOf(lastPut));
            await Task.Delay(random.Next(0, 2500));
            server.KillHard();
            await server.WaitForExitAsync(TimeSpan.FromSeconds(30));
        }

        using var final = ServerProcess.Start($"--urls http://127.0.0.1:0 --data-dir \"{data.Path}\"");
        using var finalClient = new HttpClient { BaseAddress = await final.WaitForAddressAsync(StartTimeout), Timeout = RequestTimeout };
        await WaitUntilAsync(async () => (await IndexNamesAsync(finalClient, "Crash")).Count == 1, "one index remained");
        Assert.Equal(lastPut, await VersionOfAsync(finalClient, "Crash", Rounds, wait: true));
        Assert.Equal(30_000, (await QueryAsync(finalClient, "Crash", "from index 'Items/Totals' where Total >= 0 limit 0", true)).GetProperty("TotalResults").GetInt64());
        using (var definitions = await finalClient.GetAsync("/databases/Crash/indexes?name=Items/Totals"))
        {
            Assert.Equal(MapOf(lastPut), (await Api.JsonAsync(definitions)).GetProperty("Results")[0].GetProperty("Maps")[0].GetString());
        }
        await WaitUntilAsync(() => Task.FromResult(Directory.GetDirectories(IndexesFolder(data.Path, "Crash")).Length == 1), "only the live index's folder remained");
        final.SendSigterm();
        await final.WaitForExitAsync(TimeSpan.FromSeconds(30));
    }

}
