using System.Net;
using System.Net.Http.Json;
using Jackdaw.Server.Cluster;
using Jackdaw.Server.Tests.Infrastructure;

namespace Jackdaw.Server.Tests.Cluster;

/// <summary>The route by which the nodes report the use of their recorded auto-indexes to the leader.</summary>
public sealed class AutoIndexUsageRouteTests
{
    [Fact]
    public async Task AReportThatIsNoneIsABadRequestAndOneToANodeThatDoesNotLeadAClusterIsRefusedWith503()
    {
        await using var server = await InProcessServer.StartAsync();

        using (var content = new StringContent("""{"Node":"B","Indexes":[]}""", System.Text.Encoding.UTF8, "application/json"))
        using (var bad = await server.Client.PostAsync(ClusterNode.AutoIndexUsagePath, content))
        {
            Assert.Equal(HttpStatusCode.BadRequest, bad.StatusCode);
            Assert.Contains("auto-index report", await bad.Content.ReadAsStringAsync());
        }
        using (var notJson = await server.Client.PostAsync(ClusterNode.AutoIndexUsagePath, new StringContent("[1,", System.Text.Encoding.UTF8, "application/json")))
        {
            Assert.Equal(HttpStatusCode.BadRequest, notJson.StatusCode);
        }
        var report = new AutoIndexUsageReport("B", "Shop", [new Server.Indexing.AutoIndexUsage("Auto/Users/ByName", DateTime.UtcNow, DateTime.UtcNow, false)]);
        using var refused = await server.Client.PostAsJsonAsync(ClusterNode.AutoIndexUsagePath, report, System.Text.Json.JsonSerializerOptions.Default);
        // A lone server leads no cluster: the reporting node asks again at its next pass.
        Assert.Equal(HttpStatusCode.ServiceUnavailable, refused.StatusCode);
        Assert.Empty(server.Host.Server.Cluster.AutoIndexReports);
    }
}
