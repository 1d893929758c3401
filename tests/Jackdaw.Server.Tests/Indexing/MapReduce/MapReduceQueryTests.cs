using System.Net;
using System.Text.Json;
using Jackdaw.Server.Tests.Infrastructure;

namespace Jackdaw.Server.Tests.Indexing.MapReduce;

/// <summary>
/// Queries of a map-reduce index answer its result rows as RavenDB does: where and order by over the
/// result fields, projections, paging with TotalResults, the key's document as an include,
/// WaitForNonStaleResults after a write, filter; each checked against the model.
/// </summary>
public sealed class MapReduceQueryTests(ServerFixture fixture) : IClassFixture<ServerFixture>
{
    private HttpClient Client => fixture.Client;

    private async Task<(string Db, Dictionary<string, Orders.Order> Model)> SeedAsync()
    {
        var db = await fixture.CreateDatabaseAsync();
        var random = new Random(55);
        var model = Enumerable.Range(0, 300).ToDictionary(i => $"orders/{i}", _ => Orders.Random(random, $"companies/{random.Next(12)}"), StringComparer.OrdinalIgnoreCase);
        await Orders.WriteAsync(Client, db, model.Select(p => (p.Key, (Orders.Order?)p.Value)));
        for (var i = 0; i < 12; i++)
        {
            using var put = await Client.PutAsync($"/databases/{db}/docs?id=companies/{i}", Api.Json($$$"""{"Name":"Company {{{i}}}","@metadata":{"@collection":"Companies"}}"""));
            Assert.Equal(HttpStatusCode.Created, put.StatusCode);
        }
        await Orders.PutIndexesAsync(Client, db, Orders.Index(Orders.ByCompany, [Orders.ByCompanyMap], Orders.ByCompanyReduce));
        return (db, model);
    }

    [Fact]
    public async Task WhereAndOrderByOverResultFieldsAnswerTheModel()
    {
        var (db, model) = await SeedAsync();
        var expected = Orders.ExpectedByCompany(model);
        var threshold = expected.Values.Select(v => v.Total).Order().ElementAt(expected.Count / 2);

        var answer = await Orders.QueryAsync(Client, db, $"from index '{Orders.ByCompany}' where Total > {threshold} order by Total as double desc");
        Assert.Equal(Orders.ByCompany, answer.GetProperty("IndexName").GetString());
        var rows = Orders.Rows(answer);
        Assert.Equal(expected.Where(p => p.Value.Total > threshold).OrderByDescending(p => p.Value.Total).Select(p => p.Key), rows.Select(Orders.CompanyOf));
        Assert.All(rows, r => Assert.Equal(expected[Orders.CompanyOf(r)].Count, r.GetProperty("Count").GetInt64()));
        // Every row carries @metadata (RavenDB's clients read it).
        Assert.All(rows, r => Assert.Equal(JsonValueKind.Object, r.GetProperty("@metadata").ValueKind));

        // Equality on the key, with a parameter; a key no order has: no row.
        var one = Assert.Single(Orders.Rows(await Orders.QueryAsync(Client, db, $"from index '{Orders.ByCompany}' where Company = $c", new { c = "companies/3" })));
        Assert.Equal(expected["companies/3"], (one.GetProperty("Count").GetInt64(), (long)one.GetProperty("Total").GetDouble()));
        Assert.Empty(Orders.Rows(await Orders.QueryAsync(Client, db, $"from index '{Orders.ByCompany}' where Company = 'companies/99'")));
        Assert.Equal(expected.Count(p => p.Value.Count >= 25), Orders.Rows(await Orders.QueryAsync(Client, db, $"from index '{Orders.ByCompany}' where Count >= 25")).Count);
    }

    [Fact]
    public async Task ProjectionsPagingAndTotalResults()
    {
        var (db, model) = await SeedAsync();
        var expected = Orders.ExpectedByCompany(model);
        var ordered = expected.Keys.Order(StringComparer.Ordinal).ToList();

        var projected = Orders.Rows(await Orders.QueryAsync(Client, db, $"from index '{Orders.ByCompany}' order by Company select Company, Total"));
        Assert.Equal(ordered, projected.Select(Orders.CompanyOf));
        foreach (var row in projected)
        {
            Assert.Equal(expected[Orders.CompanyOf(row)].Total, (long)row.GetProperty("Total").GetDouble());
            Assert.False(row.TryGetProperty("Count", out _), row.ToString());
        }

        var page = await Orders.QueryAsync(Client, db, $"from index '{Orders.ByCompany}' order by Company limit 4 offset 3");
        Assert.Equal(ordered.Skip(3).Take(4), Orders.Rows(page).Select(Orders.CompanyOf));
        Assert.Equal(expected.Count, page.GetProperty("TotalResults").GetInt64());
        var last = await Orders.QueryAsync(Client, db, $"from index '{Orders.ByCompany}' order by Company limit 5 offset {expected.Count - 2}");
        Assert.Equal(ordered.TakeLast(2), Orders.Rows(last).Select(Orders.CompanyOf));
    }

    [Fact]
    public async Task IncludeBringsTheKeysDocumentAndFilterNarrowsTheRows()
    {
        var (db, model) = await SeedAsync();
        var expected = Orders.ExpectedByCompany(model);

        var included = await Orders.QueryAsync(Client, db, $"from index '{Orders.ByCompany}' where Company = 'companies/4' include Company");
        Assert.Single(Orders.Rows(included));
        Assert.Equal("Company 4", included.GetProperty("Includes").GetProperty("companies/4").GetProperty("Name").GetString());

        var threshold = expected.Values.Select(v => v.Count).Order().ElementAt(expected.Count / 2);
        var filtered = await Orders.QueryAsync(Client, db, $"from index '{Orders.ByCompany}' filter Count > {threshold}");
        Assert.Equal(expected.Where(p => p.Value.Count > threshold).Select(p => p.Key).Order(StringComparer.Ordinal), Orders.Rows(filtered).Select(Orders.CompanyOf).Order(StringComparer.Ordinal));
    }

    [Fact]
    public async Task WaitForNonStaleResultsSeesTheWriteJustMade()
    {
        var (db, model) = await SeedAsync();
        for (var round = 0; round < 5; round++)
        {
            var id = $"orders/{round * 7}";
            model[id] = model[id] with { Company = "companies/new", Lines = [new Orders.Line(round + 1, 10)] };
            await Orders.WriteAsync(Client, db, [(id, model[id])]);
            // The query right after the write waits for the index to take it.
            var row = Assert.Single(Orders.Rows(await Orders.QueryAsync(Client, db, $"from index '{Orders.ByCompany}' where Company = 'companies/new'")));
            Assert.Equal(Orders.ExpectedByCompany(model)["companies/new"], (row.GetProperty("Count").GetInt64(), (long)row.GetProperty("Total").GetDouble()));
        }
        Orders.AssertSame(Orders.ExpectedByCompany(model), await Orders.ResultsAsync(Client, db, Orders.ByCompany, Orders.CompanyOf), "after the writes");
    }
}
