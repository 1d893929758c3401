using System.Net;
using System.Net.Http.Json;
using System.Text.Json;
using Jackdaw.Server.Tests.Infrastructure;

namespace Jackdaw.Server.Tests.Cluster;

/// <summary>Three server processes formed into a cluster: membership, database records, a leader's death, restarts.</summary>
[Collection(RunsAlone.Name)]
public sealed class ClusterProcessTests
{
    private static async Task<JsonElement> JsonAsync(HttpResponseMessage response)
    {
        var text = await response.Content.ReadAsStringAsync();
        Assert.True(response.IsSuccessStatusCode, $"{(int)response.StatusCode} {text}");
        return JsonDocument.Parse(text).RootElement.Clone();
    }

    /// <summary>A body as RavenDB's clients write it (PascalCase names).</summary>
    private static StringContent Json(string json) => new(json, System.Text.Encoding.UTF8, "application/json");

    private static async Task AssertRefusedAsync(HttpResponseMessage response, string messagePart)
    {
        var text = await response.Content.ReadAsStringAsync();
        Assert.True((int)response.StatusCode is >= 400 and < 500, $"{(int)response.StatusCode} {text}");
        var body = JsonDocument.Parse(text).RootElement;
        Assert.False(string.IsNullOrEmpty(body.GetProperty("Type").GetString()));
        Assert.Contains(messagePart, body.GetProperty("Message").GetString());
    }

    [Fact]
    public async Task ThreeNodesFormOneClusterAndADatabaseOfFactorThreeIsOnEach()
    {
        await using var cluster = await TestCluster.StartAsync(3);
        var tags = new List<string>();
        foreach (var node in cluster.Nodes)
        {
            var topology = (await cluster.TopologyAsync(node))!.Value;
            tags.Add(topology.GetProperty("NodeTag").GetString()!);
            Assert.Equal(["A", "B", "C"], topology.GetProperty("Topology").GetProperty("Members").EnumerateObject().Select(m => m.Name));
            Assert.Equal(cluster.Nodes[2].Url, topology.GetProperty("Topology").GetProperty("Members").GetProperty("C").GetString());
        }
        Assert.Equal(["A", "B", "C"], tags);

        // Sent to a member that does not lead: passed on to the leader.
        var created = await JsonAsync(await cluster.Http.PutAsync($"{cluster.Nodes[1].Url}/admin/databases?name=Orders&replicationFactor=3", null));
        Assert.Equal(["A", "B", "C"], created.GetProperty("Topology").GetProperty("Members").EnumerateArray().Select(m => m.GetString()).Order());
        foreach (var node in cluster.Nodes)
        {
            await Poll.UntilAsync(async () => (await cluster.DatabasesOnAsync(node)).Contains("Orders"), TestCluster.Timeout, $"Orders on {node.Url}");
            var topology = await cluster.Http.GetFromJsonAsync<JsonElement>($"{node.Url}/topology?name=Orders");
            var nodes = topology.GetProperty("Nodes").EnumerateArray().ToList();
            Assert.Equal(3, nodes.Count);
            Assert.Contains(nodes, n => n.GetProperty("ClusterTag").GetString() == "B" && n.GetProperty("Url").GetString() == cluster.Nodes[1].Url
                && n.GetProperty("Database").GetString() == "Orders" && n.GetProperty("ServerRole").GetString() == "Member");
        }
    }

    [Fact]
    public async Task AKilledLeaderIsReplacedAndADatabaseCreatedDuringTheElectionIsCreatedOnce()
    {
        await using var cluster = await TestCluster.StartAsync(3);
        var leader = await cluster.WaitForLeaderAsync();
        leader.Kill();
        var killed = System.Diagnostics.Stopwatch.StartNew();
        var survivor = cluster.Nodes.First(n => n.IsRunning);

        // A client retries its command (same raft-request-id) through the election until one answer.
        var url = $"{survivor.Url}/admin/databases?name=During&replicationFactor=2&raft-request-id=during-1";
        HttpResponseMessage? answer = null;
        await Poll.UntilAsync(async () =>
        {
            answer?.Dispose();
            answer = await cluster.Http.PutAsync(url, null);
            return answer.StatusCode != HttpStatusCode.ServiceUnavailable;
        }, TestCluster.Timeout, "a leader to take the create");
        // A new leader within a few seconds (elections time out after 0.5 s here; the machine is loaded).
        var elected = killed.Elapsed;
        Assert.True(elected < TimeSpan.FromSeconds(10), $"the create was taken {elected.TotalSeconds:0.0} s after the leader died");
        await JsonAsync(answer!);
        // The same command again (its answer was lost, say) changes nothing and is not an error.
        await JsonAsync(await cluster.Http.PutAsync(url, null));
        // Another create of the name is a second request: refused.
        using var second = await cluster.Http.PutAsync($"{survivor.Url}/admin/databases?name=During&replicationFactor=2", null);
        Assert.Equal(HttpStatusCode.Conflict, second.StatusCode);

        var newLeader = await cluster.WaitForLeaderAsync(not: leader);
        Assert.NotSame(leader, newLeader);
        var topology = await cluster.Http.GetFromJsonAsync<JsonElement>($"{newLeader.Url}/topology?name=During");
        var holders = topology.GetProperty("Nodes").EnumerateArray().Select(n => n.GetProperty("ClusterTag").GetString()!).ToList();
        Assert.Equal(2, holders.Count);
        // The leader put it on the nodes that answer: the two alive.
        foreach (var tag in holders)
        {
            await Poll.UntilAsync(async () => (await cluster.DatabasesOnAsync(cluster.NodeByTag(tag))).Contains("During"), TestCluster.Timeout, $"During on {tag}");
        }

        await leader.RestartAsync();
        var back = (await cluster.TopologyAsync(leader))!.Value;
        Assert.Equal(3, back.GetProperty("Topology").GetProperty("Members").EnumerateObject().Count());
    }

    [Fact]
    public async Task EveryAcknowledgedChangeSurvivesTheWholeClusterKilledAtOnce()
    {
        await using var cluster = await TestCluster.StartAsync(3);
        var leader = await cluster.WaitForLeaderAsync();
        for (var i = 0; i < 5; i++)
        {
            await JsonAsync(await cluster.Http.PutAsync($"{leader.Url}/admin/databases?name=Durable{i}&replicationFactor=1", null));
        }
        // SIGKILL right after the last answer: what was acknowledged is on a majority's disks.
        foreach (var node in cluster.Nodes)
        {
            node.Kill();
        }
        foreach (var node in cluster.Nodes)
        {
            await node.RestartAsync();
        }
        var restarted = await cluster.WaitForLeaderAsync();
        await Poll.UntilAsync(async () =>
        {
            for (var i = 0; i < 5; i++)
            {
                using var answer = await cluster.Http.GetAsync($"{restarted.Url}/topology?name=Durable{i}");
                if (!answer.IsSuccessStatusCode)
                {
                    return false;
                }
            }
            return true;
        }, TestCluster.Timeout, "the five records after the restart");
    }

    [Fact]
    public async Task APausedLeaderIsReplacedAndFollowsTheNewOneWhenItResumes()
    {
        await using var cluster = await TestCluster.StartAsync(3);
        var leader = await cluster.WaitForLeaderAsync();
        leader.Pause();
        var newLeader = await cluster.WaitForLeaderAsync(not: leader);
        await JsonAsync(await cluster.Http.PutAsync($"{newLeader.Url}/admin/databases?name=WhilePaused&replicationFactor=2", null));

        leader.Resume();
        // All three agree on one leader again, and the resumed node has the record it missed.
        await cluster.WaitForLeaderAsync();
        await Poll.UntilAsync(async () =>
        {
            using var answer = await cluster.Http.GetAsync($"{leader.Url}/topology?name=WhilePaused");
            return answer.IsSuccessStatusCode;
        }, TestCluster.Timeout, "the resumed node to know the record made while it was paused");
    }

    [Fact]
    public async Task ARestartedNodeRemembersItsClusterItsTagAndWhatItMissed()
    {
        // Snapshots every 3 commands: the restarted node reads one and replays the log after it,
        // or is sent the leader's, whose log no longer holds what it missed.
        await using var cluster = await TestCluster.StartAsync(3, form: true, "--Cluster:SnapshotEvery=3");
        var c = cluster.Nodes[2];
        await JsonAsync(await cluster.Http.PutAsync($"{cluster.Nodes[0].Url}/admin/databases?name=Gone&replicationFactor=3", null));
        await Poll.UntilAsync(async () => (await cluster.DatabasesOnAsync(c)).Contains("Gone"), TestCluster.Timeout, "Gone on C");
        Assert.NotEmpty(Directory.GetFiles(Path.Combine(c.DataDir, "System", "Cluster", "snapshots")));
        c.Kill();

        var leader = await cluster.WaitForLeaderAsync();
        await JsonAsync(await cluster.Http.PutAsync($"{leader.Url}/admin/databases?name=Missed&replicationFactor=3", null));
        using (var deleted = await cluster.Http.DeleteAsync($"{leader.Url}/admin/databases?name=Gone"))
        {
            Assert.Equal(HttpStatusCode.NoContent, deleted.StatusCode);
        }
        for (var i = 0; i < 4; i++)
        {
            await JsonAsync(await cluster.Http.PutAsync($"{leader.Url}/admin/databases?name=More{i}&replicationFactor=2", null));
        }

        await c.RestartAsync();
        await Poll.UntilAsync(async () => (await cluster.TopologyAsync(c)) is { } t && t.GetProperty("NodeTag").GetString() == "C"
            && t.GetProperty("Topology").GetProperty("Members").EnumerateObject().Count() == 3, TestCluster.Timeout, "C back in its cluster");
        await Poll.UntilAsync(async () => (await cluster.DatabasesOnAsync(c)) is var on && on.Contains("Missed") && !on.Contains("Gone"),
            TestCluster.Timeout, "the database created while C was down on C, and the one deleted meanwhile gone from it");
    }

    [Fact]
    public async Task DatabaseNodesAreAddedAndRemovedAndARemovedMemberDropsItsCopies()
    {
        await using var cluster = await TestCluster.StartAsync(3);
        var a = cluster.Nodes[0];
        await JsonAsync(await cluster.Http.PutAsync($"{a.Url}/admin/databases", Json("""{"DatabaseName":"Shop","Topology":{"Members":["A"]}}""")));
        Assert.Equal(["Shop"], await cluster.DatabasesOnAsync(a));
        // RavenDB's list is the cluster's: the same on every node, wherever the copies are.
        await Poll.UntilAsync(async () => (await cluster.Http.GetFromJsonAsync<JsonElement>($"{cluster.Nodes[2].Url}/databases?namesOnly=true"))
            .GetProperty("Databases").EnumerateArray().Select(d => d.GetString()).SequenceEqual(["Shop"]), TestCluster.Timeout, "C to list Shop");
        Assert.Empty(await cluster.DatabasesOnAsync(cluster.Nodes[2]));

        // Shop holds documents before B is added: B enters as a promotable, mentored by A.
        const int Items = 300;
        var commands = Enumerable.Range(0, Items).Select(i => new { Id = $"items/{i}", Type = "PUT", Document = new Dictionary<string, object> { ["N"] = i, ["@metadata"] = new Dictionary<string, string> { ["@collection"] = "Items" } } });
        await JsonAsync(await cluster.Http.PostAsync($"{a.Url}/databases/Shop/bulk_docs", Json(JsonSerializer.Serialize(new { Commands = commands }))));
        // An index slow enough (a second or two for the 300 items) that B's copy is stopped before it
        // is through: B is promoted only once it indexed what it held, never on its documents alone.
        const string slow = """{"Indexes":[{"Name":"Items/Slow","Maps":["map('Items', o => { var s = 0; for (var i = 0; i < 5000; i++) { s += i % 7; } return { N: o.N, S: s }; })"]}]}""";
        await JsonAsync(await cluster.Http.PutAsync($"{a.Url}/databases/Shop/admin/indexes", Json(slow)));
        var etagBefore = (await cluster.Http.GetFromJsonAsync<JsonElement>($"{a.Url}/topology?name=Shop")).GetProperty("Etag").GetInt64();
        var added = await JsonAsync(await cluster.Http.PutAsync($"{cluster.Nodes[2].Url}/admin/databases/node?name=Shop&node=B", null));
        Assert.Equal(["A"], added.GetProperty("Topology").GetProperty("Members").EnumerateArray().Select(m => m.GetString()));
        Assert.Equal(["B"], added.GetProperty("Topology").GetProperty("Promotables").EnumerateArray().Select(m => m.GetString()));
        var b = cluster.Nodes[1];
        await Poll.UntilAsync(async () =>
        {
            using var stop = await cluster.Http.PostAsync($"{b.Url}/databases/Shop/admin/indexes/stop?name=Items/Slow", null);
            return stop.IsSuccessStatusCode;
        }, TestCluster.Timeout, "B to have the index, and stop it");
        await Poll.UntilAsync(async () => (await cluster.Http.GetFromJsonAsync<JsonElement>($"{b.Url}/databases/Shop/stats")).GetProperty("CountOfDocuments").GetInt64() == Items,
            TestCluster.Timeout, "B to hold every item");
        await Task.Delay(TimeSpan.FromSeconds(3));
        var waiting = await cluster.Http.GetFromJsonAsync<JsonElement>($"{a.Url}/admin/databases?name=Shop");
        Assert.True(waiting.GetProperty("Topology").GetProperty("Promotables").EnumerateArray().Any(t => t.GetString() == "B"),
            $"B was promoted with its index stopped behind its documents: {waiting}");
        using (var start = await cluster.Http.PostAsync($"{b.Url}/databases/Shop/admin/indexes/start?name=Items/Slow", null))
        {
            Assert.True(start.IsSuccessStatusCode, await start.Content.ReadAsStringAsync());
        }
        // Clients are sent to B only once it is a member: a node listing it in /topology already has
        // it as a member in its record (asked after), and then B holds every document.
        async Task<bool> BListedAsync(ClusterNodeProcess node)
        {
            var topology = await cluster.Http.GetFromJsonAsync<JsonElement>($"{node.Url}/topology?name=Shop");
            var listed = topology.GetProperty("Nodes").EnumerateArray().Any(n => n.GetProperty("ClusterTag").GetString() == "B");
            var record = await cluster.Http.GetFromJsonAsync<JsonElement>($"{node.Url}/admin/databases?name=Shop");
            var members = record.GetProperty("Topology").GetProperty("Members").EnumerateArray().Select(m => m.GetString()).ToList();
            Assert.True(!listed || members.Contains("B"), $"{node.Url} lists B in /topology while its record has it promotable: {record}");
            return listed;
        }
        foreach (var node in cluster.Nodes)
        {
            await Poll.UntilAsync(() => BListedAsync(node), TestCluster.Timeout, $"B promoted to a member of Shop, as {node.Url} sees it");
        }
        var stats = await cluster.Http.GetFromJsonAsync<JsonElement>($"{b.Url}/databases/Shop/stats");
        Assert.Equal(Items, stats.GetProperty("CountOfDocuments").GetInt64());
        var indexOfB = (await cluster.Http.GetFromJsonAsync<JsonElement>($"{b.Url}/databases/Shop/indexes/caught-up")).GetProperty("Indexes").EnumerateArray().Single();
        Assert.True(indexOfB.GetProperty("CaughtUp").GetBoolean(), $"B became a member with index {indexOfB} behind its documents");
        var etag = (await cluster.Http.GetFromJsonAsync<JsonElement>($"{a.Url}/topology?name=Shop")).GetProperty("Etag").GetInt64();
        Assert.NotEqual(etagBefore, etag);

        using (var request = new HttpRequestMessage(HttpMethod.Delete, $"{a.Url}/admin/databases") { Content = Json("""{"DatabaseNames":["Shop"],"HardDelete":true,"FromNodes":["A"]}""") })
        {
            var deleted = await JsonAsync(await cluster.Http.SendAsync(request));
            Assert.Equal(["A"], deleted.GetProperty("PendingDeletes").EnumerateArray().Select(n => n.GetString()));
        }
        await Poll.UntilAsync(async () => !(await cluster.DatabasesOnAsync(a)).Contains("Shop"), TestCluster.Timeout, "Shop gone from A");
        var topology = await cluster.Http.GetFromJsonAsync<JsonElement>($"{a.Url}/topology?name=Shop");
        Assert.Equal(["B"], topology.GetProperty("Nodes").EnumerateArray().Select(n => n.GetProperty("ClusterTag").GetString()));
        Assert.NotEqual(etag, topology.GetProperty("Etag").GetInt64());

        // Removing member B: Shop loses its last node and B deletes its copy.
        using (var removed = await cluster.Http.DeleteAsync($"{a.Url}/admin/cluster/node?nodeTag=B"))
        {
            Assert.Equal(HttpStatusCode.NoContent, removed.StatusCode);
        }
        foreach (var node in new[] { cluster.Nodes[0], cluster.Nodes[2] })
        {
            await Poll.UntilAsync(async () => (await cluster.TopologyAsync(node)) is { } t
                && t.GetProperty("Topology").GetProperty("Members").EnumerateObject().Select(m => m.Name).SequenceEqual(["A", "C"]), TestCluster.Timeout, $"{node.Url} to see A and C only");
        }
        await Poll.UntilAsync(async () => !(await cluster.DatabasesOnAsync(cluster.Nodes[1])).Contains("Shop"), TestCluster.Timeout, "Shop gone from the removed B");
    }

    [Fact]
    public async Task BadClusterRequestsAreRefusedWithTypeAndMessage()
    {
        await using var cluster = await TestCluster.StartAsync(2);
        var a = cluster.Nodes[0];
        await AssertRefusedAsync(await cluster.Http.DeleteAsync($"{a.Url}/admin/cluster/node?nodeTag=Q"), "'Q' is not a member");
        await AssertRefusedAsync(await cluster.Http.PutAsync($"{a.Url}/admin/cluster/node?url=not-a-url", null), "is not a node URL");
        await AssertRefusedAsync(await cluster.Http.PutAsync($"{a.Url}/admin/cluster/node?url={Uri.EscapeDataString(a.Url)}", null), "own URL");
        await AssertRefusedAsync(await cluster.Http.PutAsync($"{a.Url}/admin/cluster/node?url=http://127.0.0.1:9&tag=b1", null), "is not a node tag");
        // A member (or a lone server) is not a fresh node: it cannot be added.
        await AssertRefusedAsync(await cluster.Http.PutAsync($"{a.Url}/admin/cluster/node?url={Uri.EscapeDataString(cluster.Nodes[1].Url)}&tag=C", null), "already a member");
        await AssertRefusedAsync(await cluster.Http.PutAsync($"{a.Url}/admin/databases?name=Big&replicationFactor=3", null), "more than the cluster's 2 nodes");
        await AssertRefusedAsync(await cluster.Http.PutAsync($"{a.Url}/admin/databases/node?name=Nowhere&node=Q", null), "'Q' is not a member");
        // A name a lone server refuses is refused in a cluster too, on a follower as on the leader.
        foreach (var node in cluster.Nodes)
        {
            await AssertRefusedAsync(await cluster.Http.PutAsync($"{node.Url}/admin/databases?name=My%20Orders&replicationFactor=2", null), "has ' ' at position 2");
        }
        var leader = await cluster.WaitForLeaderAsync();
        var leaderTag = (await cluster.TopologyAsync(leader))!.Value.GetProperty("NodeTag").GetString();
        await AssertRefusedAsync(await cluster.Http.DeleteAsync($"{leader.Url}/admin/cluster/node?nodeTag={leaderTag}"), "leads the cluster");
    }

    [Fact]
    public async Task ARestartDoesNotReplayAnOldDeleteOntoADatabaseCreatedAgain()
    {
        // At start DotNext applies the committed log again (no snapshot yet): the delete of the first
        // Again must not remove the second one's copy, which holds the only version of its document.
        await using var cluster = await TestCluster.StartAsync(2);
        var b = cluster.Nodes[1];
        var onB = Json("""{"DatabaseName":"Again","Topology":{"Members":["B"]}}""");
        await JsonAsync(await cluster.Http.PutAsync($"{b.Url}/admin/databases", onB));
        using (var deleted = await cluster.Http.DeleteAsync($"{b.Url}/admin/databases?name=Again"))
        {
            Assert.Equal(HttpStatusCode.NoContent, deleted.StatusCode);
        }
        await JsonAsync(await cluster.Http.PutAsync($"{b.Url}/admin/databases", Json("""{"DatabaseName":"Again","Topology":{"Members":["B"]}}""")));
        using (var put = await cluster.Http.PutAsync($"{b.Url}/databases/Again/docs?id=users/1", Json("""{"Name":"kept"}""")))
        {
            Assert.Equal(HttpStatusCode.Created, put.StatusCode);
        }

        b.Kill();
        await b.RestartAsync();
        await Poll.UntilAsync(async () => (await cluster.TopologyAsync(b)) is { } t && t.GetProperty("NodeTag").GetString() == "B", TestCluster.Timeout, "B back");
        // Give the replayed log time to be acted on: the record's etag on B reaches the last create's.
        var last = (await cluster.Http.GetFromJsonAsync<JsonElement>($"{cluster.Nodes[0].Url}/cluster/topology")).GetProperty("Etag").GetInt64();
        await Poll.UntilAsync(async () => (await cluster.Http.GetFromJsonAsync<JsonElement>($"{b.Url}/cluster/topology")).GetProperty("Etag").GetInt64() >= last,
            TestCluster.Timeout, "B to apply its log again");
        await Poll.UntilAsync(async () => (await cluster.DatabasesOnAsync(b)).Contains("Again"), TestCluster.Timeout, "Again on B");
        using var get = await cluster.Http.GetAsync($"{b.Url}/databases/Again/docs?id=users/1");
        Assert.Equal(HttpStatusCode.OK, get.StatusCode);
        Assert.Contains("kept", await get.Content.ReadAsStringAsync());
    }
}
