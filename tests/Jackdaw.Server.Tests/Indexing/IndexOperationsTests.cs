using System.Net;
using System.Net.Http.Headers;
using System.Text;
using System.Text.Json;
using Jackdaw.Server.Tests.Infrastructure;

namespace Jackdaw.Server.Tests.Indexing;

/// <summary>Static indexes, the index routes, staleness, index errors and bad input, over HTTP.</summary>
public sealed class IndexOperationsTests(ServerFixture fixture) : IClassFixture<ServerFixture>
{
    private HttpClient Client => fixture.Client;

    private const string TotalsMap = "map('Orders', o => ({ Company: o.Company, CompanyName: (load(o.Company) || {}).Name, Total: o.Lines.reduce((s, l) => s + l.Quantity * l.PricePerUnit, 0), OrderedAt: o.OrderedAt, Products: o.Lines.map(l => l.Product) }))";

    private static string Definition(string name, string[] maps, string fields = "{}") =>
        JsonSerializer.Serialize(new { Indexes = new[] { new { Name = name, Maps = maps, Fields = JsonDocument.Parse(fields).RootElement } } });

    private async Task PutAsync(string db, string id, string json)
    {
        using var response = await Client.PutAsync($"/databases/{db}/docs?id={Uri.EscapeDataString(id)}", Api.Json(json));
        Assert.Equal(HttpStatusCode.Created, response.StatusCode);
    }

    private async Task<string> SeedOrdersAsync()
    {
        var db = await fixture.CreateDatabaseAsync();
        await PutAsync(db, "companies/1", """{"Name":"Acme","@metadata":{"@collection":"Companies"}}""");
        await PutAsync(db, "companies/2", """{"Name":"Globex","@metadata":{"@collection":"Companies"}}""");
        for (var i = 1; i <= 6; i++)
        {
            await PutAsync(db, $"orders/{i}", $$$"""{"Company":"companies/{{{1 + (i % 2)}}}","OrderedAt":"2024-0{{{i}}}-01T00:00:00.0000000Z","Lines":[{"Product":"products/{{{i}}}","Quantity":{{{i}}},"PricePerUnit":10},{"Product":"products/9","Quantity":1,"PricePerUnit":1.5}],"@metadata":{"@collection":"Orders"}}""");
        }
        return db;
    }

    private async Task<JsonElement> QueryAsync(string db, string rql, object? parameters = null, HttpStatusCode status = HttpStatusCode.OK)
    {
        var body = JsonSerializer.Serialize(new { Query = rql, QueryParameters = parameters ?? new { }, WaitForNonStaleResults = true });
        using var response = await Client.PostAsync($"/databases/{db}/queries", new StringContent(body, Encoding.UTF8, "application/json"));
        var json = await Api.JsonAsync(response);
        Assert.True(status == response.StatusCode, $"{rql}: {(int)response.StatusCode} {json}");
        return json;
    }

    private static List<string> Ids(JsonElement answer) =>
        answer.GetProperty("Results").EnumerateArray().Select(r => r.GetProperty("@metadata").GetProperty("@id").GetString()!).ToList();

    [Fact]
    public async Task AStaticJavaScriptIndexAnswersOnItsComputedFields()
    {
        var db = await SeedOrdersAsync();
        using (var put = await Client.PutAsync($"/databases/{db}/admin/indexes", Api.Json(Definition("Orders/Totals", [TotalsMap], """{"Company":{"Indexing":"Exact"},"Total":{"Storage":"Yes"}}"""))))
        {
            Assert.Equal(HttpStatusCode.Created, put.StatusCode);
            Assert.Equal("Orders/Totals", (await Api.JsonAsync(put)).GetProperty("Results")[0].GetProperty("Index").GetString());
        }

        var over30 = await QueryAsync(db, "from index 'Orders/Totals' where Total > 30 order by Total desc");
        Assert.Equal(["orders/6", "orders/5", "orders/4", "orders/3"], Ids(over30));
        Assert.Equal("Orders/Totals", over30.GetProperty("IndexName").GetString());

        // Exact: case-sensitive.
        Assert.Equal(3, (await QueryAsync(db, "from index 'Orders/Totals' where Company = 'companies/1'")).GetProperty("TotalResults").GetInt64());
        Assert.Equal(0, (await QueryAsync(db, "from index 'Orders/Totals' where Company = 'COMPANIES/1'")).GetProperty("TotalResults").GetInt64());
        // An array output gives one term per element.
        Assert.Equal(6, (await QueryAsync(db, "from index 'Orders/Totals' where Products = 'products/9'")).GetProperty("TotalResults").GetInt64());
        // Dates range as ISO-8601 strings.
        Assert.Equal(["orders/2", "orders/3"], Ids(await QueryAsync(db, "from index 'Orders/Totals' where OrderedAt between '2024-02-01' and '2024-03-31' order by OrderedAt")));

        // A stored field is projected from the index; the document's own fields from the document.
        var projected = await QueryAsync(db, "from index 'Orders/Totals' where Total >= 60 select Total, Company as Who");
        var first = projected.GetProperty("Results")[0];
        Assert.Equal(61.5, first.GetProperty("Total").GetDouble());
        Assert.Equal("companies/1", first.GetProperty("Who").GetString());

        // load(): a change of the loaded document re-indexes the orders that loaded it.
        Assert.Equal(3, (await QueryAsync(db, "from index 'Orders/Totals' where CompanyName = 'acme'")).GetProperty("TotalResults").GetInt64());
        await PutAsync(db, "companies/1", """{"Name":"Initech","@metadata":{"@collection":"Companies"}}""");
        Assert.Equal(0, (await QueryAsync(db, "from index 'Orders/Totals' where CompanyName = 'acme'")).GetProperty("TotalResults").GetInt64());
        Assert.Equal(3, (await QueryAsync(db, "from index 'Orders/Totals' where CompanyName = 'initech'")).GetProperty("TotalResults").GetInt64());
        using (await Client.DeleteAsync($"/databases/{db}/docs?id=companies/1"))
        {
        }
        Assert.Equal(0, (await QueryAsync(db, "from index 'Orders/Totals' where CompanyName = 'initech'")).GetProperty("TotalResults").GetInt64());

        // Updates and deletes of the indexed documents leave the index.
        await PutAsync(db, "orders/6", """{"Company":"companies/2","Lines":[],"@metadata":{"@collection":"Orders"}}""");
        using (await Client.DeleteAsync($"/databases/{db}/docs?id=orders/5"))
        {
        }
        Assert.Equal(["orders/4", "orders/3"], Ids(await QueryAsync(db, "from index 'Orders/Totals' where Total > 30 order by Total desc")));
        Assert.Equal(["orders/6"], Ids(await QueryAsync(db, "from index 'Orders/Totals' where Total = 0")));
    }

    [Fact]
    public async Task SeveralMapsAndFanout()
    {
        var db = await SeedOrdersAsync();
        var maps = new[]
        {
            "map('Orders', o => o.Lines.map(l => ({ Product: l.Product, Name: null })))",
            "map('Companies', c => ({ Product: null, Name: c.Name }))",
        };
        using (var put = await Client.PutAsync($"/databases/{db}/admin/indexes", Api.Json(Definition("Everything", maps, """{"Name":{"Indexing":"Search"}}"""))))
        {
            Assert.Equal(HttpStatusCode.Created, put.StatusCode);
        }
        // Each order has an entry per line: products/9 is in every order, each order once.
        var nine = await QueryAsync(db, "from index 'Everything' where Product = 'products/9'");
        Assert.Equal(6, Ids(nine).Distinct().Count());
        Assert.Equal(6, Ids(nine).Count);
        // Full text over the second collection; null is distinct from missing.
        Assert.Equal(["companies/2"], Ids(await QueryAsync(db, "from index 'Everything' where search(Name, 'GLOBEX')")));
        // Totals count documents, not entries: 12 entries of 6 orders have a null Name.
        var nulls = await QueryAsync(db, "from index 'Everything' where Name = null");
        Assert.Equal(6, nulls.GetProperty("TotalResults").GetInt64());
        Assert.Equal(6, nulls.GetProperty("SkippedResults").GetInt64());
        Assert.Equal(8, (await QueryAsync(db, "from index 'Everything' where exists(Name)")).GetProperty("TotalResults").GetInt64());
        // Paging over entries of the same document counts each document once.
        var page = await QueryAsync(db, "from index 'Everything' where Product != null limit 3 offset 2");
        Assert.Equal(3, Ids(page).Distinct().Count());
    }

    [Fact]
    public async Task TheIndexRoutes()
    {
        var db = await SeedOrdersAsync();
        using (var put = await Client.PutAsync($"/databases/{db}/admin/indexes", Api.Json(Definition("Orders/Totals", [TotalsMap]))))
        {
            Assert.Equal(HttpStatusCode.Created, put.StatusCode);
        }
        await QueryAsync(db, "from Orders where Company = 'companies/1'");
        // Both indexes caught up (the query waits): what follows reads their figures, not a race.
        await QueryAsync(db, "from index 'Orders/Totals'");

        using (var list = await Client.GetAsync($"/databases/{db}/indexes"))
        {
            var results = (await Api.JsonAsync(list)).GetProperty("Results").EnumerateArray().ToList();
            Assert.Equal(["Auto/Orders/ByCompany", "Orders/Totals"], results.Select(r => r.GetProperty("Name").GetString()));
            Assert.Equal(TotalsMap, results[1].GetProperty("Maps")[0].GetString());
        }
        using (var one = await Client.GetAsync($"/databases/{db}/indexes?name=orders/totals"))
        {
            Assert.Single((await Api.JsonAsync(one)).GetProperty("Results").EnumerateArray());
        }

        using (var stats = await Client.GetAsync($"/databases/{db}/indexes/stats"))
        {
            var results = (await Api.JsonAsync(stats)).GetProperty("Results").EnumerateArray().ToDictionary(r => r.GetProperty("Name").GetString()!);
            Assert.Equal("AutoMap", results["Auto/Orders/ByCompany"].GetProperty("Type").GetString());
            Assert.Equal("JavaScriptMap", results["Orders/Totals"].GetProperty("Type").GetString());
            Assert.Equal(6, results["Auto/Orders/ByCompany"].GetProperty("EntriesCount").GetInt64());
            Assert.Equal("Normal", results["Orders/Totals"].GetProperty("State").GetString());
            Assert.False(results["Auto/Orders/ByCompany"].GetProperty("IsStale").GetBoolean());
            Assert.Equal(8, results["Auto/Orders/ByCompany"].GetProperty("LastIndexedEtag").GetInt64());
            Assert.NotEqual(JsonValueKind.Null, results["Auto/Orders/ByCompany"].GetProperty("LastQueryingTime").ValueKind);
        }
        using (var staleness = await Client.GetAsync($"/databases/{db}/indexes/staleness?name=Orders/Totals"))
        {
            Assert.False((await Api.JsonAsync(staleness)).GetProperty("IsStale").GetBoolean());
        }

        // Saving the same definition (whitespace aside) changes nothing.
        using (var same = await Client.PutAsync($"/databases/{db}/admin/indexes", Api.Json(Definition("Orders/Totals", ["  " + TotalsMap.Replace(", ", ",   ", StringComparison.Ordinal) + "\n"]))))
        {
            Assert.Equal(HttpStatusCode.Created, same.StatusCode);
        }

        // Reset rebuilds; delete removes the definition and the files.
        var folders = Directory.GetDirectories(Path.Combine(fixture.Server.DataDir, "Databases", db, "Indexes"));
        Assert.Equal(2, folders.Length);
        using (var reset = await Client.SendAsync(new HttpRequestMessage(new HttpMethod("RESET"), $"/databases/{db}/indexes?name=Orders/Totals")))
        {
            Assert.Equal(HttpStatusCode.NoContent, reset.StatusCode);
        }
        Assert.Equal(6, (await QueryAsync(db, "from index 'Orders/Totals'")).GetProperty("TotalResults").GetInt64());
        using (var reset = await Client.PostAsync($"/databases/{db}/indexes/reset?name=Orders/Totals", null))
        {
            Assert.Equal(HttpStatusCode.NoContent, reset.StatusCode);
        }
        using (var delete = await Client.DeleteAsync($"/databases/{db}/indexes?name=Orders/Totals"))
        {
            Assert.Equal(HttpStatusCode.NoContent, delete.StatusCode);
        }
        Assert.Single(Directory.GetDirectories(Path.Combine(fixture.Server.DataDir, "Databases", db, "Indexes")));
        await QueryAsync(db, "from index 'Orders/Totals'", status: HttpStatusCode.NotFound);
        using (var again = await Client.DeleteAsync($"/databases/{db}/indexes?name=Orders/Totals"))
        {
            await Api.AssertErrorAsync(again, HttpStatusCode.NotFound, "IndexDoesNotExistException");
        }
    }

    [Fact]
    public async Task TheResultEtagAnswers304UntilSomethingChanges()
    {
        var db = await SeedOrdersAsync();
        var query = $"/databases/{db}/queries?query={Uri.EscapeDataString("from Orders where Company = 'companies/2'")}&waitForNonStaleResults=true";
        string etag;
        using (var first = await Client.GetAsync(query))
        {
            Assert.Equal(HttpStatusCode.OK, first.StatusCode);
            etag = first.Headers.ETag!.Tag;
            Assert.Equal(etag.Trim('"'), (await Api.JsonAsync(first)).GetProperty("ResultEtag").GetRawText());
        }
        using (var again = new HttpRequestMessage(HttpMethod.Get, query))
        {
            again.Headers.IfNoneMatch.Add(new EntityTagHeaderValue(etag));
            using var response = await Client.SendAsync(again);
            Assert.Equal(HttpStatusCode.NotModified, response.StatusCode);
        }
        await PutAsync(db, "orders/99", """{"Company":"companies/2","Lines":[],"@metadata":{"@collection":"Orders"}}""");
        using (var changed = new HttpRequestMessage(HttpMethod.Get, query))
        {
            changed.Headers.IfNoneMatch.Add(new EntityTagHeaderValue(etag));
            using var response = await Client.SendAsync(changed);
            Assert.Equal(HttpStatusCode.OK, response.StatusCode);
            Assert.Equal(4, (await Api.JsonAsync(response)).GetProperty("TotalResults").GetInt64());
        }
    }

    [Fact]
    public async Task DocumentsThatFailToMapAreIndexErrorsAndTooManyStopTheIndex()
    {
        var db = await fixture.CreateDatabaseAsync();
        var commands = string.Join(',', Enumerable.Range(0, 200).Select(i =>
            $"{{\"Type\":\"PUT\",\"Id\":\"items/{i}\",\"Document\":{{{(i % 4 == 0 ? "" : "\"Inner\":{\"V\":1},")}\"N\":{i},\"@metadata\":{{\"@collection\":\"Items\"}}}}}}"));
        using (var bulk = await Client.PostAsync($"/databases/{db}/bulk_docs", Api.Json("{\"Commands\":[" + commands + "]}")))
        {
            Assert.Equal(HttpStatusCode.OK, bulk.StatusCode);
        }
        // A quarter of the documents have no Inner: the map throws for them (25% > 15%).
        using (var put = await Client.PutAsync($"/databases/{db}/admin/indexes", Api.Json(Definition("Items/Inner", ["map('Items', i => ({ V: i.Inner.V }))"]))))
        {
            Assert.Equal(HttpStatusCode.Created, put.StatusCode);
        }
        JsonElement stats = default;
        for (var attempt = 0; attempt < 200; attempt++)
        {
            using var response = await Client.GetAsync($"/databases/{db}/indexes/stats?name=Items/Inner");
            stats = (await Api.JsonAsync(response)).GetProperty("Results")[0];
            if (stats.GetProperty("State").GetString() == "Error")
            {
                break;
            }
            await Task.Delay(50);
        }
        Assert.Equal("Error", stats.GetProperty("State").GetString());
        Assert.True(stats.GetProperty("MapErrors").GetInt64() >= 15);
        using (var errors = await Client.GetAsync($"/databases/{db}/indexes/errors?name=Items/Inner"))
        {
            var list = (await Api.JsonAsync(errors)).GetProperty("Results")[0].GetProperty("Errors").EnumerateArray().ToList();
            Assert.Contains(list, e => e.GetProperty("Document").GetString() == "items/0" && e.GetProperty("Action").GetString() == "Map" && e.GetProperty("Error").GetString()!.Contains("TypeError", StringComparison.Ordinal));
            Assert.Contains(list, e => e.GetProperty("Error").GetString()!.Contains("15%", StringComparison.Ordinal));
        }
        // Waiting for an index in error state fails at once, saying so.
        var body = JsonSerializer.Serialize(new { Query = "from index 'Items/Inner'", WaitForNonStaleResults = true });
        using (var response = await Client.PostAsync($"/databases/{db}/queries", Api.Json(body)))
        {
            if (response.StatusCode != HttpStatusCode.OK)
            {
                Assert.Contains("error state", await Api.AssertErrorAsync(response, HttpStatusCode.RequestTimeout, "TimeoutException"), StringComparison.Ordinal);
            }
        }
    }

    [Theory]
    [InlineData("""{"Indexes":[{"Name":"","Maps":["map('A', a => a)"]}]}""", "BadRequestException", "needs a name")]
    [InlineData("""{"Indexes":[{"Name":"a|b","Maps":["map('A', a => a)"]}]}""", "BadRequestException", "U+007C")]
    [InlineData("""{"Indexes":[{"Name":"X","Maps":["map('Orders', o => ({ A: o.x + }))"]}]}""", "IndexCompilationException", "line 1, column")]
    [InlineData("""{"Indexes":[{"Name":"X","Maps":["from o in docs.Orders select new { o.A }"]}]}""", "IndexCompilationException", "Index 'X'")]
    [InlineData("""{"Indexes":[{"Name":"X","Maps":["map(42, o => o)"]}]}""", "IndexCompilationException", "Index 'X'")]
    [InlineData("""{"Indexes":[{"Name":"X","Maps":["map('A', a => a)"],"Fields":{"A":{"Indexing":"Fuzzy"}}}]}""", "BadRequestException", "Fuzzy")]
    [InlineData("""{"Indexes":[{"Name":"X","Maps":"map('A', a => a)"}]}""", "BadRequestException", "Maps")]
    [InlineData("""{"Indexes":[]}""", "BadRequestException", "empty")]
    [InlineData("""{"Indexes":[{"Name":"X","Maps":["map('A', a => a)"],"AdditionalSources":{"h.js":42}}]}""", "BadRequestException", "additional source 'h.js' must be a string")]
    [InlineData("""{"Indexes":[{"Name":"X","Maps":["map('A', a => a)"],"AdditionalSources":["function f() {}"]}]}""", "BadRequestException", "\"AdditionalSources\" must be an object")]
    [InlineData("""{"Indexes":[{"Name":"X","Maps":["map('A', a => a)"],"AdditionalSources":{"h.js":"function f( {"}}]}""", "IndexCompilationException", "AdditionalSources['h.js']")]
    [InlineData("""{"Nope":1}""", "BadRequestException", "Indexes")]
    public async Task BadDefinitionsAre400AndCreateNothing(string body, string type, string mentions)
    {
        var db = await fixture.CreateDatabaseAsync();
        // A good definition beside the bad one is not created either.
        var withGood = body.Contains("\"Indexes\":[{", StringComparison.Ordinal)
            ? body.Replace("\"Indexes\":[{", "\"Indexes\":[{\"Name\":\"Good\",\"Maps\":[\"map('A', a => ({ B: a.B }))\"]},{", StringComparison.Ordinal)
            : body;
        using var response = await Client.PutAsync($"/databases/{db}/admin/indexes", Api.Json(withGood));
        Assert.Contains(mentions, await Api.AssertErrorAsync(response, HttpStatusCode.BadRequest, type), StringComparison.Ordinal);
        using var list = await Client.GetAsync($"/databases/{db}/indexes");
        Assert.Empty((await Api.JsonAsync(list)).GetProperty("Results").EnumerateArray());
    }

    [Fact]
    public async Task AdditionalSourcesAreStoredAnsweredAndAChangeOfThemIsANewDefinition()
    {
        var db = await SeedOrdersAsync();
        static string WithSources(string rate) => JsonSerializer.Serialize(new
        {
            Indexes = new[]
            {
                new
                {
                    Name = "Orders/Scaled",
                    Maps = new[] { "map('Orders', o => ({ Scaled: scaled(o) }))" },
                    AdditionalSources = new Dictionary<string, string> { ["scale.js"] = $"function scaled(o) {{ return o.Lines.length * {rate}; }}" },
                },
            },
        });
        Assert.Equal(HttpStatusCode.Created, (await Client.PutAsync($"/databases/{db}/admin/indexes", Api.Json(WithSources("10")))).StatusCode);
        Assert.Equal(6, (await QueryAsync(db, "from index 'Orders/Scaled' where Scaled = 20")).GetProperty("TotalResults").GetInt32());

        var listed = (await Api.JsonAsync(await Client.GetAsync($"/databases/{db}/indexes?name=Orders/Scaled"))).GetProperty("Results")[0];
        Assert.Equal("function scaled(o) { return o.Lines.length * 10; }", listed.GetProperty("AdditionalSources").GetProperty("scale.js").GetString());

        // The same sources again change nothing; other sources build a replacement that takes over.
        Assert.Equal(HttpStatusCode.Created, (await Client.PutAsync($"/databases/{db}/admin/indexes", Api.Json(WithSources("10")))).StatusCode);
        Assert.Equal(HttpStatusCode.Created, (await Client.PutAsync($"/databases/{db}/admin/indexes", Api.Json(WithSources("100")))).StatusCode);
        await Poll.UntilAsync(async () => (await QueryAsync(db, "from index 'Orders/Scaled' where Scaled = 200")).GetProperty("TotalResults").GetInt32() == 6, TimeSpan.FromSeconds(60), "the replacement built with the new sources");
    }

    [Fact]
    public async Task HostileQueriesGet4xx()
    {
        var db = await SeedOrdersAsync();
        var nested = "from Orders where " + new string('(', 100_000) + "Company = 'x'" + new string(')', 100_000);
        await QueryAsync(db, nested, status: HttpStatusCode.BadRequest);
        var huge = "from Orders where Company = '" + new string('x', 10 * 1024 * 1024) + "'";
        var body = JsonSerializer.Serialize(new { Query = huge });
        using (var response = await Client.PostAsync($"/databases/{db}/queries", Api.Json(body)))
        {
            Assert.True((int)response.StatusCode is >= 400 and < 500, response.StatusCode.ToString());
        }
        var term = "from Orders where Company = '" + new string('x', 1024 * 1024) + "'";
        using (var response = await Client.PostAsync($"/databases/{db}/queries", Api.Json(JsonSerializer.Serialize(new { Query = term }))))
        {
            Assert.True((int)response.StatusCode is >= 400 and < 500, response.StatusCode.ToString());
        }
        await QueryAsync(db, "from Orders where Company = $missing", status: HttpStatusCode.BadRequest);
        await QueryAsync(db, "from Orders order by Company as wobbly", status: HttpStatusCode.BadRequest);
        await QueryAsync(db, "from @all_docs where Company = 'x'", status: HttpStatusCode.BadRequest);
        using (var timeout = await Client.PostAsync($"/databases/{db}/queries", Api.Json("{\"Query\":\"from Orders where Company = 'x'\",\"WaitForNonStaleResults\":true,\"WaitForNonStaleResultsTimeout\":\"forever\"}")))
        {
            await Api.AssertErrorAsync(timeout, HttpStatusCode.BadRequest, "BadRequestException");
        }
        // The server is still fine.
        Assert.Equal(3, (await QueryAsync(db, "from Orders where Company = 'companies/1'")).GetProperty("TotalResults").GetInt64());
    }

    [Fact]
    public async Task WritesDuringQueriesNeverBreakThem()
    {
        var db = await SeedOrdersAsync();
        await QueryAsync(db, "from Orders where Company = 'companies/1'");
        using var stop = new CancellationTokenSource(TimeSpan.FromSeconds(3));
        var writer = Task.Run(async () =>
        {
            for (var i = 100; !stop.IsCancellationRequested; i++)
            {
                await PutAsync(db, $"orders/{i}", """{"Company":"companies/1","Lines":[],"@metadata":{"@collection":"Orders"}}""");
            }
        });
        var queries = 0;
        long last = 0;
        while (!stop.IsCancellationRequested)
        {
            var body = JsonSerializer.Serialize(new { Query = "from Orders where Company = 'companies/1'" });
            using var response = await Client.PostAsync($"/databases/{db}/queries", Api.Json(body));
            Assert.Equal(HttpStatusCode.OK, response.StatusCode);
            var answer = await Api.JsonAsync(response);
            var total = answer.GetProperty("TotalResults").GetInt64();
            // Stale answers are allowed, going back is not.
            Assert.True(total >= last, $"{total} after {last}");
            Assert.Equal(total, answer.GetProperty("Results").GetArrayLength());
            last = total;
            queries++;
        }
        await writer;
        Assert.True(queries > 10);
    }

    [Fact]
    public async Task QueriesDuringResetsAndRedefinitionsNeverFail()
    {
        var db = await SeedOrdersAsync();
        using (var put = await Client.PutAsync($"/databases/{db}/admin/indexes", Api.Json(Definition("Orders/Totals", [TotalsMap]))))
        {
            Assert.Equal(HttpStatusCode.Created, put.StatusCode);
        }
        using var stop = new CancellationTokenSource();
        var queries = Task.Run(async () =>
        {
            var count = 0;
            while (!stop.IsCancellationRequested)
            {
                var body = JsonSerializer.Serialize(new { Query = "from index 'Orders/Totals' where Total > 0" });
                using var response = await Client.PostAsync($"/databases/{db}/queries", Api.Json(body));
                Assert.True(response.StatusCode == HttpStatusCode.OK, await response.Content.ReadAsStringAsync());
                count++;
            }
            return count;
        });
        for (var i = 0; i < 6; i++)
        {
            using (var reset = await Client.PostAsync($"/databases/{db}/indexes/reset?name=Orders/Totals", null))
            {
                Assert.Equal(HttpStatusCode.NoContent, reset.StatusCode);
            }
            var map = TotalsMap.Replace("Total:", i % 2 == 0 ? "Total: 0 +" : "Total:", StringComparison.Ordinal);
            using (var put = await Client.PutAsync($"/databases/{db}/admin/indexes", Api.Json(Definition("Orders/Totals", [map]))))
            {
                Assert.Equal(HttpStatusCode.Created, put.StatusCode);
            }
        }
        stop.Cancel();
        Assert.True(await queries > 0);
        Assert.Equal(6, (await QueryAsync(db, "from index 'Orders/Totals' where Total > 0")).GetProperty("TotalResults").GetInt64());
    }

    [Fact]
    public async Task OrderByIdAndAnArrayParameterOfIn()
    {
        var db = await SeedOrdersAsync();
        // Without an index: the document store sorts the ids.
        Assert.Equal(["orders/6", "orders/5"], Ids(await QueryAsync(db, "from Orders order by id() desc limit 2")));
        Assert.Equal(["orders/2", "orders/4"], Ids(await QueryAsync(db, "from Orders where id() in ($ids) order by id()", new { ids = new[] { "ORDERS/4", "orders/2", "orders/77" } })));
        // Through an index.
        Assert.Equal(["orders/5", "orders/3", "orders/1"], Ids(await QueryAsync(db, "from Orders where Company = 'companies/2' order by id() desc")));
        Assert.Equal(["orders/3", "orders/5"], Ids(await QueryAsync(db, "from Orders where Company in ($c) and id() in ($ids) order by id()", new { c = new[] { "companies/2" }, ids = new[] { "orders/5", "orders/3", "orders/2" } })));
    }

    [Fact]
    public async Task PerIndexStopStatusErrorsOfSeveralIndexesAndLockedDeletes()
    {
        var db = await SeedOrdersAsync();
        var body = JsonSerializer.Serialize(new
        {
            Indexes = new object[]
            {
                new { Name = "A", Maps = new[] { "map('Orders', o => ({ X: o.Missing.X }))" }, LockMode = "LockedIgnore", Priority = "Low" },
                new { Name = "B", Maps = new[] { "map('Orders', o => ({ Y: o.Missing.Y }))" } },
            },
        });
        using (var put = await Client.PutAsync($"/databases/{db}/admin/indexes", Api.Json(body)))
        {
            Assert.Equal(HttpStatusCode.Created, put.StatusCode);
        }
        using (var definitions = await Client.GetAsync($"/databases/{db}/indexes?name=A"))
        {
            var a = (await Api.JsonAsync(definitions)).GetProperty("Results")[0];
            Assert.Equal("LockedIgnore", a.GetProperty("LockMode").GetString());
            Assert.Equal("Low", a.GetProperty("Priority").GetString());
        }

        // Errors of several indexes in one request.
        JsonElement errors = default;
        for (var attempt = 0; attempt < 100; attempt++)
        {
            using var response = await Client.GetAsync($"/databases/{db}/indexes/errors?&name=A&name=B");
            errors = (await Api.JsonAsync(response)).GetProperty("Results");
            if (errors.GetArrayLength() == 2 && errors.EnumerateArray().All(e => e.GetProperty("Errors").GetArrayLength() == 6))
            {
                break;
            }
            await Task.Delay(50);
        }
        Assert.Equal(["A", "B"], errors.EnumerateArray().Select(e => e.GetProperty("Name").GetString()));

        // One index stopped alone.
        using (await Client.PostAsync($"/databases/{db}/admin/indexes/stop?name=B", null))
        {
        }
        using (var status = await Client.GetAsync($"/databases/{db}/indexes/status"))
        {
            var json = await Api.JsonAsync(status);
            Assert.Equal("Running", json.GetProperty("Status").GetString());
            Assert.Equal(["Running", "Paused"], json.GetProperty("Indexes").EnumerateArray().Select(i => i.GetProperty("Status").GetString()));
        }
        using (await Client.PostAsync($"/databases/{db}/admin/indexes/start?name=B", null))
        {
        }
        using (var status = await Client.GetAsync($"/databases/{db}/indexes/status"))
        {
            Assert.All((await Api.JsonAsync(status)).GetProperty("Indexes").EnumerateArray(), i => Assert.Equal("Running", i.GetProperty("Status").GetString()));
        }

        // Lock modes hold deletes too: LockedIgnore ignores it, LockedError refuses it.
        using (var delete = await Client.DeleteAsync($"/databases/{db}/indexes?name=A"))
        {
            Assert.Equal(HttpStatusCode.NoContent, delete.StatusCode);
        }
        using (await Client.PostAsync($"/databases/{db}/indexes/set-lock", Api.Json("""{"IndexNames":["B"],"Mode":"LockedError"}""")))
        {
        }
        using (var delete = await Client.DeleteAsync($"/databases/{db}/indexes?name=B"))
        {
            await Api.AssertErrorAsync(delete, HttpStatusCode.Conflict, "IndexLockedException");
        }
        using (var list = await Client.GetAsync($"/databases/{db}/indexes"))
        {
            Assert.Equal(2, (await Api.JsonAsync(list)).GetProperty("Results").GetArrayLength());
        }
    }

    [Fact]
    public async Task ConcurrentPostedQueriesNeverReadEachOthersBodies()
    {
        // The body was parsed in place and the pipe's buffer released: Kestrel reused it for other
        // requests while the query still read it ("expected 'from', found 'tity'").
        var db = await SeedOrdersAsync();
        var failures = new System.Collections.Concurrent.ConcurrentBag<string>();
        await Task.WhenAll(Enumerable.Range(0, 16).Select(worker => Task.Run(async () =>
        {
            for (var i = 0; i < 40; i++)
            {
                var id = $"orders/{1 + ((worker + i) % 6)}";
                var padding = new string((char)('a' + (worker % 26)), 200 + (i * 37 % 900));
                var body = JsonSerializer.Serialize(new { Query = "from Orders where id() = $id and id() != $pad", QueryParameters = new { id, pad = padding } });
                using var response = await Client.PostAsync($"/databases/{db}/queries", Api.Json(body));
                var text = await response.Content.ReadAsStringAsync();
                if (response.StatusCode != HttpStatusCode.OK || !text.Contains($"\"@id\":\"{id}\"", StringComparison.Ordinal))
                {
                    failures.Add($"{id}: {(int)response.StatusCode} {text[..Math.Min(200, text.Length)]}");
                }
            }
        })));
        Assert.Empty(failures);
    }
}
