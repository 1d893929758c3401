using System.Net;
using System.Net.Http.Json;
using System.Text.Json;
using Jackdaw.Server.Tests.Infrastructure;

namespace Jackdaw.Server.Tests.Cluster;

/// <summary>A server that never had a node added stays a cluster of one, whatever is asked of it.</summary>
public sealed class LoneServerTests
{
    [Fact]
    public async Task AnAddThatCannotGoAheadLeavesALoneServerLone()
    {
        await using var server = await InProcessServer.StartAsync();
        // Nothing listens there: refused before the server founds a cluster.
        using (var refused = await server.Client.PutAsync("/admin/cluster/node?url=http://127.0.0.1:9&tag=B", null))
        {
            Assert.Equal(HttpStatusCode.BadRequest, refused.StatusCode);
            Assert.Contains("does not answer", await refused.Content.ReadAsStringAsync());
        }
        using (var own = await server.Client.PutAsync("/admin/cluster/node?url=http://127.0.0.1:9&tag=A", null))
        {
            Assert.Equal(HttpStatusCode.BadRequest, own.StatusCode);
            Assert.Contains("this server's own", await own.Content.ReadAsStringAsync());
        }
        Assert.False(server.Host.Server.Cluster.IsClustered);
        Assert.False(File.Exists(Path.Combine(server.DataDir, "System", "Cluster", "node.json")));
        var topology = await server.Client.GetFromJsonAsync<JsonElement>("/cluster/topology");
        Assert.Equal("A", topology.GetProperty("NodeTag").GetString());
        Assert.Equal(1, topology.GetProperty("Etag").GetInt64());
    }

    [Fact]
    public async Task APassiveNodeGivenAnotherSpellingOfItsUrlIsNotAdded()
    {
        await using var passive = await InProcessServer.StartAsync("--Cluster:Passive=true");
        var own = (await passive.Client.GetFromJsonAsync<JsonElement>("/cluster/topology")).GetProperty("NodeUrl").GetString()!;
        var other = own.Replace("127.0.0.1", "localhost", StringComparison.Ordinal);
        Assert.NotEqual(own, other);
        await using var lone = await InProcessServer.StartAsync();
        using var refused = await lone.Client.PutAsync($"/admin/cluster/node?url={Uri.EscapeDataString(other)}", null);
        Assert.Equal(HttpStatusCode.BadRequest, refused.StatusCode);
        Assert.Contains($"knows itself as {own}", await refused.Content.ReadAsStringAsync());
        Assert.False(lone.Host.Server.Cluster.IsClustered);
    }
}
