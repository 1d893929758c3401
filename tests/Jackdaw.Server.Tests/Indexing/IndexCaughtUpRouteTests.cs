using System.Net;
using System.Text.Json;
using Jackdaw.Server.Tests.Infrastructure;

namespace Jackdaw.Server.Tests.Indexing;

/// <summary><c>GET /indexes/caught-up</c>: each index's staleness against a cut-off etag, which a promotable's mentor asks.</summary>
public sealed class IndexCaughtUpRouteTests(ServerFixture fixture) : IClassFixture<ServerFixture>
{
    private HttpClient Client => fixture.Client;

    private async Task<JsonElement> CaughtUpAsync(string db, string query = "")
    {
        using var response = await Client.GetAsync($"/databases/{db}/indexes/caught-up{query}");
        Assert.Equal(HttpStatusCode.OK, response.StatusCode);
        return await Api.JsonAsync(response);
    }

    private static bool CaughtUp(JsonElement answer, string name) =>
        answer.GetProperty("Indexes").EnumerateArray().Single(i => i.GetProperty("Name").GetString() == name).GetProperty("CaughtUp").GetBoolean();

    private async Task PutAsync(string db, string id, string json)
    {
        using var put = await Client.PutAsync($"/databases/{db}/docs?id={id}", Api.Json(json));
        Assert.Equal(HttpStatusCode.Created, put.StatusCode);
    }

    [Fact]
    public async Task AnIndexIsCaughtUpToACutOffBeforeChangesOfItsCollectionsItHasNotProcessed()
    {
        var db = await fixture.CreateDatabaseAsync();
        await PutAsync(db, "orders/1", """{"Total":1,"@metadata":{"@collection":"Orders"}}""");
        using (var put = await Client.PutAsync($"/databases/{db}/admin/indexes", Api.Json("""{"Indexes":[{"Name":"Orders/Totals","Maps":["map('Orders', o => ({ Total: o.Total }))"]}]}""")))
        {
            Assert.Equal(HttpStatusCode.Created, put.StatusCode);
        }
        await Poll.UntilAsync(async () => CaughtUp(await CaughtUpAsync(db), "Orders/Totals"), TimeSpan.FromSeconds(30), "the index to catch up");
        var before = (await CaughtUpAsync(db)).GetProperty("LastEtag").GetInt64();

        // Stopped, it falls behind a new order; a change of another collection is nothing to it.
        using (var stop = await Client.PostAsync($"/databases/{db}/admin/indexes/stop?name=Orders/Totals", null))
        {
            Assert.True(stop.IsSuccessStatusCode, await stop.Content.ReadAsStringAsync());
        }
        await PutAsync(db, "users/1", """{"Name":"Ann","@metadata":{"@collection":"Users"}}""");
        Assert.True(CaughtUp(await CaughtUpAsync(db), "Orders/Totals"));
        await PutAsync(db, "orders/2", """{"Total":2,"@metadata":{"@collection":"Orders"}}""");
        var now = await CaughtUpAsync(db);
        Assert.True(now.GetProperty("LastEtag").GetInt64() > before);
        Assert.False(CaughtUp(now, "Orders/Totals"));
        Assert.True(CaughtUp(await CaughtUpAsync(db, $"?upTo={before + 1}"), "Orders/Totals"));
        Assert.False(CaughtUp(await CaughtUpAsync(db, $"?upTo={now.GetProperty("LastEtag").GetInt64()}"), "Orders/Totals"));

        foreach (var bad in new[] { "?upTo=-1", "?upTo=soon" })
        {
            using var refused = await Client.GetAsync($"/databases/{db}/indexes/caught-up{bad}");
            Assert.Equal(HttpStatusCode.BadRequest, refused.StatusCode);
            Assert.Contains("upTo", (await Api.JsonAsync(refused)).GetProperty("Message").GetString(), StringComparison.Ordinal);
        }
    }
}
