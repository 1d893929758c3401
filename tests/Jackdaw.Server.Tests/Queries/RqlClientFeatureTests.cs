using System.Net;
using System.Text.Json;
using Jackdaw.Server.Tests.Infrastructure;

namespace Jackdaw.Server.Tests.Queries;

/// <summary>
/// The RQL that RavenDB's clients generate beside where / order by / select: <c>regex()</c>,
/// <c>proximity()</c>, the <c>filter</c> clause with <c>filter_limit</c>, <c>include timings()</c>
/// and <c>?debug=explain</c>, through the real server.
/// </summary>
public sealed class RqlClientFeatureTests(ServerFixture fixture) : IClassFixture<ServerFixture>
{
    private HttpClient Client => fixture.Client;

    private async Task<string> SeedAsync(int users = 30)
    {
        var db = await fixture.CreateDatabaseAsync();
        var commands = Enumerable.Range(1, users).Select(i =>
            "{\"Type\":\"PUT\",\"Id\":\"users/" + i + "\",\"Document\":{\"Name\":\"" + (i % 2 == 0 ? "Anne " : "Bob ") + i + "\",\"Age\":" + i + ",\"@metadata\":{\"@collection\":\"Users\"}}}").ToList();
        string[] notes =
        [
            """["Anne has fluent French", "she knows English"]""",
            """["fluent in French"]""",
            """["speaks fluent", "French cuisine"]""",
            """["French is fluent here"]""",
        ];
        for (var i = 0; i < notes.Length; i++)
        {
            commands.Add("{\"Type\":\"PUT\",\"Id\":\"employees/" + (i + 1) + "\",\"Document\":{\"Notes\":" + notes[i] + ",\"@metadata\":{\"@collection\":\"Employees\"}}}");
        }
        using var response = await Client.PostAsync($"/databases/{db}/bulk_docs", Api.Json("{\"Commands\":[" + string.Join(",", commands) + "]}"));
        Assert.Equal(HttpStatusCode.OK, response.StatusCode);
        return db;
    }

    private async Task<HttpResponseMessage> PostAsync(string db, string query, string parameters = "{}", string suffix = "") =>
        await Client.PostAsync($"/databases/{db}/queries{suffix}", Api.Json($"{{\"Query\":{JsonSerializer.Serialize(query)},\"QueryParameters\":{parameters},\"WaitForNonStaleResults\":true}}"));

    private async Task<JsonElement> QueryAsync(string db, string query, string parameters = "{}", string suffix = "")
    {
        using var response = await PostAsync(db, query, parameters, suffix);
        var body = await Api.JsonAsync(response);
        Assert.True(response.StatusCode == HttpStatusCode.OK, query + ": " + body);
        return body;
    }

    private static string[] Ids(JsonElement body) =>
        body.GetProperty("Results").EnumerateArray().Select(d => d.GetProperty("@metadata").GetProperty("@id").GetString()!).ToArray();

    [Fact]
    public async Task RegexMatchesValuesOnAnIndexAndOnTheCollection()
    {
        var db = await SeedAsync();
        var anneTwenties = await QueryAsync(db, "from Users where regex(Name, '^ANNE 2[0-9]$') order by Age");
        Assert.Equal(["users/20", "users/22", "users/24", "users/26", "users/28"], Ids(anneTwenties));
        Assert.StartsWith("Auto/Users/By", anneTwenties.GetProperty("IndexName").GetString(), StringComparison.Ordinal);

        // On id() the collection answers, without an index.
        var byId = await QueryAsync(db, "from Users where regex(id(), $p)", """{"p":"/1[0-2]$"}""");
        Assert.Equal("collection/Users", byId.GetProperty("IndexName").GetString());
        Assert.Equal(["users/10", "users/11", "users/12"], Ids(byId));

        using var invalid = await PostAsync(db, "from Users where regex(Name, 'a(')");
        var message = await Api.AssertErrorAsync(invalid, HttpStatusCode.BadRequest, "InvalidQueryException");
        Assert.Contains("'a(' is not a valid regular expression", message, StringComparison.Ordinal);
    }

    [Fact]
    public async Task ProximityFindsWordsWithinTheDistanceInOneValueAndRefusesWhatRavenDbRefuses()
    {
        var db = await SeedAsync();
        Assert.Equal(["employees/1"], Ids(await QueryAsync(db, "from Employees where proximity(search(Notes, 'fluent french'), 0)")));
        Assert.Equal(["employees/1", "employees/2"], Ids(await QueryAsync(db, "from Employees where proximity(search(Notes, 'fluent french'), 1) order by id()")));
        // Out of order takes two moves more; the words of two values never make a phrase.
        Assert.Equal(["employees/1", "employees/2", "employees/4"], Ids(await QueryAsync(db, "from Employees where proximity(search(Notes, 'fluent french'), 3) order by id()")));
        Assert.DoesNotContain("employees/3", Ids(await QueryAsync(db, "from Employees where proximity(search(Notes, 'fluent french'), 50)")));

        using var single = await PostAsync(db, "from Employees where proximity(search(Notes, 'fluent'), 1)");
        Assert.Contains("Proximity search works only on multiple search terms", await Api.AssertErrorAsync(single, HttpStatusCode.BadRequest, "InvalidQueryException"), StringComparison.Ordinal);
        using var wildcard = await PostAsync(db, "from Employees where proximity(search(Notes, '*luent frenc*'), 1)");
        Assert.Contains("Proximity search works only on simple string terms, not wildcard", await Api.AssertErrorAsync(wildcard, HttpStatusCode.BadRequest, "InvalidQueryException"), StringComparison.Ordinal);
    }

    [Fact]
    public async Task AFilterIsTestedOnWhatTheIndexFindsBeforePagingAndFilterLimitBoundsIt()
    {
        var db = await SeedAsync();
        var page = await QueryAsync(db, "from Users where Age >= 10 order by Age filter Age < 20 and Name != 'anne 14' limit 3 offset 2");
        Assert.Equal(["users/12", "users/13", "users/15"], Ids(page));
        Assert.Equal(9, page.GetProperty("TotalResults").GetInt64());
        Assert.Equal(21, page.GetProperty("ScannedResults").GetInt64());

        var limited = await QueryAsync(db, "from Users where Age >= 10 order by Age desc filter Age < 28 filter_limit $n", """{"n":5}""");
        Assert.Equal(["users/27", "users/26"], Ids(limited));
        Assert.Equal(5, limited.GetProperty("ScannedResults").GetInt64());

        // Without a where, the collection is scanned.
        var scan = await QueryAsync(db, "from Users filter Age <= 3 or startsWith(Name, 'bob 2')");
        Assert.Equal(["users/1", "users/2", "users/3", "users/21", "users/23", "users/25", "users/27", "users/29"], Ids(scan));
        Assert.Equal("collection/Users", scan.GetProperty("IndexName").GetString());
        Assert.Equal(30, scan.GetProperty("ScannedResults").GetInt64());
        var scanLimited = await QueryAsync(db, "from Users order by id() filter Age > 1 filter_limit 4");
        Assert.Equal(4, scanLimited.GetProperty("ScannedResults").GetInt64());
        Assert.Equal(3, scanLimited.GetProperty("TotalResults").GetInt64());

        // A query without a filter says nothing of scanning.
        Assert.False((await QueryAsync(db, "from Users where Age > 3")).TryGetProperty("ScannedResults", out _));

        using var misplaced = await PostAsync(db, "from Users select Name filter Age > 1");
        Assert.Contains("'filter' must come before 'select'", await Api.AssertErrorAsync(misplaced, HttpStatusCode.BadRequest, "InvalidQueryException"), StringComparison.Ordinal);
        using var badLimit = await PostAsync(db, "from Users filter Age > 1 filter_limit 'x'");
        Assert.Contains("'filter_limit' must be a whole number", await Api.AssertErrorAsync(badLimit, HttpStatusCode.BadRequest, "InvalidQueryException"), StringComparison.Ordinal);

        // A subscription has its where for that.
        using var subscription = await Client.PutAsync($"/databases/{db}/subscriptions", Api.Json("""{"Query":"from Users filter Age > 1"}"""));
        Assert.Contains("instead of in 'filter'", await Api.AssertErrorAsync(subscription, HttpStatusCode.BadRequest, "InvalidQueryException"), StringComparison.Ordinal);
    }

    [Fact]
    public async Task IncludeTimingsAnswersTheDurationOfEachStage()
    {
        var db = await SeedAsync();
        var indexed = await QueryAsync(db, "from Users where Age > 3 include timings()");
        var timings = indexed.GetProperty("Timings");
        Assert.True(timings.GetProperty("DurationInMs").GetInt64() >= 0);
        var stages = timings.GetProperty("Timings");
        Assert.Equal(["Optimizer", "Staleness", "Query"], stages.EnumerateObject().Select(p => p.Name));
        Assert.Equal(["Lucene", "Retriever"], stages.GetProperty("Query").GetProperty("Timings").EnumerateObject().Select(p => p.Name));
        Assert.Equal(JsonValueKind.Null, stages.GetProperty("Optimizer").GetProperty("Timings").ValueKind);
        Assert.Equal(27, indexed.GetProperty("TotalResults").GetInt64());

        var scanned = await QueryAsync(db, "from Users include timings(), Company");
        var scanStages = scanned.GetProperty("Timings").GetProperty("Timings");
        Assert.Equal(["Optimizer", "Query", "Includes"], scanStages.EnumerateObject().Select(p => p.Name));
        Assert.Equal(["Storage"], scanStages.GetProperty("Query").GetProperty("Timings").EnumerateObject().Select(p => p.Name));

        Assert.False((await QueryAsync(db, "from Users where Age > 3")).TryGetProperty("Timings", out _));
        using var unsupported = await PostAsync(db, "from Users include explanations()");
        Assert.Contains("'include explanations()' is not supported", await Api.AssertErrorAsync(unsupported, HttpStatusCode.BadRequest, "InvalidQueryException"), StringComparison.Ordinal);
    }

    [Fact]
    public async Task StartAndPageSizePageOnTopOfTheQuerysOwnOffsetAndLimitWithTheirOwnEtag()
    {
        var db = await SeedAsync();
        var first = await QueryAsync(db, "from Users where Age > 3 order by Age as long", suffix: "?start=0&pageSize=5");
        Assert.Equal(["users/4", "users/5", "users/6", "users/7", "users/8"], Ids(first));
        Assert.Equal(27, first.GetProperty("TotalResults").GetInt64());
        var second = await QueryAsync(db, "from Users where Age > 3 order by Age as long", suffix: "?start=5&pageSize=5");
        Assert.Equal(["users/9", "users/10", "users/11", "users/12", "users/13"], Ids(second));
        Assert.NotEqual(first.GetProperty("ResultEtag").GetInt64(), second.GetProperty("ResultEtag").GetInt64());

        // On top of the query's own offset and limit: the page never reaches past its limit.
        var within = await QueryAsync(db, "from Users where Age > 3 order by Age as long limit 7 offset 2", suffix: "?start=5&pageSize=5");
        Assert.Equal(["users/11", "users/12"], Ids(within));

        // The GET form reads them too, and the collection scan pages the same way.
        using var get = await Client.GetAsync($"/databases/{db}/queries?query={Uri.EscapeDataString("from Users")}&start=28&pageSize=5");
        Assert.Equal(["users/29", "users/30"], Ids(await Api.JsonAsync(get)));

        // The ETag of a page is its own: page 1's does not answer 304 for page 2.
        using var request = new HttpRequestMessage(HttpMethod.Post, $"/databases/{db}/queries?start=5&pageSize=5")
        {
            Content = Api.Json("""{"Query":"from Users where Age > 3 order by Age as long"}"""),
        };
        request.Headers.TryAddWithoutValidation("If-None-Match", "\"" + first.GetProperty("ResultEtag").GetInt64() + "\"");
        using var notCached = await Client.SendAsync(request);
        Assert.Equal(HttpStatusCode.OK, notCached.StatusCode);

        // A start past the largest position (after the query's own offset) is a clear 400, not a wrapped-around page.
        using var overflow = await PostAsync(db, "from Users where Age > 3 limit 7 offset 2", suffix: $"?start={long.MaxValue}&pageSize=5");
        Assert.Contains($"start={long.MaxValue}", await Api.AssertErrorAsync(overflow, HttpStatusCode.BadRequest, "BadRequestException"), StringComparison.Ordinal);
        using var overflowGet = await Client.GetAsync($"/databases/{db}/queries?query={Uri.EscapeDataString("from Users limit 10 offset 2")}&start={long.MaxValue - 1}");
        await Api.AssertErrorAsync(overflowGet, HttpStatusCode.BadRequest, "BadRequestException");

        using var bad = await PostAsync(db, "from Users", suffix: "?pageSize=-1");
        Assert.Contains("'pageSize'", await Api.AssertErrorAsync(bad, HttpStatusCode.BadRequest, "BadRequestException"), StringComparison.Ordinal);
    }

    [Fact]
    public async Task TimingsTrueAnswersTimingsAsIncludeTimingsDoes()
    {
        var db = await SeedAsync();
        var timed = await QueryAsync(db, "from Users where Age > 3 include Company", suffix: "?timings=true");
        Assert.Equal(["Optimizer", "Staleness", "Query", "Includes"], timed.GetProperty("Timings").GetProperty("Timings").EnumerateObject().Select(p => p.Name));
        Assert.False((await QueryAsync(db, "from Users where Age > 3", suffix: "?timings=false")).TryGetProperty("Timings", out _));
        using var bad = await PostAsync(db, "from Users", suffix: "?timings=maybe");
        Assert.Contains("timings=maybe", await Api.AssertErrorAsync(bad, HttpStatusCode.BadRequest, "BadRequestException"), StringComparison.Ordinal);
    }

    [Fact]
    public async Task DebugExplainSaysWhichIndexWouldAnswerAndWhyWithoutCreatingIt()
    {
        var db = await SeedAsync();
        var first = await QueryAsync(db, "from Users where Name = 'x'", suffix: "?debug=explain");
        Assert.Equal("Auto/Users/ByName", first.GetProperty("IndexName").GetString());
        var only = Assert.Single(first.GetProperty("Results").EnumerateArray());
        Assert.Equal("Auto/Users/ByName", only.GetProperty("Index").GetString());
        Assert.Contains("would create", only.GetProperty("Reason").GetString(), StringComparison.Ordinal);
        using (var indexes = await Client.GetAsync($"/databases/{db}/indexes"))
        {
            Assert.Empty((await Api.JsonAsync(indexes)).GetProperty("Results").EnumerateArray());
        }

        await QueryAsync(db, "from Users where Name = 'x'");
        var chosen = await QueryAsync(db, "from Users where Name = 'y'", suffix: "?debug=explain");
        Assert.Equal("Auto/Users/ByName", chosen.GetProperty("IndexName").GetString());
        Assert.StartsWith("Chosen", Assert.Single(chosen.GetProperty("Results").EnumerateArray()).GetProperty("Reason").GetString(), StringComparison.Ordinal);

        var wider = await QueryAsync(db, "from Users where Name = 'x' and Age > 3", suffix: "?debug=explain");
        Assert.Equal("Auto/Users/ByAgeAndName", wider.GetProperty("IndexName").GetString());
        var reasons = wider.GetProperty("Results").EnumerateArray().ToDictionary(r => r.GetProperty("Index").GetString()!, r => r.GetProperty("Reason").GetString()!);
        Assert.Contains("does not cover Age", reasons["Auto/Users/ByName"], StringComparison.Ordinal);
        Assert.Contains("would create", reasons["Auto/Users/ByAgeAndName"], StringComparison.Ordinal);

        var byId = await QueryAsync(db, "from Users where id() = 'users/1'", suffix: "?debug=explain");
        Assert.Equal("collection/Users", byId.GetProperty("IndexName").GetString());
        using (var get = await Client.GetAsync($"/databases/{db}/queries?debug=explain&query={Uri.EscapeDataString("from Users")}"))
        {
            Assert.Equal("collection/Users", (await Api.JsonAsync(get)).GetProperty("IndexName").GetString());
        }

        using var unknown = await PostAsync(db, "from Users", suffix: "?debug=entries");
        Assert.Contains("debug=entries is not supported", await Api.AssertErrorAsync(unknown, HttpStatusCode.BadRequest, "BadRequestException"), StringComparison.Ordinal);
    }

    [Fact]
    public async Task RavenDbsClientsGetRavenDbsFullErrorTypeNames()
    {
        var db = await SeedAsync(2);
        async Task<HttpResponseMessage> SendAsync(string uri, bool fromRavenClient)
        {
            using var request = new HttpRequestMessage(HttpMethod.Post, uri) { Content = Api.Json("""{"Query":"from Users where proximity(search(Name, 'anne'), 1)"}""") };
            if (fromRavenClient)
            {
                request.Headers.Add("Raven-Client-Version", "7.2.3");
            }
            return await Client.SendAsync(request);
        }
        using (var plain = await SendAsync($"/databases/{db}/queries", fromRavenClient: false))
        {
            await Api.AssertErrorAsync(plain, HttpStatusCode.BadRequest, "InvalidQueryException");
        }
        using (var raven = await SendAsync($"/databases/{db}/queries", fromRavenClient: true))
        {
            Assert.Contains("multiple search terms", await Api.AssertErrorAsync(raven, HttpStatusCode.BadRequest, "Raven.Client.Exceptions.InvalidQueryException"), StringComparison.Ordinal);
        }
        using var index = new HttpRequestMessage(HttpMethod.Post, $"/databases/{db}/queries") { Content = Api.Json("""{"Query":"from index 'Nope'"}""") };
        index.Headers.Add("Raven-Client-Version", "7.2.3");
        using var noIndex = await Client.SendAsync(index);
        await Api.AssertErrorAsync(noIndex, HttpStatusCode.NotFound, "Raven.Client.Exceptions.Documents.Indexes.IndexDoesNotExistException");
    }
}
