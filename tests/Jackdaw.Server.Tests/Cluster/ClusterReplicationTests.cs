using System.Collections.Concurrent;
using System.Net;
using System.Net.Http.Json;
using System.Text;
using System.Text.Json;
using Jackdaw.Server.Tests.Infrastructure;

namespace Jackdaw.Server.Tests.Cluster;

/// <summary>
/// The cluster and replication together, in real processes: a database of replication factor 3
/// created through the cluster is replicated between its nodes (the cluster hands replication
/// each database's nodes), and writes acknowledged with write assurance survive the death of the
/// node they were written to.
/// </summary>
[Collection(RunsAlone.Name)]
public sealed class ClusterReplicationTests
{
    private const string Database = "Orders";

    private static readonly TimeSpan Converge = ClusterDocuments.Converge;

    [Fact]
    public async Task ADatabaseOfFactorThreeReplicatesWritesOnEveryNodeToTheOthers()
    {
        await using var cluster = await TestCluster.StartAsync(3);
        await CreateDatabaseAsync(cluster);

        // A write on each node, one generated id (it carries the writing node's tag).
        for (var i = 0; i < 3; i++)
        {
            using var put = await cluster.Http.PutAsync($"{cluster.Nodes[i].Url}/databases/{Database}/docs?id=orders/{i}", Body($$$"""{"Node":{{{i}}},"@metadata":{"@collection":"Orders"}}"""));
            Assert.Equal(HttpStatusCode.Created, put.StatusCode);
        }
        using (var generated = await cluster.Http.PutAsync($"{cluster.Nodes[1].Url}/databases/{Database}/docs?id=orders/", Body("""{"@metadata":{"@collection":"Orders"}}""")))
        {
            var text = await generated.Content.ReadAsStringAsync();
            Assert.True(generated.IsSuccessStatusCode, text);
            Assert.EndsWith("-B", JsonDocument.Parse(text).RootElement.GetProperty("Id").GetString(), StringComparison.Ordinal);
        }
        using (var delete = await cluster.Http.DeleteAsync($"{cluster.Nodes[2].Url}/databases/{Database}/docs?id=orders/0"))
        {
            Assert.Equal(HttpStatusCode.NoContent, delete.StatusCode);
        }

        var documents = await ConvergedAsync(cluster);
        Assert.Equal(3, documents.Count);
        Assert.DoesNotContain("orders/0", documents.Keys);
        Assert.Contains("orders/1", documents.Keys);
        Assert.Contains("orders/2", documents.Keys);
    }

    [Fact]
    public async Task WritesAcknowledgedWithAReplicaSurviveTheirNodeKilledAgainAndAgain()
    {
        await using var cluster = await TestCluster.StartAsync(3);
        await CreateDatabaseAsync(cluster);

        var acknowledged = new ConcurrentDictionary<string, int>();
        var target = 0;
        using var stop = new CancellationTokenSource();
        var writers = Enumerable.Range(0, 16).Select(w => Task.Run(async () =>
        {
            var sequence = 0;
            while (!stop.IsCancellationRequested)
            {
                var node = cluster.Nodes[Volatile.Read(ref target)];
                var id = $"orders/{w}-{sequence}";
                try
                {
                    using var cts = new CancellationTokenSource(TimeSpan.FromSeconds(30));
                    using var response = await cluster.Http.PostAsync(
                        $"{node.Url}/databases/{Database}/bulk_docs?waitForReplicasTimeout=00%3A00%3A30&numberOfReplicasToWaitFor=1&throwOnTimeoutInWaitForReplicas=true",
                        Body(JsonSerializer.Serialize(new { Commands = new[] { new { Id = id, Type = "PUT", Document = new Dictionary<string, object> { ["Writer"] = w, ["Sequence"] = sequence, ["@metadata"] = new Dictionary<string, string> { ["@collection"] = "Orders" } } } } })),
                        cts.Token);
                    if (response.IsSuccessStatusCode)
                    {
                        acknowledged[id] = sequence;
                        sequence++;
                    }
                }
                catch (Exception e) when (e is HttpRequestException or TaskCanceledException)
                {
                    // The node died under the request: not acknowledged, written again elsewhere.
                }
                await Task.Delay(5);
            }
        })).ToList();

        for (var round = 0; round < 3; round++)
        {
            var victim = cluster.Nodes[Volatile.Read(ref target)];
            var before = acknowledged.Count;
            await Poll.UntilAsync(() => Task.FromResult(acknowledged.Count >= before + 50), Converge, "writes acknowledged before the kill");
            victim.Kill();
            // The writers move to the next node, as a client fails over.
            Volatile.Write(ref target, (Volatile.Read(ref target) + 1) % 3);
            var afterKill = acknowledged.Count;
            await Poll.UntilAsync(() => Task.FromResult(acknowledged.Count >= afterKill + 50), Converge, "writes acknowledged by the next node");
            await victim.RestartAsync();
        }
        await stop.CancelAsync();
        await Task.WhenAll(writers);

        var documents = await ConvergedAsync(cluster);
        foreach (var (id, _) in acknowledged)
        {
            Assert.True(documents.ContainsKey(id), $"acknowledged {id} is missing");
        }
    }

    private static Task CreateDatabaseAsync(TestCluster cluster) => ClusterDocuments.CreateDatabaseAsync(cluster, Database);

    private static Task<Dictionary<string, string>> ConvergedAsync(TestCluster cluster) => ClusterDocuments.ConvergedAsync(cluster, Database);

    private static StringContent Body(string json) => new(json, Encoding.UTF8, "application/json");
}
