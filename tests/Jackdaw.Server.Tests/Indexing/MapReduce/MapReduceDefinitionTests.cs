using System.Net;
using System.Text.Json;
using Jackdaw.Server.Tests.Infrastructure;

namespace Jackdaw.Server.Tests.Indexing.MapReduce;

/// <summary>
/// Map-reduce definitions over HTTP: failures of a map or a reduce, definitions refused, load() in
/// maps, multi-map, the index routes (list, identical PUT, locks, priorities, reset, test run,
/// performance, cleanup advice) and side-by-side replacement of a changed Reduce.
/// </summary>
public sealed class MapReduceDefinitionTests(ServerFixture fixture) : IClassFixture<ServerFixture>
{
    private HttpClient Client => fixture.Client;

    private const string Throwing = "groupBy(r => r.Company).aggregate(g => { if (g.values.some(v => v.Total < 0)) { throw new Error('negative total'); } return { Company: g.key, Count: g.values.reduce((c, r) => c + r.Count, 0), Total: g.values.reduce((t, r) => t + r.Total, 0) }; })";

    private static Orders.Order Order(string company, int price, int quantity = 1) => new(company, "2024-01", [new Orders.Line(price, quantity)]);

    private async Task<Dictionary<string, (long Count, long Total)>> ByCompanyAsync(string db, string index = Orders.ByCompany) =>
        await Orders.ResultsAsync(Client, db, index, Orders.CompanyOf);

    private async Task<List<JsonElement>> ErrorsAsync(string db, string index)
    {
        using var response = await Client.GetAsync($"/databases/{db}/indexes/errors?name={Uri.EscapeDataString(index)}");
        return (await Api.JsonAsync(response)).GetProperty("Results")[0].GetProperty("Errors").EnumerateArray().ToList();
    }

    private async Task<JsonElement> StatsAsync(string db, string index)
    {
        using var response = await Client.GetAsync($"/databases/{db}/indexes/stats?name={Uri.EscapeDataString(index)}");
        return (await Api.JsonAsync(response)).GetProperty("Results")[0];
    }

    private async Task<List<string>> IndexNamesAsync(string db)
    {
        using var response = await Client.GetAsync($"/databases/{db}/indexes/stats");
        return (await Api.JsonAsync(response)).GetProperty("Results").EnumerateArray().Select(r => r.GetProperty("Name").GetString()!).ToList();
    }

    [Fact]
    public async Task AReduceThatThrowsForOneKeyDropsThatKeyAloneUntilItsEntriesAreFixed()
    {
        var db = await fixture.CreateDatabaseAsync();
        var model = new Dictionary<string, Orders.Order>(StringComparer.OrdinalIgnoreCase);
        for (var i = 0; i < 30; i++)
        {
            model[$"orders/{i}"] = Order($"companies/{i % 3}", 10 + i);
        }
        // A key big enough to be a tree (past 64 entries, past one leaf of 256).
        for (var i = 0; i < 600; i++)
        {
            model[$"big/{i}"] = Order("companies/big", 1 + (i % 7));
        }
        await Orders.WriteAsync(Client, db, model.Select(p => (p.Key, (Orders.Order?)p.Value)));
        await Orders.PutIndexesAsync(Client, db, Orders.Index(Orders.ByCompany, [Orders.ByCompanyMap], Throwing));
        Orders.AssertSame(Orders.ExpectedByCompany(model), await ByCompanyAsync(db), "before any failure");

        // A negative total in companies/1 (packed) and in companies/big (one leaf of a tree).
        await Orders.WriteAsync(Client, db, [("orders/4", Order("companies/1", -5)), ("big/300", Order("companies/big", -1))]);
        var results = await ByCompanyAsync(db);
        Assert.Equal(["companies/0", "companies/2"], results.Keys.Order(StringComparer.Ordinal));
        var expected = Orders.ExpectedByCompany(model);
        Assert.Equal(expected["companies/0"], results["companies/0"]);
        var errors = await ErrorsAsync(db, Orders.ByCompany);
        Assert.Contains(errors, e => e.GetProperty("Action").GetString() == "Reduce" && e.GetProperty("Document").GetString()!.Contains("companies/1", StringComparison.Ordinal)
            && e.GetProperty("Error").GetString()!.Contains("negative total", StringComparison.Ordinal));
        Assert.Contains(errors, e => e.GetProperty("Action").GetString() == "Reduce" && e.GetProperty("Document").GetString()!.Contains("companies/big", StringComparison.Ordinal));
        Assert.DoesNotContain(errors, e => e.GetProperty("Document").GetString()!.Contains("companies/0", StringComparison.Ordinal));

        // Other keys go on meanwhile; a change elsewhere in the failed big key keeps it failed.
        model["orders/0"] = Order("companies/0", 1000);
        model["big/5"] = Order("companies/big", 50);
        await Orders.WriteAsync(Client, db, [("orders/0", model["orders/0"]), ("big/5", model["big/5"])]);
        results = await ByCompanyAsync(db);
        Assert.Equal(Orders.ExpectedByCompany(model)["companies/0"], results["companies/0"]);
        Assert.False(results.ContainsKey("companies/big"));

        // Fixing the offending entries brings both keys back, with every entry counted.
        await Orders.WriteAsync(Client, db, [("orders/4", model["orders/4"]), ("big/300", model["big/300"])]);
        Orders.AssertSame(Orders.ExpectedByCompany(model), await ByCompanyAsync(db), "after the fix");

        // A failed key whose bad entry is deleted comes back too.
        await Orders.WriteAsync(Client, db, [("big/301", Order("companies/big", -3))]);
        Assert.False((await ByCompanyAsync(db)).ContainsKey("companies/big"));
        model.Remove("big/301");
        await Orders.WriteAsync(Client, db, [("big/301", null)]);
        Orders.AssertSame(Orders.ExpectedByCompany(model), await ByCompanyAsync(db), "after deleting the bad entry");
    }

    [Fact]
    public async Task AReduceThatIsNotReReducibleIsReported()
    {
        var db = await fixture.CreateDatabaseAsync();
        var model = new Dictionary<string, Orders.Order>(StringComparer.OrdinalIgnoreCase);
        for (var i = 0; i < 6; i++)
        {
            model[$"orders/{i}"] = Order($"companies/{i % 2}", 10 + i);
        }
        await Orders.WriteAsync(Client, db, model.Select(p => (p.Key, (Orders.Order?)p.Value)));
        // Counts entries with c + 1: right over map entries, wrong over its own results.
        const string countsValues = "groupBy(r => r.Company).aggregate(g => ({ Company: g.key, Count: g.values.reduce((c, r) => c + 1, 0), Total: g.values.reduce((t, r) => t + r.Total, 0) }))";
        await Orders.PutIndexesAsync(Client, db, Orders.Index("Orders/Counted", [Orders.ByCompanyMap], countsValues));
        await ByCompanyAsync(db, "Orders/Counted");
        var errors = await ErrorsAsync(db, "Orders/Counted");
        var error = Assert.Single(errors);
        Assert.Equal("Reduce", error.GetProperty("Action").GetString());
        Assert.Contains("not re-reducible", error.GetProperty("Error").GetString());
    }

    [Fact]
    public async Task AMapThatThrowsForOneDocumentLeavesItOutAndRecordsIt()
    {
        var db = await fixture.CreateDatabaseAsync();
        var model = new Dictionary<string, Orders.Order>(StringComparer.OrdinalIgnoreCase);
        for (var i = 0; i < 10; i++)
        {
            model[$"orders/{i}"] = Order($"companies/{i % 2}", 10 + i);
        }
        await Orders.WriteAsync(Client, db, model.Select(p => (p.Key, (Orders.Order?)p.Value)));
        // No Lines: the map's o.Lines.reduce throws for this one.
        using (var put = await Client.PutAsync($"/databases/{db}/docs?id=orders/bad", Api.Json("""{"Company":"companies/0","Month":"2024-01","@metadata":{"@collection":"Orders"}}""")))
        {
            Assert.Equal(HttpStatusCode.Created, put.StatusCode);
        }
        await Orders.PutIndexesAsync(Client, db, Orders.Index(Orders.ByCompany, [Orders.ByCompanyMap], Orders.ByCompanyReduce));
        Orders.AssertSame(Orders.ExpectedByCompany(model), await ByCompanyAsync(db), "with one document failing to map");
        var error = Assert.Single(await ErrorsAsync(db, Orders.ByCompany));
        Assert.Equal("orders/bad", error.GetProperty("Document").GetString());
        Assert.Equal("Map", error.GetProperty("Action").GetString());

        // Mapped once, then failing: its earlier entries leave the key.
        model["orders/bad"] = Order("companies/1", 500);
        await Orders.WriteAsync(Client, db, [("orders/bad", model["orders/bad"])]);
        Orders.AssertSame(Orders.ExpectedByCompany(model), await ByCompanyAsync(db), "after the fix");
        model.Remove("orders/bad");
        using (var put = await Client.PutAsync($"/databases/{db}/docs?id=orders/bad", Api.Json("""{"Company":"companies/1","Month":"2024-01","@metadata":{"@collection":"Orders"}}""")))
        {
            Assert.Equal(HttpStatusCode.Created, put.StatusCode);
        }
        Orders.AssertSame(Orders.ExpectedByCompany(model), await ByCompanyAsync(db), "after it failed again");
    }

    [Fact]
    public async Task BadMapReduceDefinitionsAreRefusedNamingTheProblem()
    {
        var db = await fixture.CreateDatabaseAsync();
        async Task<string> RefusedAsync(string definition, string type)
        {
            using var response = await Client.PutAsync($"/databases/{db}/admin/indexes", Api.Json(Orders.Definitions(definition)));
            return await Api.AssertErrorAsync(response, HttpStatusCode.BadRequest, type);
        }

        var syntax = await RefusedAsync(Orders.Index("Bad/Syntax", [Orders.ByCompanyMap], "groupBy(r => r.Company).aggregate(g => ({ Count: g. }))"), "IndexCompilationException");
        Assert.Contains("Bad/Syntax", syntax, StringComparison.Ordinal);
        Assert.Contains("Reduce", syntax, StringComparison.Ordinal);
        var noAggregate = await RefusedAsync(Orders.Index("Bad/NoAggregate", [Orders.ByCompanyMap], "groupBy(r => r.Company)"), "IndexCompilationException");
        Assert.Contains("aggregate", noAggregate, StringComparison.Ordinal);
        var feedsItself = await RefusedAsync(Orders.Index("Bad/Output", [Orders.ByCompanyMap], Orders.ByCompanyReduce, new { OutputReduceToCollection = "Orders" }), "IndexCompilationException");
        Assert.Contains("Orders", feedsItself, StringComparison.Ordinal);
        Assert.Contains("OutputReduceToCollection", feedsItself, StringComparison.Ordinal);

        using var list = await Client.GetAsync($"/databases/{db}/indexes");
        Assert.Empty((await Api.JsonAsync(list)).GetProperty("Results").EnumerateArray());
    }

    [Fact]
    public async Task ALoadedDocumentThatChangesMovesTheEntriesOfItsLoaders()
    {
        var db = await fixture.CreateDatabaseAsync();
        using (await Client.PutAsync($"/databases/{db}/docs?id=companies/1", Api.Json("""{"Region":"North","@metadata":{"@collection":"Companies"}}"""))) { }
        using (await Client.PutAsync($"/databases/{db}/docs?id=companies/2", Api.Json("""{"Region":"South","@metadata":{"@collection":"Companies"}}"""))) { }
        var model = new Dictionary<string, Orders.Order>(StringComparer.OrdinalIgnoreCase);
        for (var i = 0; i < 100; i++)
        {
            model[$"orders/{i}"] = Order($"companies/{1 + (i % 2)}", i + 1);
        }
        await Orders.WriteAsync(Client, db, model.Select(p => (p.Key, (Orders.Order?)p.Value)));
        const string map = "map('Orders', o => ({ Region: load(o.Company).Region, Count: 1, Total: o.Lines.reduce((s, l) => s + l.PricePerUnit * l.Quantity, 0) }))";
        const string reduce = "groupBy(r => r.Region).aggregate(g => ({ Region: g.key, Count: g.values.reduce((c, r) => c + r.Count, 0), Total: g.values.reduce((t, r) => t + r.Total, 0) }))";
        await Orders.PutIndexesAsync(Client, db, Orders.Index("Orders/ByRegion", [map], reduce));
        var regions = new Dictionary<string, string> { ["companies/1"] = "North", ["companies/2"] = "South" };
        async Task CheckAsync(string context)
        {
            var expected = model.Values.GroupBy(o => regions[o.Company]).ToDictionary(g => g.Key, g => ((long)g.Count(), g.Sum(o => o.Total)), StringComparer.Ordinal);
            Orders.AssertSame(expected, await Orders.ResultsAsync(Client, db, "Orders/ByRegion", r => r.GetProperty("Region").GetString()!), context);
        }

        await CheckAsync("at first");
        using (await Client.PutAsync($"/databases/{db}/docs?id=companies/2", Api.Json("""{"Region":"North","@metadata":{"@collection":"Companies"}}"""))) { }
        regions["companies/2"] = "North";
        await CheckAsync("after companies/2 moved north (South is gone)");
        using (await Client.PutAsync($"/databases/{db}/docs?id=companies/1", Api.Json("""{"Region":"East","@metadata":{"@collection":"Companies"}}"""))) { }
        regions["companies/1"] = "East";
        await CheckAsync("after companies/1 moved east");
    }

    [Fact]
    public async Task AMultiMapReducesTwoCollectionsIntoOneKey()
    {
        var db = await fixture.CreateDatabaseAsync();
        var orders = new Dictionary<string, Orders.Order>(StringComparer.OrdinalIgnoreCase);
        for (var i = 0; i < 40; i++)
        {
            orders[$"orders/{i}"] = Order($"companies/{i % 4}", i + 1);
        }
        await Orders.WriteAsync(Client, db, orders.Select(p => (p.Key, (Orders.Order?)p.Value)));
        var payments = Enumerable.Range(0, 30).ToDictionary(i => $"payments/{i}", i => (Company: $"companies/{i % 5}", Amount: i * 3));
        foreach (var (id, payment) in payments)
        {
            using var put = await Client.PutAsync($"/databases/{db}/docs?id={id}", Api.Json($$$"""{"Company":"{{{payment.Company}}}","Amount":{{{payment.Amount}}},"@metadata":{"@collection":"Payments"}}"""));
            Assert.Equal(HttpStatusCode.Created, put.StatusCode);
        }
        string[] maps =
        [
            "map('Orders', o => ({ Company: o.Company, Ordered: o.Lines.reduce((s, l) => s + l.PricePerUnit * l.Quantity, 0), Paid: 0 }))",
            "map('Payments', p => ({ Company: p.Company, Ordered: 0, Paid: p.Amount }))",
        ];
        const string reduce = "groupBy(r => r.Company).aggregate(g => ({ Company: g.key, Ordered: g.values.reduce((s, r) => s + r.Ordered, 0), Paid: g.values.reduce((s, r) => s + r.Paid, 0) }))";
        await Orders.PutIndexesAsync(Client, db, Orders.Index("Companies/Balance", maps, reduce));
        var rows = Orders.Rows(await Orders.QueryAsync(Client, db, "from index 'Companies/Balance' order by Company"));
        var companies = orders.Values.Select(o => o.Company).Concat(payments.Values.Select(p => p.Company)).Distinct().Order(StringComparer.Ordinal).ToList();
        Assert.Equal(companies, rows.Select(r => r.GetProperty("Company").GetString()));
        foreach (var row in rows)
        {
            var company = row.GetProperty("Company").GetString();
            Assert.Equal(orders.Values.Where(o => o.Company == company).Sum(o => o.Total), row.GetProperty("Ordered").GetDouble());
            Assert.Equal(payments.Values.Where(p => p.Company == company).Sum(p => p.Amount), row.GetProperty("Paid").GetDouble());
        }
    }

    [Fact]
    public async Task TheIndexRoutesServeAMapReduceIndexAsAMap()
    {
        var db = await fixture.CreateDatabaseAsync();
        var model = Enumerable.Range(0, 200).ToDictionary(i => $"orders/{i}", i => Order($"companies/{i % 5}", i + 1), StringComparer.OrdinalIgnoreCase);
        await Orders.WriteAsync(Client, db, model.Select(p => (p.Key, (Orders.Order?)p.Value)));
        var definition = Orders.Index(Orders.ByCompany, [Orders.ByCompanyMap], Orders.ByCompanyReduce);
        await Orders.PutIndexesAsync(Client, db, definition);
        Orders.AssertSame(Orders.ExpectedByCompany(model), await ByCompanyAsync(db), "built");

        using (var list = await Client.GetAsync($"/databases/{db}/indexes?name={Uri.EscapeDataString(Orders.ByCompany)}"))
        {
            var listed = (await Api.JsonAsync(list)).GetProperty("Results")[0];
            Assert.Equal("JavaScriptMapReduce", listed.GetProperty("Type").GetString());
            Assert.Equal(Orders.ByCompanyReduce, listed.GetProperty("Reduce").GetString());
        }

        // An identical PUT changes nothing: no replacement, nothing mapped again.
        var mappedBefore = (await StatsAsync(db, Orders.ByCompany)).GetProperty("MapAttempts").GetInt64();
        await Orders.PutIndexesAsync(Client, db, definition);
        Assert.Equal([Orders.ByCompany], await IndexNamesAsync(db));
        Orders.AssertSame(Orders.ExpectedByCompany(model), await ByCompanyAsync(db), "after an identical PUT");
        Assert.Equal(mappedBefore, (await StatsAsync(db, Orders.ByCompany)).GetProperty("MapAttempts").GetInt64());

        // Priorities and locks as for a map.
        using (var priority = await Client.PostAsync($"/databases/{db}/indexes/set-priority", Api.Json($$"""{"IndexNames":["{{Orders.ByCompany}}"],"Priority":"High"}""")))
        {
            Assert.Equal(HttpStatusCode.NoContent, priority.StatusCode);
        }
        Assert.Equal("High", (await StatsAsync(db, Orders.ByCompany)).GetProperty("Priority").GetString());
        var changed = Orders.Index(Orders.ByCompany, [Orders.ByCompanyMap], Orders.ByCompanyReduce.Replace("Total: g.values", "Doubled: true, Total: g.values", StringComparison.Ordinal));
        using (var locked = await Client.PostAsync($"/databases/{db}/indexes/set-lock", Api.Json($$"""{"IndexNames":["{{Orders.ByCompany}}"],"Mode":"LockedError"}""")))
        {
            Assert.Equal(HttpStatusCode.NoContent, locked.StatusCode);
        }
        using (var refused = await Client.PutAsync($"/databases/{db}/admin/indexes", Api.Json(Orders.Definitions(changed))))
        {
            Assert.Contains(Orders.ByCompany, await Api.AssertErrorAsync(refused, HttpStatusCode.Conflict, "IndexLockedException"), StringComparison.Ordinal);
        }
        using (var ignore = await Client.PostAsync($"/databases/{db}/indexes/set-lock", Api.Json($$"""{"IndexNames":["{{Orders.ByCompany}}"],"Mode":"LockedIgnore"}""")))
        {
            Assert.Equal(HttpStatusCode.NoContent, ignore.StatusCode);
        }
        await Orders.PutIndexesAsync(Client, db, changed);
        Assert.Equal([Orders.ByCompany], await IndexNamesAsync(db));
        Assert.False(Orders.Rows(await Orders.QueryAsync(Client, db, $"from index '{Orders.ByCompany}'"))[0].TryGetProperty("Doubled", out _));

        // Reset: built again from the start, to the same results.
        using (var reset = await Client.PostAsync($"/databases/{db}/indexes/reset?name={Uri.EscapeDataString(Orders.ByCompany)}", null))
        {
            Assert.Equal(HttpStatusCode.NoContent, reset.StatusCode);
        }
        Orders.AssertSame(Orders.ExpectedByCompany(model), await ByCompanyAsync(db), "after a reset");
        Assert.Equal(model.Count, (await StatsAsync(db, Orders.ByCompany)).GetProperty("MapAttempts").GetInt64());

        // The performance timeline shows the reduce as its own operation.
        using (var performance = await Client.GetAsync($"/databases/{db}/indexes/performance?name={Uri.EscapeDataString(Orders.ByCompany)}"))
        {
            var batches = (await Api.JsonAsync(performance)).GetProperty("Results")[0].GetProperty("Performance").EnumerateArray().ToList();
            Assert.Contains(batches, b => b.GetProperty("Details").GetProperty("Operations").EnumerateArray().Any(o => o.GetProperty("Name").GetString() == "Reduce"));
            Assert.Contains(batches, b => b.GetProperty("Details").GetProperty("Operations").EnumerateArray().Any(o => o.GetProperty("Name").GetString() == "Map"));
        }
    }

    [Fact]
    public async Task ATestRunOfAMapReduceDefinitionAnswersItsRowsAndStoresNothing()
    {
        var db = await fixture.CreateDatabaseAsync();
        var model = Enumerable.Range(0, 20).ToDictionary(i => $"orders/{i}", i => Order($"companies/{i % 3}", i + 1), StringComparer.OrdinalIgnoreCase);
        await Orders.WriteAsync(Client, db, model.Select(p => (p.Key, (Orders.Order?)p.Value)));
        var body = $$"""{"IndexDefinition":{{Orders.Index("Orders/Try", [Orders.ByCompanyMap], Orders.ByCompanyReduce)}},"Query":"from index 'Orders/Try' order by Company","MaxDocumentsToProcess":9}""";
        using var response = await Client.PostAsync($"/databases/{db}/indexes/test", Api.Json(body));
        var answer = await Api.JsonAsync(response);
        Assert.True(response.StatusCode == HttpStatusCode.OK, answer.ToString());
        Assert.Equal(9, answer.GetProperty("DocumentsProcessed").GetInt32());
        var first9 = model.Where(p => int.Parse(p.Key["orders/".Length..]) < 9).ToDictionary(p => p.Key, p => p.Value);
        var rows = answer.GetProperty("QueryResults").EnumerateArray().ToList();
        Orders.AssertSame(Orders.ExpectedByCompany(first9), rows.ToDictionary(Orders.CompanyOf, r => (r.GetProperty("Count").GetInt64(), (long)r.GetProperty("Total").GetDouble())), "the test run");
        Assert.Equal(9, answer.GetProperty("MapResults").GetArrayLength());
        Assert.Equal("companies/0", answer.GetProperty("MapResults")[0].GetProperty("Entries")[0].GetProperty("Company").GetString());
        using var list = await Client.GetAsync($"/databases/{db}/indexes");
        Assert.Empty((await Api.JsonAsync(list)).GetProperty("Results").EnumerateArray());
    }

    [Fact]
    public async Task TheCleanupAdvisorDoesNotMergeAMapReduceIndexWithAMap()
    {
        var db = await fixture.CreateDatabaseAsync();
        await Orders.WriteAsync(Client, db, Enumerable.Range(0, 10).Select(i => ($"orders/{i}", (Orders.Order?)Order($"companies/{i % 2}", i + 1))));
        await Orders.PutIndexesAsync(Client, db,
            Orders.Index(Orders.ByCompany, ["map('Orders', o => ({ Company: o.Company }))"], "groupBy(r => r.Company).aggregate(g => ({ Company: g.key }))"),
            JsonSerializer.Serialize(new { Name = "Orders/Plain", Maps = new[] { "map('Orders', o => ({ Company: o.Company }))" } }));
        // An auto-index on Company: the map covers it, the map-reduce (rows, not orders) does not.
        await Orders.QueryAsync(Client, db, "from Orders where Company = 'companies/1'");
        await Orders.QueryAsync(Client, db, $"from index '{Orders.ByCompany}'");
        using var response = await Client.GetAsync($"/databases/{db}/indexes/cleanup?unusedFor=00:00:00");
        var advice = (await Api.JsonAsync(response)).GetProperty("Results").EnumerateArray().ToList();
        var named = advice.Where(a => a.GetProperty("Type").GetString() is "Mergeable" or "Covered").Select(a => string.Join(" + ", a.GetProperty("Indexes").EnumerateArray().Select(n => n.GetString()))).ToList();
        Assert.DoesNotContain(named, n => n.Split(" + ").Contains(Orders.ByCompany));
        Assert.Contains("Auto/Orders/ByCompany + Orders/Plain", named);
    }

    [Fact]
    public async Task AChangedReduceBuildsBesideAndSwapsWithNoHalfBuiltAnswer()
    {
        var db = await fixture.CreateDatabaseAsync();
        var random = new Random(7);
        var model = Enumerable.Range(0, 20_000).ToDictionary(i => $"orders/{i}", _ => Orders.Random(random, $"companies/{random.Next(8)}"), StringComparer.OrdinalIgnoreCase);
        await Orders.WriteAsync(Client, db, model.Select(p => (p.Key, (Orders.Order?)p.Value)));
        await Orders.PutIndexesAsync(Client, db, Orders.Index(Orders.ByCompany, [Orders.ByCompanyMap], Orders.ByCompanyReduce));
        var expected = Orders.ExpectedByCompany(model);
        Orders.AssertSame(expected, await ByCompanyAsync(db), "version 1");

        // Version 2 adds a field to every row: every answer is all of one version or all of the
        // other, and every answer has every order counted once. Indexing is paused while version 2
        // is put, so that at least one answer is read beside the waiting replacement (a fast build
        // could otherwise swap before the first query, and the test would see no answer of
        // version 1 during the replacement).
        Assert.Equal(HttpStatusCode.NoContent, (await Client.PostAsync($"/databases/{db}/admin/indexes/stop", null)).StatusCode);
        await Orders.PutIndexesAsync(Client, db, Orders.Index(Orders.ByCompany, [Orders.ByCompanyMap], Orders.ByCompanyReduce.Replace("Total: g.values", "Version: 2, Total: g.values", StringComparison.Ordinal)));
        Assert.Equal(2, (await IndexNamesAsync(db)).Count);
        var paused = Orders.Rows(await Orders.QueryAsync(Client, db, $"from index '{Orders.ByCompany}' limit 1000"));
        Assert.All(paused, r => Assert.False(r.TryGetProperty("Version", out _)));
        Orders.AssertSame(expected, paused.ToDictionary(Orders.CompanyOf, r => (r.GetProperty("Count").GetInt64(), (long)r.GetProperty("Total").GetDouble()), StringComparer.Ordinal), "version 1 beside the paused replacement");
        Assert.Equal(HttpStatusCode.NoContent, (await Client.PostAsync($"/databases/{db}/admin/indexes/start", null)).StatusCode);
        var deadline = DateTime.UtcNow + TimeSpan.FromMinutes(3);
        while ((await IndexNamesAsync(db)).Count > 1)
        {
            Assert.True(DateTime.UtcNow < deadline, "the replacement did not swap in 3 minutes");
            var body = JsonSerializer.Serialize(new { Query = $"from index '{Orders.ByCompany}' limit 1000" });
            using var response = await Client.PostAsync($"/databases/{db}/queries", Api.Json(body));
            var rows = Orders.Rows(await Api.JsonAsync(response));
            var versions = rows.Select(r => r.TryGetProperty("Version", out var v) ? v.GetInt32() : 1).Distinct().ToList();
            var results = rows.ToDictionary(Orders.CompanyOf, r => (r.GetProperty("Count").GetInt64(), (long)r.GetProperty("Total").GetDouble()), StringComparer.Ordinal);
            Assert.True(versions.Count == 1, $"rows of both versions in one answer: {string.Join(", ", versions)}");
            Orders.AssertSame(expected, results, $"an answer of version {versions[0]} while the replacement builds");
        }
        var after = Orders.Rows(await Orders.QueryAsync(Client, db, $"from index '{Orders.ByCompany}' limit 1000"));
        Assert.All(after, r => Assert.Equal(2, r.GetProperty("Version").GetInt32()));
        Orders.AssertSame(expected, await ByCompanyAsync(db), "version 2 after the swap");
    }
}
