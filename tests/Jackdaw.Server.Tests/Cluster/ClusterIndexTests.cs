using System.Diagnostics;
using System.Net;
using System.Net.Http.Json;
using System.Text;
using System.Text.Json;
using Jackdaw.Server.Tests.Infrastructure;

namespace Jackdaw.Server.Tests.Cluster;

/// <summary>
/// Index definitions through the cluster's state, in real processes: an index put through any node
/// is committed in the database's record and built on every node of the database, deleted
/// everywhere, and built by a node that gets the database later.
/// </summary>
[Collection(RunsAlone.Name)]
public sealed class ClusterIndexTests
{
    private const string Database = "Orders";

    private static readonly TimeSpan Converge = TimeSpan.FromSeconds(60);

    [Fact]
    public async Task AnIndexPutThroughAFollowerIsBuiltLockedAndDeletedOnEveryNodeAndReachesALaterNode()
    {
        var watch = Stopwatch.StartNew();
        await using var cluster = await TestCluster.StartAsync(3);
        using (var created = await cluster.Http.PutAsync($"{cluster.Nodes[0].Url}/admin/databases?name={Database}&replicationFactor=3", null))
        {
            Assert.True(created.IsSuccessStatusCode, await created.Content.ReadAsStringAsync());
        }
        foreach (var node in cluster.Nodes)
        {
            await Poll.UntilAsync(async () => (await cluster.DatabasesOnAsync(node)).Contains(Database), Converge, $"{Database} on {node.Url}");
        }
        var leader = await cluster.WaitForLeaderAsync();
        var follower = cluster.Nodes.First(n => n != leader);
        var writer = cluster.Nodes.First(n => n != follower);

        // A bad definition is refused by the node that got it, before anything is committed.
        using (var bad = await cluster.Http.PutAsync($"{follower.Url}/databases/{Database}/admin/indexes", Body("""{"Indexes":[{"Name":"Orders/Broken","Maps":["map('Orders', o => ({ Company: o.Company "]}]}""")))
            Assert.Equal(HttpStatusCode.BadRequest, bad.StatusCode);

        // Through a follower: passed on to the leader, answered once the follower has it.
        using (var put = await cluster.Http.PutAsync($"{follower.Url}/databases/{Database}/admin/indexes", Body(ByCompany("Orders/ByCompany"))))
        {
            var text = await put.Content.ReadAsStringAsync();
            Assert.Equal(HttpStatusCode.Created, put.StatusCode);
            Assert.True(JsonDocument.Parse(text).RootElement.GetProperty("Results")[0].GetProperty("RaftCommandIndex").GetInt64() > 0, text);
        }
        Assert.Equal(["Orders/ByCompany"], await IndexNamesAsync(cluster, follower));

        for (var i = 0; i < 6; i++)
        {
            using var doc = await cluster.Http.PutAsync($"{writer.Url}/databases/{Database}/docs?id=orders/{i}", Body($$$"""{"Company":"companies/{{{i % 2}}}","@metadata":{"@collection":"Orders"}}"""));
            Assert.Equal(HttpStatusCode.Created, doc.StatusCode);
        }
        foreach (var node in cluster.Nodes)
        {
            await Poll.UntilAsync(async () => await QueryAsync(cluster, node, "Orders/ByCompany") is ["orders/1", "orders/3", "orders/5"], Converge,
                $"Orders/ByCompany on {node.Url} to find the three orders of companies/1");
        }
        Assert.Empty(await IndexNamesAsync(cluster, cluster.Nodes[0], "Orders/Broken"));

        // Priority and lock mode are the record's too; a LockedError index refuses its delete everywhere.
        using (var priority = await cluster.Http.PostAsync($"{follower.Url}/databases/{Database}/indexes/set-priority", Body("""{"IndexNames":["Orders/ByCompany"],"Priority":"High"}""")))
            Assert.Equal(HttpStatusCode.NoContent, priority.StatusCode);
        using (var locked = await cluster.Http.PostAsync($"{writer.Url}/databases/{Database}/indexes/set-lock", Body("""{"IndexNames":["Orders/ByCompany"],"Mode":"LockedError"}""")))
            Assert.Equal(HttpStatusCode.NoContent, locked.StatusCode);
        foreach (var node in cluster.Nodes)
        {
            await Poll.UntilAsync(async () => await SettingsAsync(cluster, node, "Orders/ByCompany") == ("LockedError", "High"), Converge,
                $"the lock mode and priority on {node.Url}");
        }
        using (var refused = await cluster.Http.DeleteAsync($"{follower.Url}/databases/{Database}/indexes?name=Orders/ByCompany"))
            Assert.Equal(HttpStatusCode.Conflict, refused.StatusCode);
        using (var unlocked = await cluster.Http.PostAsync($"{follower.Url}/databases/{Database}/indexes/set-lock", Body("""{"IndexNames":["Orders/ByCompany"],"Mode":"Unlock"}""")))
            Assert.Equal(HttpStatusCode.NoContent, unlocked.StatusCode);

        // Deleted through a follower: gone everywhere.
        using (var delete = await cluster.Http.DeleteAsync($"{follower.Url}/databases/{Database}/indexes?name=Orders/ByCompany"))
            Assert.Equal(HttpStatusCode.NoContent, delete.StatusCode);
        Assert.Empty(await IndexNamesAsync(cluster, follower));
        foreach (var node in cluster.Nodes)
            await Poll.UntilAsync(async () => (await IndexNamesAsync(cluster, node)).Count == 0, Converge, $"the index gone from {node.Url}");

        // Node C leaves the database; an index put meanwhile reaches it when it gets the database again.
        var c = cluster.NodeByTag("C");
        using (var off = await cluster.Http.SendAsync(new HttpRequestMessage(HttpMethod.Delete, $"{cluster.Nodes[0].Url}/admin/databases")
        {
            Content = Body($$"""{"DatabaseNames":["{{Database}}"],"FromNodes":["C"],"HardDelete":true}"""),
        }))
            Assert.True(off.IsSuccessStatusCode, await off.Content.ReadAsStringAsync());
        await Poll.UntilAsync(async () => !(await cluster.DatabasesOnAsync(c)).Contains(Database), Converge, $"{Database} off C");
        using (var put = await cluster.Http.PutAsync($"{cluster.Nodes[1].Url}/databases/{Database}/admin/indexes", Body(ByCompany("Orders/ByCompanyAgain"))))
            Assert.Equal(HttpStatusCode.Created, put.StatusCode);
        using (var added = await cluster.Http.PutAsync($"{cluster.Nodes[0].Url}/admin/databases/node?name={Database}&node=C", null))
            Assert.True(added.IsSuccessStatusCode, await added.Content.ReadAsStringAsync());
        await Poll.UntilAsync(async () => await QueryAsync(cluster, c, "Orders/ByCompanyAgain") is ["orders/1", "orders/3", "orders/5"], Converge,
            "C to build the index of the record on its new copy");
        Assert.True(watch.Elapsed < TimeSpan.FromSeconds(90), $"took {watch.Elapsed}");
    }

    [Fact]
    public async Task AnAutoIndexAQueryMadeOnOneNodeIsBuiltOnTheOthers()
    {
        await using var cluster = await TestCluster.StartAsync(3);
        using (var created = await cluster.Http.PutAsync($"{cluster.Nodes[0].Url}/admin/databases?name={Database}&replicationFactor=3", null))
            Assert.True(created.IsSuccessStatusCode, await created.Content.ReadAsStringAsync());
        foreach (var node in cluster.Nodes)
            await Poll.UntilAsync(async () => (await cluster.DatabasesOnAsync(node)).Contains(Database), Converge, $"{Database} on {node.Url}");
        var leader = await cluster.WaitForLeaderAsync();
        var follower = cluster.Nodes.First(n => n != leader);
        for (var i = 0; i < 4; i++)
        {
            using var doc = await cluster.Http.PutAsync($"{leader.Url}/databases/{Database}/docs?id=orders/{i}", Body($$$"""{"Company":"companies/{{{i % 2}}}","@metadata":{"@collection":"Orders"}}"""));
            Assert.Equal(HttpStatusCode.Created, doc.StatusCode);
        }

        // A query on a follower makes the auto-index there; the cluster's record carries it to the others.
        var query = JsonSerializer.Serialize(new { Query = "from Orders where Company = 'companies/1'" });
        using (var response = await cluster.Http.PostAsync($"{follower.Url}/databases/{Database}/queries", Body(query)))
        {
            var text = await response.Content.ReadAsStringAsync();
            Assert.True(response.IsSuccessStatusCode, text);
            Assert.Equal("Auto/Orders/ByCompany", JsonDocument.Parse(text).RootElement.GetProperty("IndexName").GetString());
        }
        foreach (var node in cluster.Nodes)
        {
            await Poll.UntilAsync(async () => await QueryAsync(cluster, node, "Auto/Orders/ByCompany") is ["orders/1", "orders/3"], Converge,
                $"Auto/Orders/ByCompany on {node.Url}");
        }

        // Its definition as a query made it; a definition that is not an auto-index's is a 400.
        using (var bad = await cluster.Http.PutAsync($"{leader.Url}/databases/{Database}/admin/indexes/auto", Body(ByCompany("Orders/NotAuto"))))
            Assert.Equal(HttpStatusCode.BadRequest, bad.StatusCode);
    }

    [Fact]
    public async Task ALoneServersIndexesGoIntoItsRecordsWhenItFoundsACluster()
    {
        await using var cluster = await TestCluster.StartAsync(2, form: false);
        var (a, b) = (cluster.Nodes[0], cluster.Nodes[1]);
        using (var created = await cluster.Http.PutAsync($"{a.Url}/admin/databases?name={Database}", null))
            Assert.True(created.IsSuccessStatusCode, await created.Content.ReadAsStringAsync());
        using (var put = await cluster.Http.PutAsync($"{a.Url}/databases/{Database}/admin/indexes", Body(ByCompany("Orders/ByCompany"))))
            Assert.Equal(HttpStatusCode.Created, put.StatusCode);
        // An analyzer of the lone server, and an index naming it: both go into the record.
        using (var put = await cluster.Http.PutAsync($"{a.Url}/databases/{Database}/admin/analyzers", Body("""{"Analyzers":[{"Name":"Words","Code":"WhitespaceAnalyzer"}]}""")))
            Assert.Equal(HttpStatusCode.Created, put.StatusCode);
        using (var put = await cluster.Http.PutAsync($"{a.Url}/databases/{Database}/admin/indexes", Body(WordsIndex)))
            Assert.Equal(HttpStatusCode.Created, put.StatusCode);
        using (var locked = await cluster.Http.PostAsync($"{a.Url}/databases/{Database}/indexes/set-lock", Body("""{"IndexNames":["Orders/ByCompany"],"Mode":"LockedIgnore"}""")))
            Assert.Equal(HttpStatusCode.NoContent, locked.StatusCode);

        using (var added = await cluster.Http.PutAsync($"{a.Url}/admin/cluster/node?url={Uri.EscapeDataString(b.Url)}&tag=B", null))
            Assert.True(added.IsSuccessStatusCode, await added.Content.ReadAsStringAsync());
        await Poll.UntilAsync(async () => (await cluster.TopologyAsync(b)) is { } t && t.GetProperty("NodeTag").GetString() == "B", Converge, "B to learn its tag");
        using (var node = await cluster.Http.PutAsync($"{a.Url}/admin/databases/node?name={Database}&node=B", null))
            Assert.True(node.IsSuccessStatusCode, await node.Content.ReadAsStringAsync());

        // B builds the founder's indexes from the record, with its lock mode, and has its analyzer.
        await Poll.UntilAsync(async () => (await cluster.DatabasesOnAsync(b)).Contains(Database) && (await IndexNamesAsync(cluster, b)).Count == 2, Converge, "the indexes on B");
        var analyzers = await cluster.Http.GetFromJsonAsync<JsonElement>($"{b.Url}/databases/{Database}/analyzers");
        Assert.Equal(["Words"], analyzers.GetProperty("Analyzers").EnumerateArray().Select(x => x.GetProperty("Name").GetString()));
        var definitions = await cluster.Http.GetFromJsonAsync<JsonElement>($"{b.Url}/databases/{Database}/indexes?name=Orders/ByCompany");
        Assert.Equal("LockedIgnore", definitions.GetProperty("Results")[0].GetProperty("LockMode").GetString());
    }

    [Fact]
    public async Task AnIndexThatFailsOnANodeIsTriedAgainAndBuiltOnceItCanBe()
    {
        await using var cluster = await TestCluster.StartAsync(2);
        using (var created = await cluster.Http.PutAsync($"{cluster.Nodes[0].Url}/admin/databases?name={Database}&replicationFactor=2", null))
        {
            Assert.True(created.IsSuccessStatusCode, await created.Content.ReadAsStringAsync());
        }
        foreach (var node in cluster.Nodes)
        {
            await Poll.UntilAsync(async () => (await cluster.DatabasesOnAsync(node)).Contains(Database), Converge, $"{Database} on {node.Url}");
        }
        var a = await cluster.WaitForLeaderAsync();
        var b = cluster.Nodes.First(n => n != a);

        // Analyzers are in the database's record: one put through the follower is on both nodes; a bad
        // one is refused by the node that got it, before anything is committed.
        const string analyzer = """{"Analyzers":[{"Name":"Words","Code":"WhitespaceAnalyzer"}]}""";
        using (var put = await cluster.Http.PutAsync($"{b.Url}/databases/{Database}/admin/analyzers", Body(analyzer)))
        {
            Assert.True(put.StatusCode == HttpStatusCode.Created, await put.Content.ReadAsStringAsync());
        }
        using (var bad = await cluster.Http.PutAsync($"{b.Url}/databases/{Database}/admin/analyzers", Body("""{"Analyzers":[{"Name":"Bad","Code":"{\"Tokenizer\":\"Nope\"}"}]}""")))
        {
            Assert.Equal(HttpStatusCode.BadRequest, bad.StatusCode);
        }
        foreach (var node in cluster.Nodes)
        {
            var analyzers = await cluster.Http.GetFromJsonAsync<JsonElement>($"{node.Url}/databases/{Database}/analyzers?namesOnly=true");
            Assert.Equal(["Words"], analyzers.GetProperty("Analyzers").EnumerateArray().Select(x => x.GetProperty("Name").GetString()));
        }
        // An index naming an analyzer the record lacks is refused rather than failing on every node.
        using (var missing = await cluster.Http.PutAsync($"{b.Url}/databases/{Database}/admin/indexes", Body(WordsIndex.Replace("\"Words\"", "\"Missing\"", StringComparison.Ordinal))))
        {
            Assert.Equal(HttpStatusCode.BadRequest, missing.StatusCode);
        }

        // B cannot make the index's files (its Indexes folder is a file): the index fails there alone.
        var indexes = Path.Combine(b.DataDir, "Databases", Database, "Indexes");
        Directory.Delete(indexes, recursive: true);
        await File.WriteAllTextAsync(indexes, "in the way");
        using (var put = await cluster.Http.PutAsync($"{a.Url}/databases/{Database}/admin/indexes", Body(WordsIndex)))
        {
            Assert.True(put.StatusCode == HttpStatusCode.Created, await put.Content.ReadAsStringAsync());
        }
        Assert.Equal(["Orders/Words"], await IndexNamesAsync(cluster, a));
        // The failure shows in B's log, and is tried again on its own (failed twice: a retry ran).
        try
        {
            await Poll.UntilAsync(() => Task.FromResult(b.Output.Contains("index Orders/Words could not be brought in line with the cluster's record (failed 2 time(s))", StringComparison.Ordinal)),
                Converge, "B to fail the index twice");
        }
        catch (TimeoutException e)
        {
            throw new TimeoutException($"{e.Message} B:\n{b.Output}", e);
        }
        Assert.Empty(await IndexNamesAsync(cluster, b));

        // The record's indexes name the analyzer: deleting it is refused, from the record, on either node.
        using (var delete = await cluster.Http.DeleteAsync($"{b.Url}/databases/{Database}/admin/analyzers?name=words"))
        {
            Assert.Equal(HttpStatusCode.Conflict, delete.StatusCode);
        }

        // Nothing remembers a failure across a restart: B killed, its folder mended while it is down,
        // finds at start that its store lacks the record's index (its acted state holds it) and
        // builds it, with no change to its definition.
        b.Kill();
        File.Delete(indexes);
        Directory.CreateDirectory(indexes);
        await b.RestartAsync();
        await Poll.UntilAsync(async () =>
        {
            try
            {
                return (await IndexNamesAsync(cluster, b)).Count == 1;
            }
            catch (HttpRequestException)
            {
                return false; // B is still opening its database
            }
        }, Converge, "the index on B after its restart");
    }

    private const string WordsIndex = """{"Indexes":[{"Name":"Orders/Words","Maps":["map('Orders', o => ({ Company: o.Company }))"],"Fields":{"Company":{"Analyzer":"Words","Indexing":"Search"}}}]}""";

    private static string ByCompany(string name) =>
        $$$"""{"Indexes":[{"Name":"{{{name}}}","Maps":["map('Orders', o => ({ Company: o.Company }))"]}]}""";

    private static StringContent Body(string json) => new(json, Encoding.UTF8, "application/json");

    private static async Task<List<string>> IndexNamesAsync(TestCluster cluster, ClusterNodeProcess node, string? name = null)
    {
        var answer = await cluster.Http.GetFromJsonAsync<JsonElement>($"{node.Url}/databases/{Database}/indexes?namesOnly=true");
        return [.. answer.GetProperty("Results").EnumerateArray().Select(n => n.GetString()!).Where(n => name is null || n == name)];
    }

    private static async Task<(string?, string?)> SettingsAsync(TestCluster cluster, ClusterNodeProcess node, string name)
    {
        var answer = await cluster.Http.GetFromJsonAsync<JsonElement>($"{node.Url}/databases/{Database}/indexes?name={Uri.EscapeDataString(name)}");
        var index = answer.GetProperty("Results")[0];
        return (index.GetProperty("LockMode").GetString(), index.GetProperty("Priority").GetString());
    }

    /// <summary>The ids the index finds for companies/1 on that node, sorted (null while the index or the database is not there).</summary>
    private static async Task<string[]?> QueryAsync(TestCluster cluster, ClusterNodeProcess node, string index)
    {
        var query = JsonSerializer.Serialize(new { Query = $"from index '{index}' where Company = 'companies/1'" });
        using var response = await cluster.Http.PostAsync($"{node.Url}/databases/{Database}/queries", Body(query));
        if (!response.IsSuccessStatusCode)
            return null;
        var answer = JsonDocument.Parse(await response.Content.ReadAsStringAsync()).RootElement;
        if (answer.GetProperty("IsStale").GetBoolean())
            return null;
        return [.. answer.GetProperty("Results").EnumerateArray().Select(r => r.GetProperty("@metadata").GetProperty("@id").GetString()!).Order(StringComparer.Ordinal)];
    }
}
