using System.Net;
using System.Text;
using System.Text.Json;
using Jackdaw.Client.Tests.Infrastructure;
using Jackdaw.Server.Tests.Infrastructure;

namespace Jackdaw.Client.Tests.Integration;

/// <summary>
/// RavenDB's client configuration kept by a (lone) server: a store that holds an older version is
/// told to refresh it on its next request, and follows the server's <c>ReadBalanceBehavior</c>.
/// </summary>
public sealed class ClientConfigurationServerTests(ServerFixture server) : IClassFixture<ServerFixture>
{
    private static readonly TimeSpan Convergence = TimeSpan.FromSeconds(30);

    [Fact]
    public async Task AReadBalanceBehaviorSetOnTheServerIsPickedUpByTheStore()
    {
        using var store = await server.NewStoreAsync();
        var database = store.Database!;
        using var http = new HttpClient { BaseAddress = new Uri(server.Url) };
        await SaveAsync(store);
        Assert.Null(store.Executor.NodesOf(database).ClientConfiguration);

        using (var put = await http.PutAsync($"/databases/{database}/admin/configuration/client", Json("""{"ReadBalanceBehavior":"RoundRobin","MaxNumberOfRequestsPerSession":30}""")))
        {
            var text = await put.Content.ReadAsStringAsync();
            Assert.True(put.IsSuccessStatusCode, text);
            Assert.True(JsonDocument.Parse(text).RootElement.GetProperty("RaftCommandIndex").GetInt64() > 0);
        }
        // The next answer says the store's version is old; the store fetches the new one.
        await Poll.UntilAsync(async () =>
        {
            await SaveAsync(store);
            return store.Executor.NodesOf(database).ClientConfiguration?.ReadBalanceBehavior == ReadBalanceBehavior.RoundRobin;
        }, Convergence, "the store to take RoundRobin from the server");

        // Server-wide, and the database's own disabled: the server-wide one applies.
        using (var put = await http.PutAsync("/admin/configuration/client", Json("""{"ReadBalanceBehavior":"FastestNode"}""")))
        {
            Assert.True(put.IsSuccessStatusCode, await put.Content.ReadAsStringAsync());
        }
        using (var put = await http.PutAsync($"/databases/{database}/admin/configuration/client", Json("""{"ReadBalanceBehavior":"RoundRobin","Disabled":true}""")))
        {
            Assert.True(put.IsSuccessStatusCode, await put.Content.ReadAsStringAsync());
        }
        await Poll.UntilAsync(async () =>
        {
            await SaveAsync(store);
            return store.Executor.NodesOf(database).ClientConfiguration?.ReadBalanceBehavior == ReadBalanceBehavior.FastestNode;
        }, Convergence, "the store to take the server-wide FastestNode");
        var effective = JsonDocument.Parse(await http.GetStringAsync($"/databases/{database}/configuration/client")).RootElement;
        Assert.Equal("FastestNode", effective.GetProperty("Configuration").GetProperty("ReadBalanceBehavior").GetString());
        Assert.Equal(effective.GetProperty("Etag").GetInt64(), store.Executor.NodesOf(database).ClientConfiguration!.Etag);
        var serverWide = JsonDocument.Parse(await http.GetStringAsync("/configuration/client")).RootElement;
        Assert.Equal("FastestNode", serverWide.GetProperty("ReadBalanceBehavior").GetString());

        // A bad value is a 400 with RavenDB's error shape; nothing changes.
        using (var bad = await http.PutAsync($"/databases/{database}/admin/configuration/client", Json("""{"ReadBalanceBehavior":"Sideways"}""")))
        {
            Assert.Equal(HttpStatusCode.BadRequest, bad.StatusCode);
            var error = JsonDocument.Parse(await bad.Content.ReadAsStringAsync()).RootElement;
            Assert.Contains("ReadBalanceBehavior", error.GetProperty("Message").GetString());
        }
        using (var missing = await http.GetAsync("/databases/nope/configuration/client"))
        {
            Assert.Equal(HttpStatusCode.ServiceUnavailable, missing.StatusCode);
        }
    }

    private static async Task SaveAsync(DocumentStore store)
    {
        using var session = store.OpenAsyncSession();
        await session.StoreAsync(new User { Name = "u" }, "users/1");
        await session.SaveChangesAsync();
    }

    private static StringContent Json(string json) => new(json, Encoding.UTF8, "application/json");
}
