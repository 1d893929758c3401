using System.Net;
using Jackdaw.Server.Indexing;
using Jackdaw.Server.Tests.Infrastructure;

namespace Jackdaw.Server.Tests.Cluster;

/// <summary>
/// Two in-process servers formed into a cluster, with auto-index housekeeping shortened to seconds:
/// a recorded auto-index stays while one node still queries it, and the leader deletes it from the
/// record, on both nodes, once neither does (the follower's reports travel over the report route).
/// </summary>
public sealed class AutoIndexIdleOnEveryNodeTests
{
    private static readonly IndexingOptions Quick = new()
    {
        IdleCheckInterval = TimeSpan.FromMilliseconds(200),
        AutoIndexDeleteAfter = TimeSpan.FromSeconds(2),
    };

    private static async Task QueryAsync(InProcessServer server)
    {
        using var response = await server.Client.PostAsync("/databases/Shop/queries", Api.Json("""{"Query":"from Users where Name = 'Ann'"}"""));
        Assert.Equal(HttpStatusCode.OK, response.StatusCode);
    }

    [Fact]
    public async Task ARecordedAutoIndexIsDeletedByTheLeaderOnlyOnceNoNodeQueriesIt()
    {
        await using var a = await InProcessServer.StartAsync(o => o.Indexing = Quick);
        await using var b = await InProcessServer.StartAsync(o => o.Indexing = Quick, "--Cluster:Passive=true");
        using (var added = await a.Client.PutAsync($"/admin/cluster/node?url={Uri.EscapeDataString(b.Host.Server.Cluster.Url!)}&tag=B", null))
        {
            Assert.Equal(HttpStatusCode.OK, added.StatusCode);
        }
        using (var created = await a.Client.PutAsync("/admin/databases?name=Shop&replicationFactor=2", null))
        {
            Assert.Equal(HttpStatusCode.Created, created.StatusCode);
        }
        using (var put = await a.Client.PutAsync("/databases/Shop/docs?id=users/1", Api.Json("""{"Name":"Ann","@metadata":{"@collection":"Users"}}""")))
        {
            Assert.Equal(HttpStatusCode.Created, put.StatusCode);
        }
        await QueryAsync(a);
        var cluster = a.Host.Server.Cluster;
        await Poll.UntilAsync(() => Task.FromResult(cluster.RecordOf("Shop")?.Indexes.Count == 1), TestCluster.Timeout, "the auto-index to be recorded");
        var name = cluster.RecordOf("Shop")!.Indexes.Keys.Single();
        var storeB = IndexStore.Of(b.Host.Server.Databases.GetDatabase("Shop"));
        await Poll.UntilAsync(() => Task.FromResult(storeB.TryGet(name) is not null), TestCluster.Timeout, "B to build it");

        // B queries it for twice AutoIndexDeleteAfter: A's reports say expired, B's do not, and it stays.
        var until = DateTime.UtcNow + Quick.AutoIndexDeleteAfter * 2;
        using (var pace = new PeriodicTimer(TimeSpan.FromMilliseconds(200)))
        {
            while (DateTime.UtcNow < until && await pace.WaitForNextTickAsync())
            {
                await QueryAsync(b);
                Assert.True(cluster.RecordOf("Shop")!.Indexes.ContainsKey(name), "deleted while B still queried it");
            }
        }
        Assert.Contains(cluster.AutoIndexReports, r => r.Node == "B" && r.Indexes.Any(i => i.Name == name && !i.Expired));

        // Neither queries it now: the leader takes it out of the record, and both nodes delete it.
        var storeA = IndexStore.Of(a.Host.Server.Databases.GetDatabase("Shop"));
        await Poll.UntilAsync(() => Task.FromResult(cluster.RecordOf("Shop")!.Indexes.Count == 0), TestCluster.Timeout, "the leader to delete it");
        await Poll.UntilAsync(() => Task.FromResult(storeA.TryGet(name) is null && storeB.TryGet(name) is null), TestCluster.Timeout, "both copies to go");
        Assert.Contains(a.Logs.Records, r => r.Message.Contains($"Auto-index {name} of database Shop was not queried past AutoIndexDeleteAfter on any of its nodes", StringComparison.Ordinal));
    }
}
