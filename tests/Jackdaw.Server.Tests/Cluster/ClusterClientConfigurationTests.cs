using System.Net.Http.Json;
using System.Text;
using System.Text.Json;
using Jackdaw.Server.Tests.Infrastructure;

namespace Jackdaw.Server.Tests.Cluster;

/// <summary>RavenDB's client configuration on a cluster: in the state, set through any node, the same on every node.</summary>
[Collection(RunsAlone.Name)]
public sealed class ClusterClientConfigurationTests
{
    [Fact]
    public async Task AConfigurationSetThroughAFollowerIsAnsweredByEveryNodeWithTheSameEtag()
    {
        await using var cluster = await TestCluster.StartAsync(2);
        await ClusterDocuments.CreateDatabaseAsync(cluster, "Orders", replicationFactor: 2);
        var (a, b) = (cluster.Nodes[0], cluster.Nodes[1]);

        using (var put = await cluster.Http.PutAsync($"{b.Url}/databases/Orders/admin/configuration/client", new StringContent("""{"ReadBalanceBehavior":"RoundRobin"}""", Encoding.UTF8, "application/json")))
        {
            Assert.True(put.IsSuccessStatusCode, await put.Content.ReadAsStringAsync());
        }
        long etag = 0;
        foreach (var node in new[] { a, b })
        {
            await Poll.UntilAsync(async () =>
            {
                var answer = await cluster.Http.GetFromJsonAsync<JsonElement>($"{node.Url}/databases/Orders/configuration/client");
                if (answer.GetProperty("Configuration").ValueKind != JsonValueKind.Object)
                {
                    return false;
                }
                Assert.Equal("RoundRobin", answer.GetProperty("Configuration").GetProperty("ReadBalanceBehavior").GetString());
                etag = etag == 0 ? answer.GetProperty("Etag").GetInt64() : etag;
                return answer.GetProperty("Etag").GetInt64() == etag;
            }, TestCluster.Timeout, $"the configuration on {node.Url}");
        }

        // A client holding an older version is told to refresh on either node; one holding this one is not.
        foreach (var node in new[] { a, b })
        {
            using var old = new HttpRequestMessage(HttpMethod.Get, $"{node.Url}/databases/Orders/docs?id=users/1");
            old.Headers.TryAddWithoutValidation("Client-Configuration-Etag", "\"0\"");
            using var told = await cluster.Http.SendAsync(old);
            Assert.Equal("true", told.Headers.TryGetValues("Refresh-Client-Configuration", out var values) ? values.Single() : null);
            using var current = new HttpRequestMessage(HttpMethod.Get, $"{node.Url}/databases/Orders/docs?id=users/1");
            current.Headers.TryAddWithoutValidation("Client-Configuration-Etag", $"\"{etag}\"");
            using var quiet = await cluster.Http.SendAsync(current);
            Assert.False(quiet.Headers.Contains("Refresh-Client-Configuration"));
        }
    }
}
