using System.Net;
using Jackdaw.Server.Tests.Infrastructure;

namespace Jackdaw.Server.Tests.Documents;

/// <summary>Pages of documents under the default limits (QueryLimitTests has a lowered one).</summary>
public sealed class DocumentPagingTests(ServerFixture fixture) : IClassFixture<ServerFixture>
{
    private HttpClient Client => fixture.Client;

    [Fact]
    public async Task APageOfDocumentsMayHoldMoreThan1024()
    {
        // Once refused over 1,024; now held to Limits:MaxQueryLimit, as a query's limit is.
        var db = await fixture.CreateDatabaseAsync();
        var commands = string.Join(',', Enumerable.Range(0, 1500).Select(i => $"{{\"Type\":\"PUT\",\"Id\":\"items/{i}\",\"Document\":{{\"@metadata\":{{\"@collection\":\"Items\"}}}}}}"));
        using (var batch = await Client.PostAsync($"/databases/{db}/bulk_docs", Api.Json("{\"Commands\":[" + commands + "]}")))
        {
            Assert.Equal(HttpStatusCode.OK, batch.StatusCode);
        }
        foreach (var route in new[] { "docs?startsWith=items/&pageSize=2000", "docs?pageSize=2000", "collections/docs?name=Items&pageSize=2000" })
        {
            using var response = await Client.GetAsync($"/databases/{db}/{route}");
            Assert.Equal(1500, (await Api.JsonAsync(response)).GetProperty("Results").GetArrayLength());
        }
    }

    [Fact]
    public async Task ACollectionIsPagedNewestFirstOrOldestFirstByItsOrder()
    {
        // Items interleaved with another collection, and items/2 changed last: etag order, not id order.
        var db = await fixture.CreateDatabaseAsync();
        foreach (var (id, collection) in new[] { ("items/1", "Items"), ("others/1", "Others"), ("items/2", "Items"), ("items/3", "Items"), ("others/2", "Others"), ("items/4", "Items"), ("items/2", "Items") })
        {
            using var put = await Client.PutAsync($"/databases/{db}/docs?id={id}", Api.Json($"{{\"@metadata\":{{\"@collection\":\"{collection}\"}}}}"));
            Assert.Equal(HttpStatusCode.Created, put.StatusCode);
        }
        Assert.Equal(["items/2", "items/4", "items/3", "items/1"], await IdsAsync(db, "name=Items"));
        Assert.Equal(["items/2", "items/4", "items/3", "items/1"], await IdsAsync(db, "name=Items&order=desc"));
        Assert.Equal(["items/1", "items/3", "items/4", "items/2"], await IdsAsync(db, "name=items&order=ASC"));
        Assert.Equal(["items/3", "items/4"], await IdsAsync(db, "name=Items&order=asc&start=1&pageSize=2"));
        Assert.Equal(["others/1", "others/2"], await IdsAsync(db, "name=Others&order=asc"));
        Assert.Empty(await IdsAsync(db, "name=Nothing&order=asc"));

        using var bad = await Client.GetAsync($"/databases/{db}/collections/docs?name=Items&order=sideways");
        Assert.Equal(HttpStatusCode.BadRequest, bad.StatusCode);
        Assert.Contains("asc", (await Api.JsonAsync(bad)).GetProperty("Message").GetString());
    }

    private async Task<string[]> IdsAsync(string db, string query)
    {
        using var response = await Client.GetAsync($"/databases/{db}/collections/docs?{query}");
        Assert.Equal(HttpStatusCode.OK, response.StatusCode);
        return (await Api.JsonAsync(response)).GetProperty("Results").EnumerateArray().Select(d => d.GetProperty("@metadata").GetProperty("@id").GetString()!).ToArray();
    }
}
