using System.Net;
using System.Net.Http.Json;
using System.Net.WebSockets;
using System.Text;
using System.Text.Json;
using Jackdaw.Server.Tests.Infrastructure;

namespace Jackdaw.Server.Tests.Cluster;

/// <summary>
/// The subscriptions a lone server had go into the cluster's state when it founds a cluster (the
/// founder their mentor, from the positions it had), and a drop through another node reaches the
/// mentor's workers. Its revisions configuration goes there too.
/// </summary>
[Collection(RunsAlone.Name)]
public sealed class ClusterSubscriptionFoundingTests
{
    private const string Database = "Orders";

    [Fact]
    public async Task ALoneServersSubscriptionsGoIntoTheClusterAndADropThroughAnotherNodeReachesTheirWorkers()
    {
        await using var cluster = await TestCluster.StartAsync(2, form: false);
        var (a, b) = (cluster.Nodes[0], cluster.Nodes[1]);
        using (var created = await cluster.Http.PutAsync($"{a.Url}/admin/databases?name={Database}", null))
        {
            Assert.True(created.IsSuccessStatusCode, await created.Content.ReadAsStringAsync());
        }
        for (var i = 1; i <= 5; i++)
        {
            using var put = await cluster.Http.PutAsync($"{a.Url}/databases/{Database}/docs?id=orders/{i}", Body("""{"@metadata":{"@collection":"Orders"}}"""));
            Assert.Equal(HttpStatusCode.Created, put.StatusCode);
        }
        using (var paid = await cluster.Http.PutAsync($"{a.Url}/databases/{Database}/subscriptions", Body("""{"Name":"Paid","Query":"from Orders","ChangeVector":"3"}""")))
        {
            Assert.Equal(HttpStatusCode.Created, paid.StatusCode);
        }
        using (var off = await cluster.Http.PutAsync($"{a.Url}/databases/{Database}/subscriptions", Body("""{"Name":"Off","Query":"from Orders"}""")))
        {
            Assert.Equal(HttpStatusCode.Created, off.StatusCode);
        }
        using (var disabled = await cluster.Http.PostAsync($"{a.Url}/databases/{Database}/subscriptions/disable?name=Off", null))
        {
            Assert.Equal(HttpStatusCode.NoContent, disabled.StatusCode);
        }

        // A revisions configuration set alone goes into the record too, and B applies it.
        using (var revisions = await cluster.Http.PostAsync($"{a.Url}/databases/{Database}/admin/revisions/config", Body("""{"Default":{"MinimumRevisionsToKeep":3}}""")))
        {
            Assert.Equal(HttpStatusCode.OK, revisions.StatusCode);
        }

        using (var added = await cluster.Http.PutAsync($"{a.Url}/admin/cluster/node?url={Uri.EscapeDataString(b.Url)}&tag=B", null))
        {
            Assert.True(added.IsSuccessStatusCode, await added.Content.ReadAsStringAsync());
        }
        await Poll.UntilAsync(async () => (await cluster.TopologyAsync(b)) is { } t && t.GetProperty("NodeTag").GetString() == "B", TestCluster.Timeout, "B to learn its tag");
        using (var node = await cluster.Http.PutAsync($"{a.Url}/admin/databases/node?name={Database}&node=B", null))
        {
            Assert.True(node.IsSuccessStatusCode, await node.Content.ReadAsStringAsync());
        }

        // B knows both from the cluster's state, with A their mentor and Off still disabled.
        JsonElement paidOnB = default;
        await Poll.UntilAsync(async () => (paidOnB = await SubscriptionAsync(cluster, b, "Paid")).ValueKind == JsonValueKind.Object, TestCluster.Timeout, "Paid on B");
        Assert.Equal("A", paidOnB.GetProperty("MentorNode").GetString());
        var offOnB = await SubscriptionAsync(cluster, b, "Off");
        Assert.True(offOnB.GetProperty("Disabled").GetBoolean());
        // A serves Paid from the position it had acknowledged alone.
        var paidOnA = await SubscriptionAsync(cluster, a, "Paid");
        Assert.Equal(3, paidOnA.GetProperty("AckedEtag").GetInt64());
        Assert.Equal("A", paidOnA.GetProperty("MentorNode").GetString());

        await Poll.UntilAsync(async () =>
        {
            using var configuration = await cluster.Http.GetAsync($"{b.Url}/databases/{Database}/revisions/config");
            return configuration.StatusCode == HttpStatusCode.OK
                && JsonDocument.Parse(await configuration.Content.ReadAsStringAsync()).RootElement.GetProperty("Default").GetProperty("MinimumRevisionsToKeep").GetInt64() == 3;
        }, TestCluster.Timeout, "the founder's revisions configuration on B");

        // A worker on A is dropped by a drop sent to B.
        using var worker = new ClientWebSocket();
        await worker.ConnectAsync(new Uri($"{a.Url.Replace("http://", "ws://", StringComparison.Ordinal)}/databases/{Database}/subscriptions/connect?name=Paid"), CancellationToken.None);
        var first = await ReceiveAsync(worker);
        Assert.Contains("ConnectionStatus", first, StringComparison.Ordinal);
        using (var dropped = await cluster.Http.PostAsync($"{b.Url}/databases/{Database}/subscriptions/drop?name=Paid", null))
        {
            Assert.Equal(HttpStatusCode.NoContent, dropped.StatusCode);
        }
        using var timeout = new CancellationTokenSource(TimeSpan.FromSeconds(30));
        while (worker.State == WebSocketState.Open)
        {
            var message = await ReceiveAsync(worker, timeout.Token);
            if (message.Contains("dropped", StringComparison.Ordinal))
            {
                break;
            }
        }
    }

    private static async Task<JsonElement> SubscriptionAsync(TestCluster cluster, ClusterNodeProcess node, string name)
    {
        using var response = await cluster.Http.GetAsync($"{node.Url}/databases/{Database}/subscriptions?name={name}&pendingLimit=1");
        if (!response.IsSuccessStatusCode)
        {
            return default;
        }
        using var json = JsonDocument.Parse(await response.Content.ReadAsStringAsync());
        return json.RootElement.GetProperty("Results")[0].Clone();
    }

    /// <summary>One whole text message, or "" when the server closed the socket.</summary>
    private static async Task<string> ReceiveAsync(ClientWebSocket socket, CancellationToken token = default)
    {
        var buffer = new byte[64 * 1024];
        using var text = new MemoryStream();
        while (true)
        {
            var result = await socket.ReceiveAsync(buffer, token);
            if (result.MessageType == WebSocketMessageType.Close)
            {
                return "";
            }
            text.Write(buffer, 0, result.Count);
            if (result.EndOfMessage)
            {
                return Encoding.UTF8.GetString(text.ToArray());
            }
        }
    }

    private static StringContent Body(string json) => new(json, Encoding.UTF8, "application/json");
}
