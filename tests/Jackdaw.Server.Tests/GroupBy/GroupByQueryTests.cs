using System.Net;
using System.Text.Json;
using Jackdaw.Server.Indexing;
using Jackdaw.Server.Tests.Infrastructure;

namespace Jackdaw.Server.Tests.GroupBy;

/// <summary>Group-by queries end to end: the auto map-reduce index they make, widen and reuse, and their answers.</summary>
public sealed class GroupByQueryTests
{
    private static async Task<(HttpStatusCode Status, JsonElement Json)> SendAsync(InProcessServer server, string rql, string query = "")
    {
        var body = JsonSerializer.Serialize(new { Query = rql, WaitForNonStaleResults = true, WaitForNonStaleResultsTimeout = "00:02:00" });
        using var response = await server.Client.PostAsync("/databases/Shop/queries" + query, Api.Json(body));
        return (response.StatusCode, await Api.JsonAsync(response));
    }

    private static async Task<JsonElement> QueryAsync(InProcessServer server, string rql, string query = "")
    {
        var (status, json) = await SendAsync(server, rql, query);
        Assert.True(status == HttpStatusCode.OK, json.ToString());
        return json;
    }

    private static async Task<InProcessServer> StartWithOrdersAsync()
    {
        var server = await InProcessServer.StartAsync(o => o.Indexing = new IndexingOptions { IdleCheckInterval = TimeSpan.FromHours(1) });
        using (await server.Client.PutAsync("/admin/databases?name=Shop", null))
        {
        }
        // 30 orders over 3 companies: company i%3, freight i, lines p/(i%2) x i and p/9 x 1.
        var commands = string.Join(',', Enumerable.Range(1, 30).Select(i =>
            JsonSerializer.Serialize(new { Type = "PUT", Id = $"orders/{i}", Document = Order(i) })));
        using (var bulk = await server.Client.PostAsync("/databases/Shop/bulk_docs", Api.Json("{\"Commands\":[" + commands + "]}")))
        {
            Assert.Equal(HttpStatusCode.OK, bulk.StatusCode);
        }
        return server;
    }

    private static Dictionary<string, object> Order(int i) => new()
    {
        ["Company"] = $"companies/{i % 3}",
        ["Employee"] = $"employees/{i % 2}",
        ["Freight"] = i + 0.5m,
        ["ShipTo"] = new { City = i % 5 == 0 ? "Oslo" : "Rome" },
        ["Lines"] = new object[] { new { Product = $"products/{i % 2}", Quantity = i }, new { Product = "products/9", Quantity = 1 } },
        ["@metadata"] = new Dictionary<string, string> { ["@collection"] = "Orders" },
    };

    private static IndexStore Store(InProcessServer server) => IndexStore.Of(server.Host.Server.Databases.GetDatabase("Shop"));

    private static decimal FreightOf(int company) => Enumerable.Range(1, 30).Where(i => i % 3 == company).Sum(i => i + 0.5m);

    [Fact]
    public async Task AGroupByQueryAnswersCountsAndSumsPerKey()
    {
        await using var server = await StartWithOrdersAsync();
        var answer = await QueryAsync(server, "from Orders group by Company order by Company select Company, count() as Count, sum(Freight) as Freight");
        Assert.Equal("Auto/Orders/ByCountAndFreightReducedByCompany", answer.GetProperty("IndexName").GetString());
        var rows = answer.GetProperty("Results").EnumerateArray().ToList();
        Assert.Equal(3, rows.Count);
        for (var c = 0; c < 3; c++)
        {
            Assert.Equal($"companies/{c}", rows[c].GetProperty("Company").GetString());
            Assert.Equal(10, rows[c].GetProperty("Count").GetInt32());
            Assert.Equal(FreightOf(c), rows[c].GetProperty("Freight").GetDecimal());
            Assert.Equal(JsonValueKind.Object, rows[c].GetProperty("@metadata").ValueKind);
        }
    }

    [Fact]
    public async Task WhereAndOrderByApplyToTheAggregatesAndTheirAliases()
    {
        await using var server = await StartWithOrdersAsync();
        var answer = await QueryAsync(server, "from Orders group by Company where Total > 150 order by Total as double desc select key() as Company, sum(Freight) as Total");
        var rows = answer.GetProperty("Results").EnumerateArray().ToList();
        var expected = Enumerable.Range(0, 3).Where(c => FreightOf(c) > 150).OrderByDescending(FreightOf).ToList();
        Assert.Equal(expected.Select(c => $"companies/{c}"), rows.Select(r => r.GetProperty("Company").GetString()));
        Assert.Equal(expected.Select(FreightOf), rows.Select(r => r.GetProperty("Total").GetDecimal()));
        Assert.Equal(["Company", "Total", "@metadata"], rows[0].EnumerateObject().Select(p => p.Name));

        var counted = await QueryAsync(server, "from Orders group by ShipTo.City where Count > 10 order by Count as long desc select ShipTo.City, count()");
        var city = Assert.Single(counted.GetProperty("Results").EnumerateArray());
        Assert.Equal("Rome", city.GetProperty("ShipTo.City").GetString());
        Assert.Equal(24, city.GetProperty("Count").GetInt32());
    }

    [Fact]
    public async Task SeveralFieldsAndArrayElementsGroup()
    {
        await using var server = await StartWithOrdersAsync();
        var pairs = await QueryAsync(server, "from Orders group by Company, Employee select key() as Key, Company, Employee, count() as Count");
        Assert.Equal("Auto/Orders/ByCountReducedByCompanyAndEmployee", pairs.GetProperty("IndexName").GetString());
        var rows = pairs.GetProperty("Results").EnumerateArray().ToList();
        Assert.Equal(6, rows.Count);
        Assert.All(rows, r => Assert.Equal(5, r.GetProperty("Count").GetInt32()));
        Assert.All(rows, r => Assert.Equal(r.GetProperty("Company").GetString(), r.GetProperty("Key").GetProperty("Company").GetString()));

        var products = await QueryAsync(server, "from Orders group by Lines[].Product order by Lines[].Product select key() as Product, count() as Lines, sum(Lines[].Quantity) as Quantity");
        Assert.Equal("Auto/Orders/ByCountAndLines[].QuantityReducedByLines[].Product", products.GetProperty("IndexName").GetString());
        var byProduct = products.GetProperty("Results").EnumerateArray().ToDictionary(r => r.GetProperty("Product").GetString()!);
        Assert.Equal(3, byProduct.Count);
        Assert.Equal(15, byProduct["products/0"].GetProperty("Lines").GetInt32());
        Assert.Equal(Enumerable.Range(1, 30).Where(i => i % 2 == 0).Sum(), byProduct["products/0"].GetProperty("Quantity").GetInt32());
        Assert.Equal(30, byProduct["products/9"].GetProperty("Quantity").GetInt32());
    }

    [Fact]
    public async Task AnUpdateOrDeleteChangesItsGroup()
    {
        await using var server = await StartWithOrdersAsync();
        const string rql = "from Orders group by Company where Company = 'companies/1' select count() as Count, sum(Freight) as Freight";
        var before = Assert.Single((await QueryAsync(server, rql)).GetProperty("Results").EnumerateArray());
        Assert.Equal(10, before.GetProperty("Count").GetInt32());
        using (await server.Client.PutAsync("/databases/Shop/docs?id=orders/1", Api.Json("""{"Company":"companies/1","Freight":100,"@metadata":{"@collection":"Orders"}}""")))
        {
        }
        using (await server.Client.DeleteAsync("/databases/Shop/docs?id=orders/4"))
        {
        }
        var after = Assert.Single((await QueryAsync(server, rql)).GetProperty("Results").EnumerateArray());
        Assert.Equal(9, after.GetProperty("Count").GetInt32());
        Assert.Equal(FreightOf(1) - 1.5m - 4.5m + 100, after.GetProperty("Freight").GetDecimal());
    }

    [Fact]
    public async Task QueriesReuseAndWidenAutoMapReduceIndexesAndTheNarrowerGoes()
    {
        await using var server = await StartWithOrdersAsync();
        var store = Store(server);
        Assert.Equal("Auto/Orders/ByCountReducedByCompany", (await QueryAsync(server, "from Orders group by Company select count()")).GetProperty("IndexName").GetString());
        // The other order of the same select reuses it; a sum widens it.
        Assert.Equal("Auto/Orders/ByCountReducedByCompany", (await QueryAsync(server, "from Orders group by Company where Count > 1 select key(), count()")).GetProperty("IndexName").GetString());
        var explain = await QueryAsync(server, "from Orders group by Company select count(), sum(Freight)", "?debug=explain");
        Assert.Equal("Auto/Orders/ByCountAndFreightReducedByCompany", explain.GetProperty("IndexName").GetString());
        Assert.Contains(explain.GetProperty("Results").EnumerateArray(), r => r.GetProperty("Reason").GetString()!.Contains("does not have sum(Freight)", StringComparison.Ordinal));
        Assert.Equal(["Auto/Orders/ByCountReducedByCompany"], store.Indexes.Select(i => i.Name));
        Assert.Equal("Auto/Orders/ByCountAndFreightReducedByCompany", (await QueryAsync(server, "from Orders group by Company select sum(Freight)")).GetProperty("IndexName").GetString());
        await store.RemoveCoveredAutoIndexesAsync();
        Assert.Equal(["Auto/Orders/ByCountAndFreightReducedByCompany"], store.Indexes.Select(i => i.Name));
        Assert.Equal("Auto/Orders/ByCountAndFreightReducedByCompany", (await QueryAsync(server, "from Orders group by Company select count()")).GetProperty("IndexName").GetString());
        // Another grouping is another index; an auto map of the collection is untouched.
        Assert.Equal("Auto/Orders/ByCountReducedByEmployee", (await QueryAsync(server, "from Orders group by Employee select count()")).GetProperty("IndexName").GetString());
        Assert.Equal("Auto/Orders/ByCompany", (await QueryAsync(server, "from Orders where Company = 'companies/1'")).GetProperty("IndexName").GetString());
        await store.RemoveCoveredAutoIndexesAsync();
        Assert.Equal(3, store.Indexes.Count);
        Assert.Contains(store.Indexes, i => i.Definition.TypeName == "AutoMapReduce" && store.AutoDeleteAt(i) is not null);
    }

    [Theory]
    [InlineData("from Orders group by Company select Freight", 36, "not a group-by field")]
    [InlineData("from Orders group by Company where Freight > 1 select count()", 35, "none of their fields")]
    [InlineData("from Orders group by Company order by id() select count()", 38, "id()")]
    [InlineData("from Orders group by Company filter Count > 1 select count()", 36, "'filter' examines documents")]
    public async Task ABadGroupByQueryIsA400NamingThePosition(string rql, int position, string mentions)
    {
        await using var server = await StartWithOrdersAsync();
        var (status, json) = await SendAsync(server, rql);
        Assert.Equal(HttpStatusCode.BadRequest, status);
        Assert.Contains($"position {position} ", json.GetProperty("Message").GetString(), StringComparison.Ordinal);
        Assert.Contains(mentions, json.GetProperty("Message").GetString(), StringComparison.Ordinal);
    }
}
