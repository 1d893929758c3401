using System.Net;
using System.Net.Sockets;
using Jackdaw.Client.Tests.Infrastructure;
using Jackdaw.Server.Tests.Infrastructure;

namespace Jackdaw.Client.Tests.Integration;

/// <summary>
/// The store learns a database's topology and fails over between its nodes, against real servers
/// behind <see cref="NodeProxy"/> nodes (<see cref="TestCluster"/>): each server holds its own
/// <c>users/node</c>, so a read says which node served it.
/// </summary>
public sealed class FailoverServerTests
{
    private static readonly TimeSpan Convergence = TimeSpan.FromSeconds(60);

    [Fact]
    public async Task TheFirstUrlThatAnswersGivesTheTopology()
    {
        await using var cluster = await TestCluster.StartAsync("A", "B");
        using var store = new DocumentStore { Urls = [$"http://127.0.0.1:{ClosedPort()}", cluster["B"].Url], Database = TestCluster.Database }.Initialize();

        Assert.Equal("A", await TestCluster.ReadNodeAsync(store));

        var topology = await store.GetTopologyAsync();
        Assert.Equal(1, topology.Etag);
        Assert.Equal(["A", "B"], topology.Nodes.Select(n => n.ClusterTag));
        Assert.Equal([cluster["A"].Url, cluster["B"].Url], topology.Nodes.Select(n => n.Url));
        Assert.All(topology.Nodes, n => Assert.Equal(ServerNode.Role.Member, n.ServerRole));
        Assert.Single(cluster["B"].Requests, r => r.PathAndQuery == "/topology?name=shop");
    }

    [Fact]
    public async Task AStoreWhoseFirstUrlIsDeadUsesTheServerThatAnswers()
    {
        // A real server's own topology: itself, as the URL it was reached by.
        await using var cluster = await TestCluster.StartAsync("A");
        using var store = new DocumentStore { Urls = [$"http://127.0.0.1:{ClosedPort()}", cluster.ServerUrl("A")], Database = TestCluster.Database }.Initialize();

        Assert.Equal("A", await TestCluster.ReadNodeAsync(store));
        var topology = await store.GetTopologyAsync();
        Assert.Equal([cluster.ServerUrl("A")], topology.Nodes.Select(n => n.Url));
    }

    [Fact]
    public async Task AServerThatNamesItselfByAnotherUrlIsStillReachedByTheStoresUrl()
    {
        // As a server behind a proxy that ends TLS or rewrites the host names itself.
        await using var cluster = await TestCluster.StartAsync("A");
        cluster.AdvertisedUrls["A"] = $"http://127.0.0.1:{ClosedPort()}";
        using var store = cluster.NewStore();

        Assert.Equal("A", await TestCluster.ReadNodeAsync(store));

        var node = Assert.Single((await store.GetTopologyAsync()).Nodes);
        Assert.Equal(cluster["A"].Url, node.Url);
        Assert.Equal("A", node.ClusterTag);
    }

    [Fact]
    public async Task RequestsGoToThePreferredNodeAndFailOverWhenItStops()
    {
        await using var cluster = await TestCluster.StartAsync("A", "B");
        using var store = cluster.NewStore();

        Assert.Equal("A", await TestCluster.ReadNodeAsync(store));
        await SaveAsync(store, "users/1");
        Assert.Equal(["A"], await cluster.HoldersOfAsync("users/1"));

        Assert.Equal("A", (await store.GetPreferredNodeAsync()).ClusterTag);
        await cluster["A"].StopAsync();

        Assert.Equal("B", await TestCluster.ReadNodeAsync(store));
        Assert.Equal("B", (await store.GetPreferredNodeAsync()).ClusterTag);
        await SaveAsync(store, "users/2");
        Assert.Equal(["B"], await cluster.HoldersOfAsync("users/2"));
        // Requests carry the topology etag the store holds, quoted, as RavenDB's clients send it.
        Assert.All(cluster["B"].Requests.Where(r => r.PathAndQuery.StartsWith("/databases/", StringComparison.Ordinal) && !r.PathAndQuery.Contains("failure=check", StringComparison.Ordinal)), r => Assert.Equal("\"1\"", r.TopologyEtag));
    }

    [Fact]
    public async Task A503FromANodeSendsTheRequestToTheNextAndLaterOnesStraightThere()
    {
        await using var cluster = await TestCluster.StartAsync("A", "B");
        using var store = cluster.NewStore();
        cluster["A"].Mode = NodeProxy.Behaviour.Unavailable;

        Assert.Equal("B", await TestCluster.ReadNodeAsync(store));
        Assert.Equal("B", await TestCluster.ReadNodeAsync(store));

        // A answered the first read only: it stays failed while its health checks get 503.
        Assert.Equal(1, cluster["A"].DocumentRequests);
    }

    [Fact]
    public async Task AWriteWhoseConnectionBreaksIsSentToTheNextNodeAndTheFailedNodeIsUsedAgainOnceItAnswers()
    {
        await using var cluster = await TestCluster.StartAsync("A", "B");
        using var store = cluster.NewStore();
        Assert.Equal("A", await TestCluster.ReadNodeAsync(store));
        cluster["A"].Mode = NodeProxy.Behaviour.Reset;

        await SaveAsync(store, "users/1");
        Assert.Equal(["B"], await cluster.HoldersOfAsync("users/1"));
        Assert.Equal("B", await TestCluster.ReadNodeAsync(store));

        cluster["A"].Mode = NodeProxy.Behaviour.Forward;
        await Poll.UntilAsync(async () => await TestCluster.ReadNodeAsync(store) == "A", Convergence, "reads to go back to node A");
        Assert.Contains(cluster["A"].Requests, r => r.PathAndQuery == "/databases/shop/stats?failure=check");
    }

    [Fact]
    public async Task ANodeWithoutTheDatabaseIsNotCheckedForever()
    {
        await using var cluster = await TestCluster.StartAsync("A", "B");
        using var store = cluster.NewStore();
        Assert.Equal("A", await TestCluster.ReadNodeAsync(store));
        await cluster.DeleteDatabaseOnAsync("A");

        Assert.Equal("B", await TestCluster.ReadNodeAsync(store));

        // A answers its health check 503 with Database-Missing: the check stops there, A stays failed.
        var nodes = store.Executor.NodesOf(TestCluster.Database);
        var a = (await store.GetTopologyAsync()).Nodes.Single(n => n.ClusterTag == "A");
        await Poll.UntilAsync(() => Task.FromResult(!nodes.IsChecking(a)), Convergence, "the health check of node A to stop");
        Assert.Contains(cluster["A"].Requests, r => r.PathAndQuery == "/databases/shop/stats?failure=check");
        Assert.True(nodes.Selector!.IsFailed(a));
        Assert.Equal("B", await TestCluster.ReadNodeAsync(store));
    }

    [Fact]
    public async Task AnAttachmentFromAForwardOnlyStreamIsNotSentToTheNextNodeAndTheErrorSaysWhy()
    {
        await using var cluster = await TestCluster.StartAsync("A", "B");
        using var store = cluster.NewStore();
        Assert.Equal("A", await TestCluster.ReadNodeAsync(store));
        cluster["A"].Mode = NodeProxy.Behaviour.Reset;

        using (var session = store.OpenAsyncSession())
        {
            await session.StoreAsync(new User { Name = "forward" }, "users/forward");
            session.Advanced.Attachments.Store("users/forward", "a.bin", new ForwardOnlyStream([1, 2, 3]));

            var error = await Assert.ThrowsAsync<ServerUnavailableException>(() => session.SaveChangesAsync());

            Assert.Contains("forward-only", error.Message);
            Assert.Contains(cluster["A"].Url, error.Message);
        }

        Assert.DoesNotContain(cluster["B"].Requests, r => r.PathAndQuery.Contains("/bulk_docs", StringComparison.Ordinal));

        // A seekable stream is sent again, to the next node.
        using (var session = store.OpenAsyncSession())
        {
            await session.StoreAsync(new User { Name = "seekable" }, "users/seekable");
            session.Advanced.Attachments.Store("users/seekable", "a.bin", new MemoryStream([1, 2, 3]));
            await session.SaveChangesAsync();
        }

        Assert.Equal(["B"], await cluster.HoldersOfAsync("users/seekable"));
    }

    [Fact]
    public async Task WhenEveryNodeIsDownTheErrorNamesEachNode()
    {
        await using var cluster = await TestCluster.StartAsync("A", "B");
        using var store = cluster.NewStore();
        Assert.Equal("A", await TestCluster.ReadNodeAsync(store));
        cluster["A"].Mode = NodeProxy.Behaviour.Reset;
        await cluster["B"].StopAsync();

        var error = await Assert.ThrowsAsync<AllTopologyNodesDownException>(() => TestCluster.ReadNodeAsync(store));

        Assert.Contains(cluster["A"].Url, error.Message);
        Assert.Contains(cluster["B"].Url, error.Message);
    }

    [Fact]
    public async Task RoundRobinGivesEachSessionTheNextNodeForReadsAndWritesGoToThePreferredNode()
    {
        await using var cluster = await TestCluster.StartAsync("A", "B", "C");
        using var store = cluster.NewStore(c => c.ReadBalanceBehavior = ReadBalanceBehavior.RoundRobin);

        var served = new List<string>();
        for (var i = 0; i < 6; i++)
        {
            using var session = store.OpenAsyncSession();
            var first = (await session.LoadAsync<User>(TestCluster.NodeDocument))!.Name;
            session.Advanced.Clear();
            // A session keeps its node.
            Assert.Equal(first, (await session.LoadAsync<User>(TestCluster.NodeDocument))!.Name);
            served.Add(first);
        }

        Assert.Equal(["A", "B", "C"], served.Distinct().Order());
        Assert.All(["A", "B", "C"], tag => Assert.Equal(2, served.Count(s => s == tag)));

        for (var i = 0; i < 3; i++)
        {
            await SaveAsync(store, $"users/{i}");
            Assert.Equal(["A"], await cluster.HoldersOfAsync($"users/{i}"));
        }
    }

    [Fact]
    public async Task FastestNodeReadsFromTheNodeThatWinsTheSpeedTest()
    {
        await using var cluster = await TestCluster.StartAsync("A", "B");
        // A gap a loaded machine does not close. Each read waits for A, the preferred node (the
        // answer used is the chosen node's), so reads go ten at a time.
        cluster["A"].Delay = TimeSpan.FromSeconds(3);
        using var store = cluster.NewStore(c => c.ReadBalanceBehavior = ReadBalanceBehavior.FastestNode);

        Assert.Equal("A", await TestCluster.ReadNodeAsync(store));
        var selector = store.Executor.NodesOf(TestCluster.Database).Selector!;
        // During the test every read goes to both nodes; B answers first each time and wins after ten.
        for (var i = 0; i < 3 && selector.InSpeedTestPhase; i++)
        {
            await Task.WhenAll(Enumerable.Range(0, 10).Select(_ => TestCluster.ReadNodeAsync(store)));
        }

        Assert.False(selector.InSpeedTestPhase);
        var before = cluster["A"].DocumentRequests;
        Assert.Equal("B", await TestCluster.ReadNodeAsync(store));
        Assert.Equal("B", await TestCluster.ReadNodeAsync(store));
        Assert.Equal(before, cluster["A"].DocumentRequests);
    }

    [Fact]
    public async Task ARefreshTopologyAnswerMakesTheStoreTakeTheNewTopology()
    {
        await using var cluster = await TestCluster.StartAsync("A", "B");
        using var store = cluster.NewStore();
        Assert.Equal("A", await TestCluster.ReadNodeAsync(store));

        cluster.Order = ["B", "A"];
        cluster.Etag = 2;
        cluster["A"].SaysRefreshTopology = true;

        await Poll.UntilAsync(async () => await TestCluster.ReadNodeAsync(store) == "B", Convergence, "reads to move to node B, first in the new topology");
        Assert.Equal(2, (await store.GetTopologyAsync()).Etag);
        Assert.Equal("\"2\"", cluster["B"].Requests.Last(r => r.PathAndQuery.Contains("/docs", StringComparison.Ordinal)).TopologyEtag);
    }

    [Fact]
    public async Task AnOlderTopologyDoesNotReplaceANewerOne()
    {
        await using var cluster = await TestCluster.StartAsync("A", "B");
        cluster.Etag = 5;
        using var store = cluster.NewStore();
        Assert.Equal("A", await TestCluster.ReadNodeAsync(store));

        cluster.Order = ["B", "A"];
        cluster.Etag = 4;
        cluster["A"].SaysRefreshTopology = true;
        await TestCluster.ReadNodeAsync(store);
        // The answer started a refresh, from node A: wait until it was applied (or not), not only asked.
        await store.Executor.NodesOf(TestCluster.Database).LastRefresh.WaitAsync(Convergence);
        Assert.Equal(2, cluster["A"].Requests.Count(r => r.PathAndQuery.StartsWith("/topology", StringComparison.Ordinal)));

        Assert.Equal("A", await TestCluster.ReadNodeAsync(store));
        Assert.Equal(5, (await store.GetTopologyAsync()).Etag);
    }

    [Fact]
    public async Task TheServersClientConfigurationOverridesTheConventionsReadBalanceUntilItIsDisabled()
    {
        await using var cluster = await TestCluster.StartAsync("A", "B");
        using var store = cluster.NewStore();
        Assert.Equal("A", await TestCluster.ReadNodeAsync(store));
        Assert.Equal("\"0\"", cluster["A"].Requests.Last().ClientConfigurationEtag);

        cluster.ClientConfiguration = (7, """{"Etag":7,"Configuration":{"Disabled":false,"ReadBalanceBehavior":"RoundRobin","MaxNumberOfRequestsPerSession":30}}""");
        await Poll.UntilAsync(async () => (await ReadFromSessionsAsync(store, 4)).Distinct().Count() == 2, Convergence, "sessions to read from both nodes");
        Assert.Equal(ReadBalanceBehavior.RoundRobin, store.Executor.NodesOf(TestCluster.Database).ClientConfiguration!.ReadBalanceBehavior);
        Assert.Equal(["A", "A", "B", "B"], (await ReadFromSessionsAsync(store, 4)).Order());
        Assert.Equal("\"7\"", cluster["A"].Requests.Last(r => r.PathAndQuery.Contains("/docs", StringComparison.Ordinal)).ClientConfigurationEtag);

        cluster.ClientConfiguration = (8, """{"Etag":8,"Configuration":{"Disabled":true,"ReadBalanceBehavior":"RoundRobin"}}""");
        await Poll.UntilAsync(async () => (await ReadFromSessionsAsync(store, 4)).All(n => n == "A"), Convergence, "sessions to read from node A again");
    }

    [Fact]
    public async Task TheChangesFeedConnectsToTheNodeTheTopologyPrefers()
    {
        await using var cluster = await TestCluster.StartAsync("A", "B");
        using var store = cluster.NewStore();
        cluster["A"].Mode = NodeProxy.Behaviour.Unavailable;
        Assert.Equal("B", await TestCluster.ReadNodeAsync(store));

        // The proxy does not carry WebSockets: the attempt it records is enough.
        using var changes = store.Changes();
        await Poll.UntilAsync(() => Task.FromResult(cluster["B"].Requests.Any(r => r.PathAndQuery == "/databases/shop/changes")), Convergence, "the changes feed to try node B");
        Assert.DoesNotContain(cluster["A"].Requests, r => r.PathAndQuery == "/databases/shop/changes");
    }

    [Fact]
    public async Task AnOperationsStateIsAskedOfTheNodeThatRunsIt()
    {
        await using var cluster = await TestCluster.StartAsync("A", "B");
        using var store = cluster.NewStore();
        var operation = await store.Operations.PatchByQueryAsync("from Users update { this.Patched = true; }");

        // B becomes the preferred node; the operation runs on A (every test server calls itself A).
        cluster.Order = ["B", "A"];
        cluster.Etag = 2;
        cluster["A"].SaysRefreshTopology = true;
        await Poll.UntilAsync(async () => await TestCluster.ReadNodeAsync(store) == "B", Convergence, "node B to be preferred");

        var result = await operation.WaitForCompletionAsync(Convergence);

        Assert.Equal(1, result.Total);
        Assert.Contains(cluster["A"].Requests, r => r.PathAndQuery.StartsWith("/databases/shop/operations/state", StringComparison.Ordinal));
        Assert.DoesNotContain(cluster["B"].Requests, r => r.PathAndQuery.StartsWith("/databases/shop/operations/state", StringComparison.Ordinal));
    }

    [Fact]
    public async Task AStreamFailsOverBeforeItsAnswerStarts()
    {
        await using var cluster = await TestCluster.StartAsync("A", "B");
        using var store = cluster.NewStore();
        cluster["A"].Mode = NodeProxy.Behaviour.Reset;

        using var session = store.OpenAsyncSession();
        var names = new List<string>();
        await foreach (var result in session.Advanced.StreamAsync<User>(startsWith: "users/"))
        {
            names.Add(result.Document.Name);
        }

        Assert.Equal(["B"], names);
    }

    [Fact]
    public async Task ABulkInsertStreamsToTheNodePreferredWhenItStarts()
    {
        await using var cluster = await TestCluster.StartAsync("A", "B");
        using var store = cluster.NewStore();
        Assert.Equal("A", await TestCluster.ReadNodeAsync(store));
        await cluster["A"].StopAsync();
        Assert.Equal("B", await TestCluster.ReadNodeAsync(store));

        await using (var insert = store.BulkInsert())
        {
            await insert.StoreAsync(new User { Name = "bulk" }, "users/bulk");
        }

        Assert.Equal(["B"], await cluster.HoldersOfAsync("users/bulk"));
    }

    [Fact]
    public async Task ABulkInsertThatCannotReachItsNodeMarksItFailed()
    {
        await using var cluster = await TestCluster.StartAsync("A", "B");
        using var store = cluster.NewStore();
        Assert.Equal("A", await TestCluster.ReadNodeAsync(store));
        await cluster["A"].StopAsync();

        await Assert.ThrowsAsync<ServerUnavailableException>(async () =>
        {
            await using var insert = store.BulkInsert();
            await insert.StoreAsync(new User { Name = "lost" }, "users/lost");
        });

        // No request failed over yet: only the insert can have told the store that A is down.
        Assert.Equal("B", (await store.GetPreferredNodeAsync()).ClusterTag);
        await using (var insert = store.BulkInsert())
        {
            await insert.StoreAsync(new User { Name = "bulk" }, "users/bulk");
        }

        Assert.Equal(["B"], await cluster.HoldersOfAsync("users/bulk"));
    }

    private static async Task<List<string>> ReadFromSessionsAsync(DocumentStore store, int sessions)
    {
        var served = new List<string>();
        for (var i = 0; i < sessions; i++)
        {
            served.Add(await TestCluster.ReadNodeAsync(store));
        }

        return served;
    }

    private static async Task SaveAsync(DocumentStore store, string id)
    {
        using var session = store.OpenAsyncSession();
        await session.StoreAsync(new User { Name = id }, id);
        await session.SaveChangesAsync();
    }

    private sealed class ForwardOnlyStream(byte[] data) : MemoryStream(data)
    {
        public override bool CanSeek => false;
    }

    private static int ClosedPort()
    {
        using var listener = new TcpListener(IPAddress.Loopback, 0);
        listener.Start();
        var port = ((IPEndPoint)listener.LocalEndpoint).Port;
        listener.Stop();
        return port;
    }
}
