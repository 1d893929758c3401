using System.Net;
using System.Runtime.CompilerServices;
using System.Text;
using System.Text.Json;
using Jackdaw.Server.Tests.Infrastructure;
using Microsoft.Extensions.Logging;

namespace Jackdaw.Server.Tests.Wire;

/// <summary>
/// <c>/streams/docs</c> and <c>/streams/queries</c> over HTTP: the same documents as paging and as
/// <c>/queries</c> give (a model of ids by prefix and wildcard, the corpus orders through the
/// document store, auto-indexes and a static index with several entries per document), both
/// answer formats, the errors, and what a slow or vanished client costs the server.
/// </summary>
public sealed class StreamingTests(ServerFixture fixture) : IClassFixture<ServerFixture>
{
    private HttpClient Client => fixture.Client;

    // ---- streams/docs ----

    [Fact]
    public async Task AStreamByPrefixGivesWhatAModelOfIdsGivesForEveryFilterAndPage()
    {
        var db = await fixture.CreateDatabaseAsync();
        var random = new Random(26);
        var ids = new HashSet<string>(StringComparer.OrdinalIgnoreCase);
        string[] prefixes = ["users/", "Users/A", "orders/", "o", "ü/"];
        while (ids.Count < 400)
        {
            ids.Add(prefixes[random.Next(prefixes.Length)] + random.Next(0, 2000) + (random.Next(4) == 0 ? "-" + (char)('a' + random.Next(3)) : ""));
        }
        await PutAllAsync(db, ids.Select(id => (id, $$"""{"N":{{id.Length}}}""")));

        // Storage-key order: the invariant lower case in UTF-8, ordinal.
        var model = ids.OrderBy(id => Encoding.UTF8.GetBytes(id.ToLowerInvariant()), ByteOrder.Instance).ToList();
        string?[] patterns = [null, "1*", "*-a|*-b", "?", "1?*", "*3"];
        for (var round = 0; round < 60; round++)
        {
            var some = prefixes[random.Next(prefixes.Length)].ToUpperInvariant();
            var prefix = round == 0 ? "users/" : some[..random.Next(1, some.Length + 1)];
            var matches = patterns[random.Next(patterns.Length)];
            var exclude = random.Next(3) == 0 ? patterns[random.Next(1, patterns.Length)] : null;
            var under = model.Where(id => id.StartsWith(prefix, StringComparison.OrdinalIgnoreCase)).ToList();
            var startAfter = random.Next(3) == 0 && under.Count > 0 ? under[random.Next(under.Count)] : null;
            var start = random.Next(3) == 0 ? random.Next(0, 20) : 0;
            var pageSize = random.Next(3) == 0 ? random.Next(0, 50) : int.MaxValue;

            var expected = under
                .Where(id => startAfter is null || Compare(id, startAfter) > 0)
                .Where(id => matches is null || Glob(matches, id[prefix.Length..]))
                .Where(id => exclude is null || !Glob(exclude, id[prefix.Length..]))
                .Skip(start).Take(pageSize).ToList();
            var url = $"/databases/{db}/streams/docs?startsWith={Uri.EscapeDataString(prefix)}"
                + (matches is null ? "" : "&matches=" + Uri.EscapeDataString(matches))
                + (exclude is null ? "" : "&exclude=" + Uri.EscapeDataString(exclude))
                + (startAfter is null ? "" : "&startAfter=" + Uri.EscapeDataString(startAfter))
                + (start == 0 ? "" : "&start=" + start)
                + (pageSize == int.MaxValue ? "" : "&pageSize=" + pageSize);
            var streamed = IdsOf(await StreamAsync(url));
            Assert.True(expected.SequenceEqual(streamed), $"{url}\nexpected {string.Join(",", expected)}\ngot      {string.Join(",", streamed)}");
        }
    }

    [Fact]
    public async Task AStreamOfEveryDocumentIsNewestFirstAsPagingIs()
    {
        var db = await fixture.CreateDatabaseAsync();
        await PutAllAsync(db, Enumerable.Range(0, 3000).Select(i => ($"items/{i}", $$$"""{"Text":"{{{new string('x', i % 700)}}}","@metadata":{"@collection":"Items"}}""")));
        // Changing some moves them to the front.
        await PutAllAsync(db, Enumerable.Range(0, 3000).Where(i => i % 97 == 0).Select(i => ($"items/{i}", """{"Changed":true}""")));

        var paged = new List<string>();
        for (var start = 0; ; start += 1024)
        {
            using var response = await Client.GetAsync($"/databases/{db}/docs?start={start}&pageSize=1024");
            var page = IdsOf((await Api.JsonAsync(response)).GetProperty("Results"));
            paged.AddRange(page);
            if (page.Count < 1024)
            {
                break;
            }
        }
        var streamed = IdsOf(await StreamAsync($"/databases/{db}/streams/docs"));

        Assert.Equal(3000, streamed.Count);
        Assert.Equal(paged, streamed);
        Assert.All(streamed.Take(31), id => Assert.Equal(0, int.Parse(id["items/".Length..]) % 97));
        Assert.Equal(paged.Skip(100).Take(7), IdsOf(await StreamAsync($"/databases/{db}/streams/docs?start=100&pageSize=7")));
    }

    [Fact]
    public async Task JsonLinesGiveOneDocumentPerLine()
    {
        var db = await fixture.CreateDatabaseAsync();
        await PutAllAsync(db, Enumerable.Range(1, 5).Select(i => ($"users/{i}", $$"""{"Name":"user {{i}}\nwith a line break"}""")));

        using var response = await Client.GetAsync($"/databases/{db}/streams/docs?startsWith=users/&format=jsonl");
        var text = await response.Content.ReadAsStringAsync();

        Assert.Equal(HttpStatusCode.OK, response.StatusCode);
        var lines = text.Split('\n', StringSplitOptions.RemoveEmptyEntries);
        Assert.Equal(["users/1", "users/2", "users/3", "users/4", "users/5"], lines.Select(l => JsonDocument.Parse(l).RootElement.GetProperty("@metadata").GetProperty("@id").GetString()));
        Assert.EndsWith("\n", text, StringComparison.Ordinal);
    }

    // ---- streams/queries ----

    [Theory]
    [InlineData("from Orders", false)]
    [InlineData("from Orders order by id() desc", true)]
    [InlineData("from Orders where id() in ('orders/7', 'orders/3', 'orders/1200') ", false)]
    [InlineData("from Orders limit 25 offset 10", true)]
    [InlineData("from @all_docs order by id()", true)]
    [InlineData("from Orders where Freight > 100", false)]
    [InlineData("from Orders where Freight > 100 order by Freight desc", true)]
    [InlineData("from Orders where ShipTo.Country = 'Qatar' or Freight < 10 order by OrderedAt, id() select Company, Freight, ShipTo.City as City", true)]
    [InlineData("from Orders where search(Lines[].ProductName, 'tuna chair')", true)]
    [InlineData("from Orders where Freight between 10 and 500 order by Employee as alphaNumeric limit 300 offset 40", true)]
    [InlineData("from index 'Orders/Lines' where Quantity > 20", false)]
    [InlineData("from index 'Orders/Lines' where Quantity > 20 order by Quantity desc", true)]
    [InlineData("from index 'Orders/Lines' order by Product limit 50 offset 5", true)]
    [InlineData("from Orders where Freight > 100 order by Freight desc filter ShipTo.Country != 'Qatar' and regex(Company, '7$') limit 50 offset 3", true)]
    [InlineData("from Orders filter Freight < 50 limit 40 filter_limit 900", true)]
    public async Task AQueryStreamGivesTheQuerysResults(string rql, bool ordered)
    {
        var db = await OrdersDatabaseAsync();
        var answer = await QueryAsync(db, rql);
        var expected = IdsOf(answer.GetProperty("Results"));
        var stream = await StreamAsync($"/databases/{db}/streams/queries", Body(rql));
        var streamed = IdsOf(stream.GetProperty("Results"));

        Assert.True(expected.Count > 0, rql);
        if (ordered)
        {
            Assert.Equal(expected, streamed);
        }
        else
        {
            Assert.Equal(expected.Order(StringComparer.Ordinal), streamed.Order(StringComparer.Ordinal));
        }
        Assert.Equal(streamed.Count, streamed.Distinct(StringComparer.OrdinalIgnoreCase).Count());
        Assert.Equal(answer.GetProperty("IndexName").GetString(), stream.GetProperty("IndexName").GetString());
        Assert.False(stream.GetProperty("IsStale").GetBoolean());
        Assert.True(stream.GetProperty("ResultEtag").GetInt64() > 0);
        Assert.True(stream.GetProperty("IndexTimestamp").TryGetDateTime(out _));
        // A stream states its total before it starts: an index's entries, and what a filter would
        // keep is not known yet (its total is what the where matches).
        if (!rql.StartsWith("from index", StringComparison.Ordinal) && !rql.Contains(" filter ", StringComparison.Ordinal))
        {
            Assert.Equal(answer.GetProperty("TotalResults").GetInt64(), stream.GetProperty("TotalResults").GetInt64());
        }
        // The same documents, byte for byte (projections included).
        Assert.Equal(answer.GetProperty("Results").EnumerateArray().Select(r => r.GetRawText()).Order(StringComparer.Ordinal),
            stream.GetProperty("Results").EnumerateArray().Select(r => r.GetRawText()).Order(StringComparer.Ordinal));
    }

    [Fact]
    public async Task AStaticIndexWithSeveralEntriesPerDocumentStreamsEachDocumentOnceAndCountsItsEntries()
    {
        var db = await OrdersDatabaseAsync();
        var entries = Corpus.Lines("orders", Orders).Sum(line => JsonDocument.Parse(line).RootElement.GetProperty("Lines").GetArrayLength());

        var stream = await StreamAsync($"/databases/{db}/streams/queries", Body("from index 'Orders/Lines' order by Quantity"));
        var ids = IdsOf(stream.GetProperty("Results"));

        Assert.Equal(Orders, ids.Count);
        Assert.Equal(Orders, ids.Distinct().Count());
        Assert.Equal(entries, stream.GetProperty("TotalResults").GetInt64());
    }

    [Fact]
    public async Task AQueryStreamInJsonLinesHasItsStatisticsFirstThenOneItemPerLine()
    {
        var db = await OrdersDatabaseAsync();

        using var response = await Client.PostAsync($"/databases/{db}/streams/queries?format=jsonl", Api.Json(Body("from Orders where Freight > 100 order by Freight select Freight")));
        var lines = (await response.Content.ReadAsStringAsync()).Split('\n', StringSplitOptions.RemoveEmptyEntries).Select(l => JsonDocument.Parse(l).RootElement).ToList();

        Assert.Equal(HttpStatusCode.OK, response.StatusCode);
        var stats = lines[0].GetProperty("Stats");
        // The auto-index of Freight (widened by the other tests' queries of this database).
        Assert.Matches("^Auto/Orders/By.*Freight", stats.GetProperty("IndexName").GetString());
        Assert.Equal(lines.Count - 1, stats.GetProperty("TotalResults").GetInt64());
        var freights = lines.Skip(1).Select(l => l.GetProperty("Item").GetProperty("Freight").GetDouble()).ToList();
        Assert.Equal(freights.Order(), freights);
        Assert.All(lines.Skip(1), l => Assert.True(l.GetProperty("Item").GetProperty("@metadata").GetProperty("@projection").GetBoolean()));
    }

    [Fact]
    public async Task TheGetFormTakesTheQueryInTheUrlAndPagesOnTopOfItsLimit()
    {
        var db = await OrdersDatabaseAsync();
        var all = IdsOf((await QueryAsync(db, "from Orders order by id()")).GetProperty("Results"));

        var page = await StreamAsync($"/databases/{db}/streams/queries?query={Uri.EscapeDataString("from Orders order by id() limit 100 offset 10")}&start=5&pageSize=20");

        Assert.Equal(all.Skip(15).Take(20), IdsOf(page.GetProperty("Results")));
    }

    [Fact]
    public async Task ErrorsBeforeTheFirstResultAreOrdinaryErrorAnswers()
    {
        var db = await fixture.CreateDatabaseAsync();

        using (var bad = await Client.PostAsync($"/databases/{db}/streams/queries", Api.Json(Body("from Orders where"))))
        {
            Assert.Contains("position 17", await Api.AssertErrorAsync(bad, HttpStatusCode.BadRequest, "InvalidQueryException"), StringComparison.Ordinal);
        }
        using (var include = await Client.PostAsync($"/databases/{db}/streams/queries", Api.Json(Body("from Orders include Company"))))
        {
            Assert.Contains("includes", await Api.AssertErrorAsync(include, HttpStatusCode.BadRequest, "InvalidQueryException"), StringComparison.Ordinal);
        }
        using (var noIndex = await Client.PostAsync($"/databases/{db}/streams/queries", Api.Json(Body("from index 'Nope'"))))
        {
            await Api.AssertErrorAsync(noIndex, HttpStatusCode.NotFound, "IndexDoesNotExistException");
        }
        using (var noBody = await Client.PostAsync($"/databases/{db}/streams/queries", Api.Json("""{"Querry":"from Orders"}""")))
        {
            await Api.AssertErrorAsync(noBody, HttpStatusCode.BadRequest, "BadRequestException");
        }
        using (var noQuery = await Client.GetAsync($"/databases/{db}/streams/queries"))
        {
            await Api.AssertErrorAsync(noQuery, HttpStatusCode.BadRequest, "BadRequestException");
        }
        using (var csv = await Client.GetAsync($"/databases/{db}/streams/docs?format=csv"))
        {
            await Api.AssertErrorAsync(csv, HttpStatusCode.NotImplemented, "FeatureNotSupportedException");
        }
        using (var size = await Client.GetAsync($"/databases/{db}/streams/docs?pageSize=-1"))
        {
            await Api.AssertErrorAsync(size, HttpStatusCode.BadRequest, "BadRequestException");
        }
        foreach (var missing in new[] { Client.GetAsync("/databases/nope/streams/docs"), Client.PostAsync("/databases/nope/streams/queries", Api.Json(Body("from Orders"))) })
        {
            using var response = await missing;
            await Api.AssertErrorAsync(response, HttpStatusCode.ServiceUnavailable, "DatabaseDoesNotExistException");
            Assert.Equal("nope", response.Headers.GetValues("Database-Missing").Single());
        }
    }

    // ---- what a stream costs the server ----

    [Fact]
    public async Task AClientThatStopsReadingHoldsNoReadTransactionAndOneThatLeavesEndsTheStreamQuietly()
    {
        await using var server = await InProcessServer.StartAsync("--max-body-size", "67108864");
        using (var create = await server.Client.PutAsync("/admin/databases?name=big", null))
        {
            Assert.Equal(HttpStatusCode.Created, create.StatusCode);
        }
        // 40 MB: more than the loopback socket buffers hold, so the server must wait for the client.
        var filler = new string('y', 50_000);
        foreach (var chunk in Enumerable.Range(0, 800).Chunk(50))
        {
            var commands = string.Join(',', chunk.Select(i => $$$$"""{"Type":"PUT","Id":"big/{{{{i:D4}}}}","Document":{"Filler":"{{{{filler}}}}","@metadata":{"@collection":"Bigs"}}}"""));
            using var put = await server.Client.PostAsync("/databases/big/bulk_docs", Api.Json("{\"Commands\":[" + commands + "]}"));
            Assert.Equal(HttpStatusCode.OK, put.StatusCode);
        }
        var database = server.Host.Server.Databases.GetDatabase("big");

        foreach (var (method, url, body) in new[]
                 {
                     (HttpMethod.Get, "/databases/big/streams/docs?startsWith=big/", (string?)null),
                     (HttpMethod.Post, "/databases/big/streams/queries", Body("from Bigs")),
                 })
        {
            using var request = new HttpRequestMessage(method, url) { Content = body is null ? null : Api.Json(body) };
            var response = await server.Client.SendAsync(request, HttpCompletionOption.ResponseHeadersRead);
            Assert.Equal(HttpStatusCode.OK, response.StatusCode);
            var content = await response.Content.ReadAsStreamAsync();
            var first = new byte[100_000];
            await content.ReadExactlyAsync(first);

            // The server is now waiting for the client to read on, with its snapshot closed.
            await Poll.UntilAsync(() => Task.FromResult(database.GetStorageStats().OldestActiveReaderTransactionId == -1), TimeSpan.FromSeconds(20), "no open read transaction while the client does not read");
            Assert.Equal(1, server.Host.Server.Statistics.ActiveRequests);

            response.Dispose();
            await Poll.UntilAsync(() => Task.FromResult(server.Host.Server.Statistics.ActiveRequests == 0), TimeSpan.FromSeconds(20), "the stream's request to end");
        }
        Assert.Equal(-1, database.GetStorageStats().OldestActiveReaderTransactionId);
        Assert.DoesNotContain(server.Logs.Records, r => r.Level >= LogLevel.Warning);
    }

    [Fact]
    public async Task AStreamWhoseDatabaseGoesAwayEndsWithTheErrorInItsShape()
    {
        await using var server = await InProcessServer.StartAsync("--max-body-size", "67108864");
        using (var create = await server.Client.PutAsync("/admin/databases?name=gone", null))
        {
            Assert.Equal(HttpStatusCode.Created, create.StatusCode);
        }
        var filler = new string('z', 50_000);
        foreach (var chunk in Enumerable.Range(0, 800).Chunk(50))
        {
            var commands = string.Join(',', chunk.Select(i => $$$"""{"Type":"PUT","Id":"g/{{{i:D4}}}","Document":{"Filler":"{{{filler}}}"}}"""));
            using var put = await server.Client.PostAsync("/databases/gone/bulk_docs", Api.Json("{\"Commands\":[" + commands + "]}"));
            Assert.Equal(HttpStatusCode.OK, put.StatusCode);
        }
        var database = server.Host.Server.Databases.GetDatabase("gone");

        using var response = await server.Client.GetAsync("/databases/gone/streams/docs?startsWith=g/", HttpCompletionOption.ResponseHeadersRead);
        var content = await response.Content.ReadAsStreamAsync();
        var start = new byte[100_000];
        await content.ReadExactlyAsync(start);
        await Poll.UntilAsync(() => Task.FromResult(database.GetStorageStats().OldestActiveReaderTransactionId == -1), TimeSpan.FromSeconds(20), "the stream to wait for the client");
        using (var delete = await server.Client.DeleteAsync("/admin/databases?name=gone"))
        {
            Assert.True(delete.IsSuccessStatusCode, delete.StatusCode.ToString());
        }

        using var rest = new MemoryStream();
        rest.Write(start);
        await content.CopyToAsync(rest);
        var answer = JsonDocument.Parse(rest.ToArray()).RootElement;

        Assert.InRange(answer.GetProperty("Results").GetArrayLength(), 2, 799);
        Assert.Contains("gone", answer.GetProperty("Error").GetString(), StringComparison.Ordinal);
        Assert.DoesNotContain(server.Logs.Records, r => r.Level >= LogLevel.Error);
    }

    // ---- helpers ----

    private const int Orders = 1500;

    private const string LinesIndex = """{"Indexes":[{"Name":"Orders/Lines","Maps":["map('Orders', o => o.Lines.map(l => ({ Product: l.Product, Quantity: l.Quantity })))"]}]}""";

    // xunit makes an instance per test: the database is kept per fixture (server) instead.
    private static readonly ConditionalWeakTable<ServerFixture, Lazy<Task<string>>> OrdersDatabases = new();

    /// <summary>The first 1,500 corpus orders and the Orders/Lines index (an entry per order line), made once per server.</summary>
    private Task<string> OrdersDatabaseAsync() => OrdersDatabases.GetValue(fixture, _ => new Lazy<Task<string>>(SeedOrdersAsync)).Value;

    private async Task<string> SeedOrdersAsync()
    {
        var db = await fixture.CreateDatabaseAsync();
        await PutAllAsync(db, Corpus.Lines("orders", Orders).Select(line =>
        {
            var json = JsonDocument.Parse(line).RootElement;
            return (json.GetProperty("@metadata").GetProperty("@id").GetString()!, line);
        }));
        using (var put = await Client.PutAsync($"/databases/{db}/admin/indexes", Api.Json(LinesIndex)))
        {
            Assert.True(put.IsSuccessStatusCode, await put.Content.ReadAsStringAsync());
        }
        return db;
    }

    private async Task PutAllAsync(string db, IEnumerable<(string Id, string Json)> documents)
    {
        foreach (var chunk in documents.Chunk(500))
        {
            var commands = string.Join(',', chunk.Select(d => $"{{\"Type\":\"PUT\",\"Id\":{JsonSerializer.Serialize(d.Id)},\"Document\":{d.Json}}}"));
            using var response = await Client.PostAsync($"/databases/{db}/bulk_docs", Api.Json("{\"Commands\":[" + commands + "]}"));
            Assert.True(response.StatusCode == HttpStatusCode.OK, await response.Content.ReadAsStringAsync());
        }
    }

    private static string Body(string rql) => JsonSerializer.Serialize(new { Query = rql, WaitForNonStaleResults = true, WaitForNonStaleResultsTimeout = "00:01:00" });

    private async Task<JsonElement> QueryAsync(string db, string rql)
    {
        using var response = await Client.PostAsync($"/databases/{db}/queries", Api.Json(Body(rql)));
        var json = await Api.JsonAsync(response);
        Assert.True(response.StatusCode == HttpStatusCode.OK, $"{rql}: {json}");
        return json;
    }

    /// <summary>A stream's whole answer (GET, or POST with a query body), checked to be one JSON object.</summary>
    private async Task<JsonElement> StreamAsync(string url, string? body = null)
    {
        using var response = body is null ? await Client.GetAsync(url) : await Client.PostAsync(url, Api.Json(body));
        var json = await Api.JsonAsync(response);
        Assert.True(response.StatusCode == HttpStatusCode.OK, $"{url}: {json}");
        Assert.False(json.TryGetProperty("Error", out _), json.ToString());
        return json;
    }

    private static List<string> IdsOf(JsonElement answer) =>
        (answer.ValueKind == JsonValueKind.Object ? answer.GetProperty("Results") : answer).EnumerateArray()
            .Select(d => d.GetProperty("@metadata").GetProperty("@id").GetString()!).ToList();

    private static int Compare(string a, string b) =>
        ByteOrder.Instance.Compare(Encoding.UTF8.GetBytes(a.ToLowerInvariant()), Encoding.UTF8.GetBytes(b.ToLowerInvariant()));

    /// <summary>The model of RavenDB's wildcards: alternatives by '|', '*' and '?', case-insensitive, the whole text.</summary>
    private static bool Glob(string pattern, string text) =>
        pattern.Split('|', StringSplitOptions.RemoveEmptyEntries).Any(p =>
            System.Text.RegularExpressions.Regex.IsMatch(text, "^" + System.Text.RegularExpressions.Regex.Escape(p).Replace("\\*", ".*").Replace("\\?", ".") + "$",
                System.Text.RegularExpressions.RegexOptions.IgnoreCase | System.Text.RegularExpressions.RegexOptions.Singleline));

    private sealed class ByteOrder : IComparer<byte[]>
    {
        public static readonly ByteOrder Instance = new();

        public int Compare(byte[]? x, byte[]? y) => x.AsSpan().SequenceCompareTo(y);
    }
}
