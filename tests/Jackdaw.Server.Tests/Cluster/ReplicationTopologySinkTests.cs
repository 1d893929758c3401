using System.Collections.Concurrent;
using System.Net;
using Jackdaw.Server.Cluster;
using Jackdaw.Server.Tests.Infrastructure;

namespace Jackdaw.Server.Tests.Cluster;

/// <summary>
/// Two in-process servers formed into a cluster: each tells replication (its
/// <see cref="IReplicationTopologySink"/>) a database's other nodes as the records change, and the
/// documents layer gets the node's tag.
/// </summary>
public sealed class ReplicationTopologySinkTests
{
    private sealed class RecordingSink : IReplicationTopologySink
    {
        public ConcurrentQueue<(string Database, string MyTag, string Others)> Calls { get; } = new();

        public void SetTopology(string database, string myTag, IReadOnlyList<ClusterPeer> others) =>
            Calls.Enqueue((database, myTag, string.Join(",", others.Select(o => $"{o.Tag}={o.Url}"))));
    }

    [Fact]
    public async Task EachNodeIsToldTheOtherNodesOfItsDatabasesAsTheyChange()
    {
        await using var a = await InProcessServer.StartAsync();
        await using var b = await InProcessServer.StartAsync("--Cluster:Passive=true");
        var sinkA = new RecordingSink();
        var sinkB = new RecordingSink();
        a.Host.Server.Cluster.Replication = sinkA;
        b.Host.Server.Cluster.Replication = sinkB;
        Assert.Equal("?", b.Host.Server.Cluster.NodeTag);

        var urlA = a.Host.Server.Cluster.Url!;
        var urlB = b.Host.Server.Cluster.Url!;
        using (var added = await a.Client.PutAsync($"/admin/cluster/node?url={Uri.EscapeDataString(urlB)}&tag=B", null))
        {
            Assert.Equal(HttpStatusCode.OK, added.StatusCode);
        }
        await Poll.UntilAsync(() => Task.FromResult(b.Host.Server.Cluster.NodeTag == "B"), TestCluster.Timeout, "B to learn its tag");
        Assert.Equal("B", b.Host.Server.Databases.NodeTag);
        Assert.True(File.Exists(Path.Combine(b.DataDir, "System", "Cluster", "node.json")));

        using (var created = await a.Client.PutAsync("/admin/databases?name=Orders&replicationFactor=2", null))
        {
            Assert.Equal(HttpStatusCode.Created, created.StatusCode);
        }
        await Poll.UntilAsync(() => Task.FromResult(sinkB.Calls.Contains(("Orders", "B", $"A={urlA}"))), TestCluster.Timeout, "B told of A");
        Assert.Contains(("Orders", "A", $"B={urlB}"), sinkA.Calls);

        // B taken off the database: B is told it has no one (before its copy goes), A that it is alone.
        using (var request = new HttpRequestMessage(HttpMethod.Delete, "/admin/databases") { Content = Api.Json("""{"DatabaseNames":["Orders"],"FromNodes":["B"]}""") })
        using (var deleted = await a.Client.SendAsync(request))
        {
            Assert.Equal(HttpStatusCode.OK, deleted.StatusCode);
        }
        await Poll.UntilAsync(() => Task.FromResult(sinkB.Calls.Contains(("Orders", "B", "")) && sinkA.Calls.Contains(("Orders", "A", ""))), TestCluster.Timeout, "both told");
        await Poll.UntilAsync(() => Task.FromResult(!b.Host.Server.Databases.Names.Contains("Orders")), TestCluster.Timeout, "B's copy deleted");
    }

    [Fact]
    public async Task ALoneServerThatFoundsAClusterKeepsItsDatabasesAsRecordsOnA()
    {
        await using var a = await InProcessServer.StartAsync();
        using (var created = await a.Client.PutAsync("/admin/databases?name=Old", null))
        {
            Assert.Equal(HttpStatusCode.Created, created.StatusCode);
        }
        Assert.False(Directory.Exists(Path.Combine(a.DataDir, "System", "Cluster")));
        await using var b = await InProcessServer.StartAsync("--Cluster:Passive=true");
        using (var added = await a.Client.PutAsync($"/admin/cluster/node?url={Uri.EscapeDataString(b.Host.Server.Cluster.Url!)}", null))
        {
            Assert.Equal(HttpStatusCode.OK, added.StatusCode);
        }

        var record = a.Host.Server.Cluster.State.Databases["Old"];
        Assert.Equal(new[] { "A" }, record.Nodes);
        Assert.Equal(new[] { "A", "B" }, a.Host.Server.Cluster.State.Members.Keys);
        Assert.True(File.Exists(Path.Combine(a.DataDir, "System", "Cluster", "node.json")));
        using var topology = await a.Client.GetAsync("/topology?name=Old");
        Assert.Equal(HttpStatusCode.OK, topology.StatusCode);
    }

    [Fact]
    public async Task APassiveNodeRefusesADataFolderThatHoldsDatabases()
    {
        using var data = new TempFolder("jackdaw-passive");
        Directory.CreateDirectory(Path.Combine(data.Path, "Databases", "Old"));
        using var server = ServerProcess.Start($"--urls http://127.0.0.1:0 --data-dir \"{data.Path}\" --Cluster:Passive=true");
        Assert.NotEqual(0, await server.WaitForExitAsync(TimeSpan.FromSeconds(60)));
        Assert.Contains("joins a cluster fresh", server.Output, StringComparison.Ordinal);
    }
}
