using System.Net;
using System.Text.Json;
using Jackdaw.Server.Tests.Infrastructure;

namespace Jackdaw.Server.Tests.Indexing;

/// <summary>Trying an index without saving it, and the cleanup advisor.</summary>
public sealed class IndexToolsTests(ServerFixture fixture) : IClassFixture<ServerFixture>
{
    private HttpClient Client => fixture.Client;

    private async Task<string> SeedAsync()
    {
        var db = await fixture.CreateDatabaseAsync();
        var commands = string.Join(',', Enumerable.Range(1, 20).Select(i =>
            $"{{\"Type\":\"PUT\",\"Id\":\"orders/{i}\",\"Document\":{{\"Company\":\"companies/{i % 3}\",\"Freight\":{i * 2},{(i % 5 == 0 ? "" : "\"Inner\":{\"V\":1},")}\"@metadata\":{{\"@collection\":\"Orders\"}}}}}}"));
        using var bulk = await Client.PostAsync($"/databases/{db}/bulk_docs", Api.Json("{\"Commands\":[" + commands + "]}"));
        Assert.Equal(HttpStatusCode.OK, bulk.StatusCode);
        return db;
    }

    private async Task<JsonElement> TestAsync(string db, object body, HttpStatusCode expected = HttpStatusCode.OK)
    {
        using var response = await Client.PostAsync($"/databases/{db}/indexes/test", Api.Json(JsonSerializer.Serialize(body)));
        var json = await Api.JsonAsync(response);
        Assert.True(expected == response.StatusCode, json.ToString());
        return json;
    }

    [Fact]
    public async Task ATestRunAnswersTheQueryOverTheFirstDocumentsAndStoresNothing()
    {
        var db = await SeedAsync();
        var definition = new { Name = "Orders/Try", Maps = new[] { "map('Orders', o => ({ Company: o.Company, Double: o.Freight * 2, V: o.Inner.V }))" } };
        var answer = await TestAsync(db, new { IndexDefinition = definition, Query = "from index 'Orders/Try' where Double > 10 order by Double desc", MaxDocumentsToProcess = 8 });
        Assert.Equal(8, answer.GetProperty("DocumentsProcessed").GetInt32());
        // Of orders 1..8, Double = 4i > 10 for i >= 3; order 5 fails to map (no Inner).
        Assert.Equal(["orders/8", "orders/7", "orders/6", "orders/4", "orders/3"],
            answer.GetProperty("QueryResults").EnumerateArray().Select(r => r.GetProperty("@metadata").GetProperty("@id").GetString()));
        Assert.Equal(5, answer.GetProperty("TotalResults").GetInt64());
        var first = answer.GetProperty("MapResults")[0];
        Assert.Equal("orders/1", first.GetProperty("Document").GetString());
        Assert.Equal(4, first.GetProperty("Entries")[0].GetProperty("Double").GetDouble());
        var error = Assert.Single(answer.GetProperty("IndexErrors").EnumerateArray());
        Assert.Equal("orders/5", error.GetProperty("Document").GetString());

        using (var list = await Client.GetAsync($"/databases/{db}/indexes"))
        {
            Assert.Empty((await Api.JsonAsync(list)).GetProperty("Results").EnumerateArray());
        }
        Assert.Empty(Directory.GetDirectories(Path.Combine(fixture.Server.DataDir, "Databases", db, "Indexes")));

        // Without a query: every entry; bad input is a 400.
        Assert.Equal(20, (await TestAsync(db, new { IndexDefinition = definition, MaxDocumentsToProcess = 100 })).GetProperty("DocumentsProcessed").GetInt32());
        await TestAsync(db, new { Query = "from index 'X'" }, HttpStatusCode.BadRequest);
        await TestAsync(db, new { IndexDefinition = new { Name = "Bad", Maps = new[] { "map('Orders', o => ({ A: o. }))" } } }, HttpStatusCode.BadRequest);
        await TestAsync(db, new { IndexDefinition = definition, Query = "from Orders" }, HttpStatusCode.BadRequest);
        await TestAsync(db, new { IndexDefinition = definition, MaxDocumentsToProcess = 0 }, HttpStatusCode.BadRequest);
    }

    [Fact]
    public async Task TheCleanupAdvisorNamesUnusedCoveredMergeableAndErroredIndexes()
    {
        var db = await SeedAsync();
        var definitions = new
        {
            Indexes = new object[]
            {
                new { Name = "Orders/ByCompany", Maps = new[] { "map('Orders', o => ({ Company: o.Company }))" } },
                new { Name = "Orders/ByFreight", Maps = new[] { "map('Orders', (order) => ({ Freight: order.Freight }))" }, Fields = new { Freight = new { Storage = "Yes" } } },
                new { Name = "Orders/Broken", Maps = new[] { "map('Orders', o => ({ V: o.Missing.V + 1 }))" } },
            },
        };
        using (var put = await Client.PutAsync($"/databases/{db}/admin/indexes", Api.Json(JsonSerializer.Serialize(definitions))))
        {
            Assert.Equal(HttpStatusCode.Created, put.StatusCode);
        }
        var body = JsonSerializer.Serialize(new { Query = "from Orders where Company = 'companies/1'", WaitForNonStaleResults = true });
        using (await Client.PostAsync($"/databases/{db}/queries", Api.Json(body)))
        {
        }
        // Wait for the broken one to reach Error (20 documents is not 100 attempts: it stays Normal, with errors).
        await Task.Delay(300);

        using var response = await Client.GetAsync($"/databases/{db}/indexes/cleanup?unusedFor=00:00:00");
        var advice = (await Api.JsonAsync(response)).GetProperty("Results").EnumerateArray().ToList();
        string[] Names(JsonElement a) => a.GetProperty("Indexes").EnumerateArray().Select(n => n.GetString()!).ToArray();

        Assert.True(advice.Any(a => a.GetProperty("Type").GetString() == "Unused" && Names(a).SequenceEqual(["Orders/ByFreight"])), string.Join("\n", advice));
        var covered = Assert.Single(advice, a => a.GetProperty("Type").GetString() == "Covered");
        Assert.Equal(["Auto/Orders/ByCompany", "Orders/ByCompany"], Names(covered));
        var mergeable = advice.Where(a => a.GetProperty("Type").GetString() == "Mergeable").ToList();
        var plain = Assert.Single(mergeable, a => Names(a).SequenceEqual(["Orders/ByCompany", "Orders/ByFreight"]));
        var merged = plain.GetProperty("MergedDefinition");
        Assert.Equal("map('Orders', doc => ({ Company: doc.Company, Freight: doc.Freight }))", merged.GetProperty("Maps")[0].GetString());
        Assert.Equal("Yes", merged.GetProperty("Fields").GetProperty("Freight").GetProperty("Storage").GetString());
        Assert.Contains(mergeable, a => Names(a).Contains("Orders/Broken") && a.GetProperty("MergedDefinition").ValueKind == JsonValueKind.Null);

        // The merged definition is one a PUT takes.
        var mergedPut = JsonSerializer.Serialize(new { Indexes = new[] { merged } });
        using (var put = await Client.PutAsync($"/databases/{db}/admin/indexes", Api.Json(mergedPut)))
        {
            Assert.Equal(HttpStatusCode.Created, put.StatusCode);
        }
        using (var bad = await Client.GetAsync($"/databases/{db}/indexes/cleanup?unusedFor=soon"))
        {
            await Api.AssertErrorAsync(bad, HttpStatusCode.BadRequest, "BadRequestException");
        }
    }

    [Fact]
    public async Task AnIndexInErrorStateIsAdvised()
    {
        var db = await fixture.CreateDatabaseAsync();
        var commands = string.Join(',', Enumerable.Range(1, 150).Select(i =>
            $"{{\"Type\":\"PUT\",\"Id\":\"items/{i}\",\"Document\":{{\"N\":{i},\"@metadata\":{{\"@collection\":\"Items\"}}}}}}"));
        using (await Client.PostAsync($"/databases/{db}/bulk_docs", Api.Json("{\"Commands\":[" + commands + "]}")))
        {
        }
        using (await Client.PutAsync($"/databases/{db}/admin/indexes", Api.Json("{\"Indexes\":[{\"Name\":\"Items/Broken\",\"Maps\":[\"map('Items', i => ({ V: i.Missing.V }))\"]}]}")))
        {
        }
        JsonElement errored = default;
        for (var attempt = 0; attempt < 100 && errored.ValueKind == JsonValueKind.Undefined; attempt++)
        {
            await Task.Delay(50);
            using var response = await Client.GetAsync($"/databases/{db}/indexes/cleanup");
            errored = (await Api.JsonAsync(response)).GetProperty("Results").EnumerateArray().FirstOrDefault(a => a.GetProperty("Type").GetString() == "Errored");
        }
        Assert.Equal(JsonValueKind.Object, errored.ValueKind);
        Assert.True(errored.GetProperty("Evidence").GetProperty("MapErrors").GetInt64() >= 100);
    }
}
