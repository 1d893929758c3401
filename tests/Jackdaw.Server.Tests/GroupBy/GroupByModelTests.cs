using System.Net;
using System.Text.Json;
using Jackdaw.Server.Indexing;
using Jackdaw.Server.Tests.Infrastructure;

namespace Jackdaw.Server.Tests.GroupBy;

/// <summary>
/// Random orders written, updated, deleted and written again; after every step, once the indexes
/// are not stale, every group-by query (several groupings, count and sums) equals LINQ's GroupBy
/// over an in-memory model of the same orders.
/// </summary>
public sealed class GroupByModelTests
{
    private sealed record Line(string Product, int Quantity);

    private sealed record Order(string Company, string? Employee, decimal? Freight, string City, Line[] Lines);

    private static async Task<List<JsonElement>> QueryAsync(InProcessServer server, string rql)
    {
        var body = JsonSerializer.Serialize(new { Query = rql, WaitForNonStaleResults = true, WaitForNonStaleResultsTimeout = "00:02:00" });
        using var response = await server.Client.PostAsync("/databases/Model/queries", Api.Json(body));
        var json = await Api.JsonAsync(response);
        Assert.True(response.StatusCode == HttpStatusCode.OK, rql + ": " + json);
        return json.GetProperty("Results").EnumerateArray().ToList();
    }

    private static Order RandomOrder(Random random) => new(
        $"companies/{random.Next(6)}",
        random.Next(5) == 0 ? null : $"employees/{random.Next(3)}",
        random.Next(8) == 0 ? null : Math.Round((decimal)random.NextDouble() * 500, 2),
        random.Next(2) == 0 ? "Oslo" : "Rome",
        Enumerable.Range(0, random.Next(0, 4)).Select(_ => new Line($"products/{random.Next(5)}", random.Next(1, 20))).ToArray());

    private static string Document(Order order) => JsonSerializer.Serialize(new Dictionary<string, object?>
    {
        ["Company"] = order.Company,
        ["Employee"] = order.Employee,
        ["Freight"] = order.Freight,
        ["ShipTo"] = new { order.City },
        ["Lines"] = order.Lines,
        ["@metadata"] = new Dictionary<string, string> { ["@collection"] = "Orders" },
    });

    [Fact]
    public async Task EveryGroupByAnswerEqualsLinqGroupByAfterEveryStep()
    {
        await using var server = await InProcessServer.StartAsync(o => o.Indexing = new IndexingOptions { IdleCheckInterval = TimeSpan.FromHours(1) });
        using (await server.Client.PutAsync("/admin/databases?name=Model", null))
        {
        }
        var random = new Random(3030);
        var model = new Dictionary<string, Order>();
        for (var step = 0; step < 12; step++)
        {
            var commands = new List<string>();
            for (var change = 0; change < 25; change++)
            {
                var id = $"orders/{random.Next(40)}";
                if (model.ContainsKey(id) && random.Next(4) == 0)
                {
                    model.Remove(id);
                    commands.Add(JsonSerializer.Serialize(new { Type = "DELETE", Id = id }));
                }
                else
                {
                    // A new order, an update of one, or one written again after its delete.
                    var order = RandomOrder(random);
                    model[id] = order;
                    commands.Add($"{{\"Type\":\"PUT\",\"Id\":\"{id}\",\"Document\":{Document(order)}}}");
                }
            }
            using (var bulk = await server.Client.PostAsync("/databases/Model/bulk_docs", Api.Json("{\"Commands\":[" + string.Join(',', commands) + "]}")))
            {
                Assert.Equal(HttpStatusCode.OK, bulk.StatusCode);
            }
            var orders = model.Values.ToList();

            // By company: count and the sum of Freight (a missing Freight adds 0).
            var byCompany = await QueryAsync(server, "from Orders group by Company select key() as Company, count() as Count, sum(Freight) as Total");
            var expected = orders.GroupBy(o => o.Company).ToDictionary(g => g.Key, g => (Count: g.Count(), Total: g.Sum(o => o.Freight ?? 0)));
            Assert.Equal(expected.Count, byCompany.Count);
            foreach (var row in byCompany)
            {
                var (count, total) = expected[row.GetProperty("Company").GetString()!];
                Assert.Equal(count, row.GetProperty("Count").GetInt32());
                Assert.Equal(total, row.GetProperty("Total").GetDecimal());
            }

            // By company and employee (a missing employee is a null key).
            var pairs = await QueryAsync(server, "from Orders group by Company, Employee select Company, Employee, count()");
            var expectedPairs = orders.GroupBy(o => (o.Company, o.Employee)).ToDictionary(g => g.Key, g => g.Count());
            Assert.Equal(expectedPairs.Count, pairs.Count);
            foreach (var row in pairs)
            {
                var employee = row.GetProperty("Employee");
                var key = (row.GetProperty("Company").GetString()!, employee.ValueKind == JsonValueKind.Null ? null : employee.GetString());
                Assert.Equal(expectedPairs[key], row.GetProperty("Count").GetInt32());
            }

            // By a nested path, with where and order by on the count.
            var cities = await QueryAsync(server, "from Orders group by ShipTo.City where Count >= 1 order by Count as long desc select ShipTo.City as City, count() as Count");
            var expectedCities = orders.GroupBy(o => o.City).Select(g => (City: g.Key, Count: g.Count())).ToList();
            Assert.Equal(expectedCities.Select(c => c.Count).OrderDescending(), cities.Select(r => r.GetProperty("Count").GetInt32()));
            Assert.All(cities, r => Assert.Contains((r.GetProperty("City").GetString()!, r.GetProperty("Count").GetInt32()), expectedCities));

            // By the products of the lines, summing each line's quantity.
            var products = await QueryAsync(server, "from Orders group by Lines[].Product select key() as Product, count() as Lines, sum(Lines[].Quantity) as Quantity");
            var expectedProducts = orders.SelectMany(o => o.Lines).GroupBy(l => l.Product).ToDictionary(g => g.Key, g => (Lines: g.Count(), Quantity: g.Sum(l => l.Quantity)));
            Assert.Equal(expectedProducts.Count, products.Count);
            foreach (var row in products)
            {
                var (lines, quantity) = expectedProducts[row.GetProperty("Product").GetString()!];
                Assert.Equal(lines, row.GetProperty("Lines").GetInt32());
                Assert.Equal(quantity, row.GetProperty("Quantity").GetInt32());
            }
        }
    }
}
