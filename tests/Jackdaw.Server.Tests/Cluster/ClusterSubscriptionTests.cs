using System.Collections.Concurrent;
using System.Net;
using System.Text;
using System.Text.Json;
using Jackdaw.Server.Tests.Infrastructure;
using Xunit.Abstractions;

namespace Jackdaw.Server.Tests.Cluster;

/// <summary>
/// A subscription of a clustered database, in real processes: one node (its mentor, chosen by the
/// cluster) serves it; the .NET client's worker (<c>Jackdaw.Tests.SubscriptionWorker</c>, given
/// every node's URL) is sent there, and when the mentor dies another node takes over from the
/// position stored in the cluster: every matching document reaches the worker at least once.
/// </summary>
[Collection(RunsAlone.Name)]
public sealed class ClusterSubscriptionTests(ITestOutputHelper output)
{
    private const string Database = "Orders";

    /// <param name="name">The mentor is chosen by a hash of the name: "All" goes to A, the founder and leader (the leader dies with it); "Everything" to B.</param>
    [Theory]
    [InlineData("All")]
    [InlineData("Everything")]
    public async Task ASubscriptionWorkerKeepsReceivingEveryDocumentAfterItsMentorIsKilled(string name)
    {
        await using var cluster = await TestCluster.StartAsync(3);
        using var created = await cluster.Http.PutAsync($"{cluster.Nodes[0].Url}/admin/databases?name={Database}&replicationFactor=3", null);
        Assert.True(created.IsSuccessStatusCode, await created.Content.ReadAsStringAsync());
        foreach (var node in cluster.Nodes)
        {
            await Poll.UntilAsync(async () => (await cluster.DatabasesOnAsync(node)).Contains(Database), TestCluster.Timeout, $"{Database} on {node.Url}");
        }

        // Created through a node that may not lead (passed on to the leader), applied on every node.
        using (var subscription = await cluster.Http.PutAsync($"{cluster.Nodes[1].Url}/databases/{Database}/subscriptions", Body($$"""{"Name":"{{name}}","Query":"from Orders"}""")))
        {
            Assert.Equal(HttpStatusCode.Created, subscription.StatusCode);
        }
        var mentor = await MentorAsync(cluster, cluster.Nodes[1], name) ?? throw new InvalidOperationException("The subscription has no mentor.");
        foreach (var node in cluster.Nodes)
        {
            await Poll.UntilAsync(async () => await MentorAsync(cluster, node, name) == mentor, TestCluster.Timeout, $"the subscription on {node.Url}");
        }
        var mentorNode = cluster.NodeByTag(mentor);
        // The writes go to a node that stays; the worker starts at another one than the mentor (it is sent there).
        var writeTo = cluster.Nodes.First(n => n != mentorNode);
        var survivor = cluster.Nodes.Last(n => n != mentorNode);
        output.WriteLine($"mentor {mentor}, leader {(await cluster.WaitForLeaderAsync()).Url}; writes to {writeTo.Url}");

        using var folder = new TempFolder("jackdaw-cluster-subscription");
        var receivedFile = Path.Combine(folder.Path, "received.txt");
        var urls = string.Join(",", new[] { writeTo, survivor, mentorNode }.Select(n => n.Url));
        using var worker = ServerProcess.StartProgram("Jackdaw.Tests.SubscriptionWorker.dll", $"{urls} {Database} {name} \"{receivedFile}\" 5");

        var acknowledged = new ConcurrentDictionary<string, bool>();
        using var stop = new CancellationTokenSource();
        var writers = Enumerable.Range(0, 4).Select(w => Task.Run(async () =>
        {
            for (var i = 0; !stop.IsCancellationRequested; i++)
            {
                var ids = Enumerable.Range(0, 5).Select(k => $"orders/{w}-{i}-{k}").ToList();
                var commands = ids.Select(id => new { Id = id, Type = "PUT", Document = new Dictionary<string, object> { ["Writer"] = w, ["@metadata"] = new Dictionary<string, string> { ["@collection"] = "Orders" } } });
                try
                {
                    using var response = await cluster.Http.PostAsync($"{writeTo.Url}/databases/{Database}/bulk_docs", Body(JsonSerializer.Serialize(new { Commands = commands })));
                    if (response.IsSuccessStatusCode)
                    {
                        foreach (var id in ids)
                        {
                            acknowledged[id] = true;
                        }
                    }
                }
                catch (Exception e) when (e is HttpRequestException or TaskCanceledException)
                {
                }
                await Task.Delay(20);
            }
        })).ToList();

        try
        {
            await Poll.UntilAsync(() => Task.FromResult(ReceivedIds.Read(receivedFile).Count >= 200), TestCluster.Timeout, "the worker to receive from the mentor. Worker:\n" + worker.Output);
            var beforeKill = ReceivedIds.Read(receivedFile).Count;
            mentorNode.Kill();
            output.WriteLine($"killed {mentor} after {beforeKill} received, {acknowledged.Count} written");

            string? next = null;
            await Poll.UntilAsync(async () => (next = await MentorAsync(cluster, survivor, name)) is { } tag && tag != mentor, TestCluster.Timeout, "another node to serve the subscription");
            var atMove = acknowledged.Count;
            await Poll.UntilAsync(() => Task.FromResult(acknowledged.Count >= atMove + 200), TestCluster.Timeout, "writes after the move");
            output.WriteLine($"node {next} serves it now; {ReceivedIds.Read(receivedFile).Count} received");
            // The old mentor comes back as one node among others: it sends workers on to the new one.
            await mentorNode.RestartAsync();
            await Poll.UntilAsync(async () => await MentorAsync(cluster, mentorNode, name) == next, TestCluster.Timeout, "the restarted node to know the new mentor");
        }
        finally
        {
            await stop.CancelAsync();
            await Task.WhenAll(writers);
        }

        Dictionary<string, int> received = [];
        await Poll.UntilAsync(() =>
        {
            received = ReceivedIds.Read(receivedFile);
            return Task.FromResult(acknowledged.Keys.All(received.ContainsKey));
        }, TestCluster.Timeout, "every written document to reach the worker");
        var missing = acknowledged.Keys.Where(id => !received.ContainsKey(id)).ToList();
        Assert.True(missing.Count == 0, $"{missing.Count} documents never reached the worker, such as {string.Join(", ", missing.Take(5))}. Worker:\n{worker.Output}");
        output.WriteLine($"{acknowledged.Count} written, {received.Count} received, {received.Values.Count(n => n > 1)} of them more than once");

        // Deleted through one node, gone from every node.
        using (var deleted = await cluster.Http.DeleteAsync($"{survivor.Url}/databases/{Database}/subscriptions?name={name}"))
        {
            Assert.Equal(HttpStatusCode.NoContent, deleted.StatusCode);
        }
        foreach (var node in cluster.Nodes)
        {
            await Poll.UntilAsync(async () =>
            {
                using var response = await cluster.Http.GetAsync($"{node.Url}/databases/{Database}/subscriptions?name={name}&pendingLimit=1");
                return response.StatusCode == HttpStatusCode.NotFound;
            }, TestCluster.Timeout, $"the subscription deleted on {node.Url}");
        }
    }

    private static async Task<string?> MentorAsync(TestCluster cluster, ClusterNodeProcess node, string name)
    {
        try
        {
            using var response = await cluster.Http.GetAsync($"{node.Url}/databases/{Database}/subscriptions?name={name}&pendingLimit=1");
            if (!response.IsSuccessStatusCode)
            {
                return null;
            }
            using var json = JsonDocument.Parse(await response.Content.ReadAsStringAsync());
            return json.RootElement.GetProperty("Results")[0].TryGetProperty("MentorNode", out var mentor) ? mentor.GetString() : null;
        }
        catch (HttpRequestException)
        {
            return null;
        }
    }

    private static StringContent Body(string json) => new(json, Encoding.UTF8, "application/json");
}
