using System.Net;
using System.Text.Json;
using Jackdaw.Server.Indexing;
using Jackdaw.Server.Indexing.Lucene;
using Jackdaw.Server.Tests.Infrastructure;

namespace Jackdaw.Server.Tests.Indexing;

/// <summary>Auto-indexes: reuse, widening (the narrower one goes once the wider caught up), idleness and deletion, alphanumeric order.</summary>
public sealed class AutoIndexLifecycleTests
{
    private static async Task<JsonElement> QueryAsync(InProcessServer server, string db, string rql)
    {
        // Not the server's default of 15 s: on a busy machine the 24,000 changes of the build test
        // took longer than that to index. The query answers as soon as the index caught up.
        var body = JsonSerializer.Serialize(new { Query = rql, WaitForNonStaleResults = true, WaitForNonStaleResultsTimeout = "00:02:00" });
        using var response = await server.Client.PostAsync($"/databases/{db}/queries", Api.Json(body));
        var json = await Api.JsonAsync(response);
        Assert.True(response.StatusCode == HttpStatusCode.OK, json.ToString());
        return json;
    }

    private static async Task<InProcessServer> StartWithUsersAsync(IndexingOptions options)
    {
        var server = await InProcessServer.StartAsync(o => o.Indexing = options);
        using (await server.Client.PutAsync("/admin/databases?name=Auto", null))
        {
        }
        var commands = string.Join(',', Enumerable.Range(1, 50).Select(i =>
            $"{{\"Type\":\"PUT\",\"Id\":\"users/{i}\",\"Document\":{{\"Name\":\"file{i}\",\"Age\":{20 + (i % 30)},\"City\":\"{(i % 2 == 0 ? "Oslo" : "Rome")}\",\"@metadata\":{{\"@collection\":\"Users\"}}}}}}"));
        using (var bulk = await server.Client.PostAsync("/databases/Auto/bulk_docs", Api.Json("{\"Commands\":[" + commands + "]}")))
        {
            Assert.Equal(HttpStatusCode.OK, bulk.StatusCode);
        }
        return server;
    }

    private static IndexStore Store(InProcessServer server) =>
        IndexStore.Of(server.Host.Server.Databases.GetDatabase("Auto"));

    /// <summary>
    /// Runs housekeeping passes until <paramref name="condition"/> holds. Idleness and deletion are
    /// decided by the clock at each pass: passes every 50 ms see each state as soon as it is due,
    /// where one pass after a fixed sleep could come late enough on a busy machine to skip one.
    /// </summary>
    private static async Task HousekeepUntilAsync(IndexStore store, Func<bool> condition, string what)
    {
        var deadline = DateTime.UtcNow + TimeSpan.FromMinutes(1);
        while (true)
        {
            await store.RunHousekeepingAsync();
            if (condition())
            {
                return;
            }
            Assert.True(DateTime.UtcNow < deadline, "Timed out waiting until " + what);
            await Task.Delay(50);
        }
    }

    [Fact]
    public async Task QueriesReuseAndWidenAutoIndexesAndTheNarrowerGoes()
    {
        await using var server = await StartWithUsersAsync(new IndexingOptions { IdleCheckInterval = TimeSpan.FromHours(1) });
        Assert.Equal("Auto/Users/ByAge", (await QueryAsync(server, "Auto", "from Users where Age > 40")).GetProperty("IndexName").GetString());
        Assert.Equal("Auto/Users/ByAge", (await QueryAsync(server, "Auto", "from Users where Age = 25 order by Age desc")).GetProperty("IndexName").GetString());
        var wider = await QueryAsync(server, "Auto", "from Users where City = 'oslo' and search(Name, 'file4')");
        Assert.Equal("Auto/Users/ByAgeAndCityAndSearch(Name)", wider.GetProperty("IndexName").GetString());
        Assert.Equal(1, wider.GetProperty("TotalResults").GetInt64());
        // The wider one answers the old query too; the narrower goes once the wider caught up.
        var store = Store(server);
        await store.RemoveCoveredAutoIndexesAsync();
        Assert.Equal(["Auto/Users/ByAgeAndCityAndSearch(Name)"], store.Indexes.Select(i => i.Name));
        Assert.Equal("Auto/Users/ByAgeAndCityAndSearch(Name)", (await QueryAsync(server, "Auto", "from Users where Age > 40")).GetProperty("IndexName").GetString());
        // exact() is its own field.
        var exact = await QueryAsync(server, "Auto", "from Users where exact(City = 'Oslo')");
        Assert.Equal(25, exact.GetProperty("TotalResults").GetInt64());
        Assert.Equal(0, (await QueryAsync(server, "Auto", "from Users where exact(City = 'oslo')")).GetProperty("TotalResults").GetInt64());
    }

    [Fact]
    public async Task AnIndexBuiltWhileItsDocumentsChangeHasOneEntryPerDocument()
    {
        // An index that starts empty adds the documents it meets first without a delete-by-id
        // term; documents changed meanwhile come again with a newer etag and must replace, not
        // duplicate, their entries.
        await using var server = await InProcessServer.StartAsync(o => o.Indexing = new IndexingOptions { IdleCheckInterval = TimeSpan.FromHours(1) });
        using (await server.Client.PutAsync("/admin/databases?name=Build", null))
        {
        }
        for (var start = 0; start < 20_000; start += 2_000)
        {
            var commands = string.Join(',', Enumerable.Range(start, 2_000).Select(i =>
                $"{{\"Type\":\"PUT\",\"Id\":\"items/{i}\",\"Document\":{{\"N\":{i},\"V\":0,\"@metadata\":{{\"@collection\":\"Items\"}}}}}}"));
            using var bulk = await server.Client.PostAsync("/databases/Build/bulk_docs", Api.Json("{\"Commands\":[" + commands + "]}"));
            Assert.Equal(HttpStatusCode.OK, bulk.StatusCode);
        }
        using (var created = await server.Client.PostAsync("/databases/Build/queries", Api.Json("""{"Query":"from Items where V = 7"}""")))
        {
            Assert.Equal(HttpStatusCode.OK, created.StatusCode);
        }
        // While it builds: every tenth item changes, twice.
        for (var round = 1; round <= 2; round++)
        {
            var commands = string.Join(',', Enumerable.Range(0, 2_000).Select(i =>
                $"{{\"Type\":\"PUT\",\"Id\":\"items/{i * 10}\",\"Document\":{{\"N\":{i * 10},\"V\":{round},\"@metadata\":{{\"@collection\":\"Items\"}}}}}}"));
            using var bulk = await server.Client.PostAsync("/databases/Build/bulk_docs", Api.Json("{\"Commands\":[" + commands + "]}"));
            Assert.Equal(HttpStatusCode.OK, bulk.StatusCode);
        }
        Assert.Equal(2_000, (await QueryAsync(server, "Build", "from Items where V = 2 limit 0")).GetProperty("TotalResults").GetInt64());
        Assert.Equal(0, (await QueryAsync(server, "Build", "from Items where V = 1 limit 0")).GetProperty("TotalResults").GetInt64());
        Assert.Equal(18_000, (await QueryAsync(server, "Build", "from Items where V = 0 limit 0")).GetProperty("TotalResults").GetInt64());
        var index = IndexStore.Of(server.Host.Server.Databases.GetDatabase("Build")).Indexes.Single();
        Assert.Equal(20_000, index.EntriesCount);
    }

    [Fact]
    public async Task ADocumentMovedBetweenTwoMappedCollectionsKeepsItsEntry()
    {
        await using var server = await InProcessServer.StartAsync(o => o.Indexing = new IndexingOptions { IdleCheckInterval = TimeSpan.FromHours(1) });
        using (await server.Client.PutAsync("/admin/databases?name=Pets", null))
        {
        }
        // Dogs is mapped before Cats: in one batch the Dogs feed writes the moved document's entry,
        // then the Cats tombstone of its old version comes.
        var definition = """{"Indexes":[{"Name":"Pets/ByName","Maps":["map('Dogs', d => ({ Name: d.Name }))","map('Cats', c => ({ Name: c.Name }))"]}]}""";
        using (var put = await server.Client.PutAsync("/databases/Pets/admin/indexes", Api.Json(definition)))
        {
            Assert.Equal(HttpStatusCode.Created, put.StatusCode);
        }
        using (var cat = await server.Client.PutAsync("/databases/Pets/docs?id=pets/1", Api.Json("""{"Name":"Rex","@metadata":{"@collection":"Cats"}}""")))
        {
            Assert.Equal(HttpStatusCode.Created, cat.StatusCode);
        }
        Assert.Equal(1, (await QueryAsync(server, "Pets", "from index 'Pets/ByName' where Name = 'Rex'")).GetProperty("TotalResults").GetInt64());
        using (var dog = await server.Client.PutAsync("/databases/Pets/docs?id=pets/1", Api.Json("""{"Name":"Rex","@metadata":{"@collection":"Dogs"}}""")))
        {
            Assert.True(dog.StatusCode is HttpStatusCode.Created or HttpStatusCode.OK, dog.StatusCode.ToString());
        }
        var moved = await QueryAsync(server, "Pets", "from index 'Pets/ByName' where Name = 'Rex'");
        Assert.Equal(1, moved.GetProperty("TotalResults").GetInt64());
        Assert.Equal("Dogs", moved.GetProperty("Results")[0].GetProperty("@metadata").GetProperty("@collection").GetString());
    }

    [Fact]
    public async Task TheFirstQueryOfANewIndexWaitsForItsFirstBatch()
    {
        await using var server = await StartWithUsersAsync(new IndexingOptions { IdleCheckInterval = TimeSpan.FromHours(1) });
        // No WaitForNonStaleResults: the new auto-index's first batch covers these 50 users, and
        // the query waits for it (as RavenDB's) instead of answering from an empty index.
        using var response = await server.Client.PostAsync("/databases/Auto/queries", Api.Json("""{"Query":"from Users where City = 'Rome'"}"""));
        var first = await Api.JsonAsync(response);
        Assert.Equal(HttpStatusCode.OK, response.StatusCode);
        Assert.Equal(25, first.GetProperty("TotalResults").GetInt64());
        Assert.False(first.GetProperty("IsStale").GetBoolean());

        // A stopped index is not waited for: it answers at once, stale.
        using (var stop = await server.Client.PostAsync("/databases/Auto/admin/indexes/stop", null))
        {
            Assert.Equal(HttpStatusCode.NoContent, stop.StatusCode);
        }
        var started = System.Diagnostics.Stopwatch.StartNew();
        using var stale = await server.Client.PostAsync("/databases/Auto/queries", Api.Json("""{"Query":"from Users where Age = 25"}"""));
        var staleJson = await Api.JsonAsync(stale);
        Assert.Equal(HttpStatusCode.OK, stale.StatusCode);
        Assert.True(staleJson.GetProperty("IsStale").GetBoolean());
        Assert.True(started.Elapsed < QueryRunnerFirstBatchWait, $"a query of a stopped index waited {started.Elapsed}");
    }

    private static readonly TimeSpan QueryRunnerFirstBatchWait = Jackdaw.Server.Queries.QueryPlanner.FirstBatchWait;

    [Fact]
    public async Task AnAutoIndexNotQueriedGoesIdleThenIsDeletedAndAQueryWakesIt()
    {
        var options = new IndexingOptions { AutoIndexIdleAfter = TimeSpan.FromMilliseconds(300), AutoIndexDeleteAfter = TimeSpan.FromSeconds(3), IdleCheckInterval = TimeSpan.FromHours(1) };
        await using var server = await StartWithUsersAsync(options);
        await QueryAsync(server, "Auto", "from Users where Age > 40");
        var store = Store(server);
        var index = store.Get("Auto/Users/ByAge");
        await HousekeepUntilAsync(store, () => index.State == IndexState.Idle || store.Indexes.Count == 0, "the index went idle");
        Assert.True(store.Indexes.Count == 1, "the index was deleted before a housekeeping pass saw it idle: no pass ran in the 3 s after the query");
        Assert.Equal(IndexState.Idle, index.State);
        using (var stats = await server.Client.GetAsync("/databases/Auto/indexes/stats"))
        {
            var entry = (await Api.JsonAsync(stats)).GetProperty("Results")[0];
            Assert.Equal("Idle", entry.GetProperty("State").GetString());
            Assert.NotEqual(JsonValueKind.Null, entry.GetProperty("AutoDeleteAt").ValueKind);
        }
        // An idle index does not index; a query wakes it and it catches up.
        using (await server.Client.PutAsync("/databases/Auto/docs?id=users/new", Api.Json("""{"Age":99,"@metadata":{"@collection":"Users"}}""")))
        {
        }
        // Started before the query: the index's last query time is later than this.
        var sinceWake = System.Diagnostics.Stopwatch.StartNew();
        var answer = await QueryAsync(server, "Auto", "from Users where Age = 99");
        Assert.Equal(1, answer.GetProperty("TotalResults").GetInt64());
        Assert.Equal(IndexState.Normal, index.State);

        // Deleted once it was not queried for 3 s, and not before.
        await HousekeepUntilAsync(store, () => store.Indexes.Count == 0, "the index was deleted");
        Assert.True(sinceWake.Elapsed >= options.AutoIndexDeleteAfter, $"deleted {sinceWake.Elapsed} after its last query");
        Assert.Contains(server.Logs.Records, e => e.Message.Contains("Auto/Users/ByAge", StringComparison.Ordinal) && e.Message.Contains("deleted", StringComparison.Ordinal));
    }

    [Fact]
    public async Task OrderByAlphaNumeric()
    {
        await using var server = await StartWithUsersAsync(new IndexingOptions());
        var answer = await QueryAsync(server, "Auto", "from Users where Age >= 0 order by Name as alphaNumeric limit 4");
        Assert.Equal(["file1", "file2", "file3", "file4"], answer.GetProperty("Results").EnumerateArray().Select(r => r.GetProperty("Name").GetString()));
        var plain = await QueryAsync(server, "Auto", "from Users where Age >= 0 order by Name limit 4");
        Assert.Equal(["file1", "file10", "file11", "file12"], plain.GetProperty("Results").EnumerateArray().Select(r => r.GetProperty("Name").GetString()));
        var descending = await QueryAsync(server, "Auto", "from Users where Age >= 0 order by Name as alphaNumeric desc limit 2");
        Assert.Equal(["file50", "file49"], descending.GetProperty("Results").EnumerateArray().Select(r => r.GetProperty("Name").GetString()));
        Assert.True(AlphaNumericComparer.Instance.Compare("a02b", "A2c") < 0);
        Assert.True(AlphaNumericComparer.Instance.Compare(null, "a") < 0);
    }
}
