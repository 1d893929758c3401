using System.Net;
using System.Text;
using System.Text.Json;
using Jackdaw.Server.Tests.Infrastructure;

namespace Jackdaw.Server.Tests.Hosting;

/// <summary>
/// <c>POST /databases/{db}/multi_get</c> over HTTP: each item runs through the router and its
/// handler in the server (no loopback), in RavenDB's shape, with its own status, headers and result.
/// </summary>
public sealed class MultiGetTests(Infrastructure.ServerFixture fixture) : IClassFixture<Infrastructure.ServerFixture>
{
    private HttpClient Client => fixture.Client;

    private async Task<string> DatabaseWithUsersAsync(int count = 3)
    {
        var db = await fixture.CreateDatabaseAsync();
        for (var i = 1; i <= count; i++)
        {
            using var put = await Client.PutAsync($"/databases/{db}/docs?id=users/{i}", Api.Json($$$"""{"Name":"user {{{i}}}","Age":{{{20 + i}}},"@metadata":{"@collection":"Users"}}"""));
            Assert.Equal(HttpStatusCode.Created, put.StatusCode);
        }

        return db;
    }

    private async Task<JsonElement[]> MultiGetAsync(string db, string requests)
    {
        using var response = await Client.PostAsync($"/databases/{db}/multi_get", Api.Json("{\"Requests\":" + requests.Replace("{db}", db, StringComparison.Ordinal) + "}"));
        var body = await Api.JsonAsync(response);
        Assert.True(response.StatusCode == HttpStatusCode.OK, body.ToString());
        Assert.Equal("application/json; charset=utf-8", response.Content.Headers.ContentType!.ToString());
        Assert.Equal(["Results"], body.EnumerateObject().Select(p => p.Name));
        var results = body.GetProperty("Results").EnumerateArray().ToArray();
        foreach (var result in results)
        {
            // RavenDB's names (its clients read them in any order); the status comes first, so a
            // reader knows what the result is before it reads it.
            Assert.Equal(["StatusCode", "Headers", "Result"], result.EnumerateObject().Select(p => p.Name));
            Assert.Equal(JsonValueKind.Object, result.GetProperty("Headers").ValueKind);
        }

        return results;
    }

    private static int Status(JsonElement result) => result.GetProperty("StatusCode").GetInt32();

    private static string? Header(JsonElement result, string name) =>
        result.GetProperty("Headers").TryGetProperty(name, out var value) ? value.GetString() : null;

    private static void AssertItemError(JsonElement result, HttpStatusCode status, string type)
    {
        Assert.True((int)status == Status(result), result.ToString());
        var error = result.GetProperty("Result");
        Assert.Equal(type, error.GetProperty("Type").GetString());
        Assert.Equal(error.GetProperty("Message").GetString(), error.GetProperty("Error").GetString());
        Assert.Equal("application/json; charset=utf-8", Header(result, "Content-Type"));
    }

    [Fact]
    public async Task ItemsAreAnsweredInOrderEachWithItsOwnStatusHeadersAndResult()
    {
        var db = await DatabaseWithUsersAsync();
        using var direct = await Client.GetAsync($"/databases/{db}/docs?id=users/1");
        var etag = direct.Headers.ETag!.Tag;

        var results = await MultiGetAsync(db, """
            [
              {"Url":"/databases/{db}/docs","Query":"?&id=users%2F1","Method":"GET","Headers":{}},
              {"Url":"/databases/{db}/docs","Query":"?&id=users/2&id=users/404"},
              {"Url":"/databases/{db}/queries","Query":"?queryHash=1","Method":"POST","Content":{"Query":"from Users where Age > $age order by Age","QueryParameters":{"age":21}}},
              {"Url":"/databases/{db}/docs","Query":"?startsWith=users/&start=0&pageSize=2"},
              {"Url":"/databases/{db}/queries","Method":"POST","Content":{"Query":"from Users limit 0"}}
            ]
            """);
        Assert.Equal(5, results.Length);

        Assert.Equal(200, Status(results[0]));
        Assert.Equal(etag, Header(results[0], "ETag"));
        Assert.Equal("user 1", results[0].GetProperty("Result").GetProperty("Results")[0].GetProperty("Name").GetString());
        Assert.Equal(JsonValueKind.Object, results[0].GetProperty("Result").GetProperty("Includes").ValueKind);

        Assert.Equal(200, Status(results[1]));
        var many = results[1].GetProperty("Result").GetProperty("Results");
        Assert.Equal("user 2", many[0].GetProperty("Name").GetString());
        Assert.Equal(JsonValueKind.Null, many[1].ValueKind);

        Assert.Equal(200, Status(results[2]));
        Assert.NotNull(Header(results[2], "ETag"));
        Assert.Equal(["user 2", "user 3"], results[2].GetProperty("Result").GetProperty("Results").EnumerateArray().Select(u => u.GetProperty("Name").GetString()));

        Assert.Equal(200, Status(results[3]));
        Assert.Equal(2, results[3].GetProperty("Result").GetProperty("Results").GetArrayLength());

        Assert.Equal(3, results[4].GetProperty("Result").GetProperty("TotalResults").GetInt32());
        Assert.Equal(0, results[4].GetProperty("Result").GetProperty("Results").GetArrayLength());
    }

    [Fact]
    public async Task AnItemAnswersExactlyAsTheSameRequestSentAlone()
    {
        var db = await DatabaseWithUsersAsync();
        using var alone = await Client.GetAsync($"/databases/{db}/docs?id=users/3&include=Friend");
        var aloneBody = await alone.Content.ReadAsStringAsync();

        var results = await MultiGetAsync(db, """[{"Url":"/databases/{db}/docs","Query":"?id=users/3&include=Friend"}]""");
        Assert.Equal((int)alone.StatusCode, Status(results[0]));
        Assert.Equal(JsonDocument.Parse(aloneBody).RootElement.GetRawText(), results[0].GetProperty("Result").GetRawText());
    }

    [Fact]
    public async Task IfNoneMatchMakesAnItem304WithoutAResult()
    {
        var db = await DatabaseWithUsersAsync();
        var first = await MultiGetAsync(db, """
            [
              {"Url":"/databases/{db}/docs","Query":"?&id=users/1"},
              {"Url":"/databases/{db}/queries","Method":"POST","Content":{"Query":"from Users"}}
            ]
            """);
        var docEtag = Header(first[0], "ETag")!;
        var queryEtag = Header(first[1], "ETag")!;

        // RavenDB's Node.js client sends its cached change vector without the quotes; HTTP quotes it.
        var again = await MultiGetAsync(db, """
            [
              {"Url":"/databases/{db}/docs","Query":"?&id=users/1","Headers":{"If-None-Match":{cv}}},
              {"Url":"/databases/{db}/docs","Query":"?&id=users/1","Headers":{"If-None-Match":{etag}}},
              {"Url":"/databases/{db}/queries","Method":"POST","Headers":{"If-None-Match":{qetag}},"Content":{"Query":"from Users"}},
              {"Url":"/databases/{db}/docs","Query":"?&id=users/2","Headers":{"If-None-Match":{etag}}}
            ]
            """.Replace("{cv}", JsonSerializer.Serialize(docEtag.Trim('"')), StringComparison.Ordinal).Replace("{etag}", JsonSerializer.Serialize(docEtag), StringComparison.Ordinal).Replace("{qetag}", JsonSerializer.Serialize(queryEtag), StringComparison.Ordinal));
        for (var i = 0; i < 3; i++)
        {
            Assert.Equal(304, Status(again[i]));
            Assert.Equal(JsonValueKind.Null, again[i].GetProperty("Result").ValueKind);
        }

        Assert.Equal(docEtag, Header(again[0], "ETag"));
        Assert.Equal(200, Status(again[3]));
    }

    [Fact]
    public async Task AFailingItemHasItsOwnErrorWhileTheOthersSucceed()
    {
        var db = await DatabaseWithUsersAsync();
        var results = await MultiGetAsync(db, """
            [
              {"Url":"/databases/{db}/docs","Query":"?id=users/404"},
              {"Url":"/databases/{db}/queries","Method":"POST","Content":{"Query":"from Users where"}},
              {"Url":"/databases/{db}/docs","Query":"?id=users/1"},
              {"Url":"/databases/{db}/test/throw"},
              {"Url":"/databases/{db}/test/write-then-throw"},
              {"Url":"/databases/{db}/queries","Method":"POST","Content":{"Query":"from index 'NoSuchIndex'"}},
              {"Url":"/databases/{db}/docs","Query":"?id=users/2"}
            ]
            """);
        AssertItemError(results[0], HttpStatusCode.NotFound, "DocumentDoesNotExistException");
        AssertItemError(results[1], HttpStatusCode.BadRequest, "InvalidQueryException");
        Assert.Equal("user 1", results[2].GetProperty("Result").GetProperty("Results")[0].GetProperty("Name").GetString());
        AssertItemError(results[3], HttpStatusCode.InternalServerError, "InternalServerErrorException");
        Assert.Contains("failed on purpose", results[3].GetProperty("Result").GetProperty("Message").GetString(), StringComparison.Ordinal);

        // What a handler wrote before it failed is dropped, headers included: the error is the answer.
        AssertItemError(results[4], HttpStatusCode.InternalServerError, "InternalServerErrorException");
        Assert.Null(Header(results[4], "X-Partial"));
        Assert.False(results[4].GetProperty("Result").TryGetProperty("Partial", out _));

        AssertItemError(results[5], HttpStatusCode.NotFound, "IndexDoesNotExistException");
        Assert.Equal(200, Status(results[6]));
        Assert.Contains(fixture.Server.Logs.Records, r => r.Exception?.Message == "the handler failed after writing");
    }

    [Fact]
    public async Task UnknownPathsAndMethodsAreItemErrorsAsTheyWouldBeAlone()
    {
        var db = await DatabaseWithUsersAsync(1);
        var results = await MultiGetAsync(db, """
            [
              {"Url":"/databases/{db}/counters","Query":"?docId=users/1"},
              {"Url":"/databases/{db}/queries","Method":"PUT"},
              {"Url":"/databases/{db}/docs","Method":"get","Query":"id=users/1"}
            ]
            """);
        AssertItemError(results[0], HttpStatusCode.NotImplemented, "FeatureNotSupportedException");
        AssertItemError(results[1], HttpStatusCode.MethodNotAllowed, "MethodNotAllowedException");
        Assert.Contains("POST", Header(results[1], "Allow"), StringComparison.Ordinal);
        // A lower-case method and a query without its '?' are read as meant.
        Assert.Equal(200, Status(results[2]));
    }

    [Fact]
    public async Task PathsWithoutTheDatabaseAreRelativeToItAndAnotherDatabaseIsRefused()
    {
        var db = await DatabaseWithUsersAsync(1);
        var other = await DatabaseWithUsersAsync(1);
        var results = await MultiGetAsync(db, """
            [
              {"Url":"/docs","Query":"?id=users/1"},
              {"Url":"/databases/{DB}/docs?id=users/1"},
              {"Url":"/databases/{other}/docs","Query":"?id=users/1"},
              {"Url":"/docs?id=users/1","Query":"?include=Friend"}
            ]
            """.Replace("{DB}", db.ToUpperInvariant(), StringComparison.Ordinal).Replace("{other}", other, StringComparison.Ordinal));
        Assert.Equal(200, Status(results[0]));
        Assert.Equal(200, Status(results[1]));
        AssertItemError(results[2], HttpStatusCode.BadRequest, "BadRequestException");
        Assert.Contains(other, results[2].GetProperty("Result").GetProperty("Message").GetString(), StringComparison.Ordinal);
        Assert.Equal(200, Status(results[3]));
        // With an include the answer has no ETag: the Url's query and the Query were both read.
        Assert.Null(Header(results[3], "ETag"));
    }

    [Fact]
    public async Task ContentIsTheItemsBodyWhetherSentAsJsonOrAsText()
    {
        var db = await DatabaseWithUsersAsync();
        var asText = JsonSerializer.Serialize("""{"Query":"from Users where Name = $n","QueryParameters":{"n":"user \"2\"\u00e9"}}""");
        var results = await MultiGetAsync(db, """
            [
              {"Url":"/databases/{db}/queries","Method":"POST","Content":{text}},
              {"Url":"/databases/{db}/queries","Method":"POST","Content":"{\"Query\":\"from Users where Name = 'user 3'\"}"},
              {"Url":"/databases/{db}/docs","Method":"POST","Content":{"Ids":["users/1","users/2"]}},
              {"Url":"/databases/{db}/docs","Query":"?id=users/9","Method":"PUT","Content":{"Name":"written inside","@metadata":{"@collection":"Users"}}}
            ]
            """.Replace("{text}", asText, StringComparison.Ordinal));
        Assert.Equal(200, Status(results[0]));
        Assert.Equal(0, results[0].GetProperty("Result").GetProperty("TotalResults").GetInt32());
        Assert.Equal("user 3", results[1].GetProperty("Result").GetProperty("Results")[0].GetProperty("Name").GetString());
        Assert.Equal(2, results[2].GetProperty("Result").GetProperty("Results").GetArrayLength());
        Assert.Equal(201, Status(results[3]));
        Assert.Equal("users/9", results[3].GetProperty("Result").GetProperty("Id").GetString());

        using var stored = await Client.GetAsync($"/databases/{db}/docs?id=users/9");
        Assert.Equal("written inside", (await Api.JsonAsync(stored)).GetProperty("Results")[0].GetProperty("Name").GetString());
    }

    [Fact]
    public async Task ManyLargeResultsStreamOutAsValidJson()
    {
        var db = await fixture.CreateDatabaseAsync();
        var text = new string('x', 4000);
        using (var put = await Client.PutAsync($"/databases/{db}/docs?id=big/1", Api.Json($$$"""{"Text":"{{{text}}}"}""")))
        {
            Assert.Equal(HttpStatusCode.Created, put.StatusCode);
        }

        var requests = "[" + string.Join(",", Enumerable.Repeat("""{"Url":"/databases/{db}/docs","Query":"?id=big/1"}""", 100)) + "]";
        var results = await MultiGetAsync(db, requests);
        Assert.Equal(100, results.Length);
        Assert.All(results, r => Assert.Equal(text, r.GetProperty("Result").GetProperty("Results")[0].GetProperty("Text").GetString()));
    }

    [Fact]
    public async Task StreamsAndWebSocketsAreRefusedAsItemsWhileOtherRoutesWork()
    {
        var db = await DatabaseWithUsersAsync(1);
        var results = await MultiGetAsync(db, """
            [
              {"Url":"/databases/{db}/changes/events","Query":"?collection=Users"},
              {"Url":"/databases/{db}/changes"},
              {"Url":"/databases/{db}/subscriptions/connect","Query":"?name=none"},
              {"Url":"/databases/{db}/bulk_insert","Method":"POST","Content":"{\"Id\":\"users/7\",\"Document\":{\"Name\":\"bulk\"}}\n"},
              {"Url":"/databases/{db}/docs","Query":"?id=users/1","Method":"HEAD"},
              {"Url":"/databases/{db}/collections/stats"},
              {"Url":"/databases/{db}/docs","Query":"?id=users/7"}
            ]
            """);
        AssertItemError(results[0], HttpStatusCode.BadRequest, "BadRequestException");
        AssertItemError(results[1], HttpStatusCode.BadRequest, "BadRequestException");
        Assert.True(Status(results[2]) is 400 or 404, results[2].ToString());
        Assert.Equal(1, results[3].GetProperty("Result").GetProperty("Count").GetInt32());
        Assert.Equal(200, Status(results[4]));
        Assert.Equal(JsonValueKind.Null, results[4].GetProperty("Result").ValueKind);
        Assert.NotNull(Header(results[4], "ETag"));
        Assert.Equal(1, results[5].GetProperty("Result").GetProperty("Collections").GetProperty("Users").GetInt32());
        // Items run in order: a later one sees what an earlier one wrote.
        Assert.Equal("bulk", results[6].GetProperty("Result").GetProperty("Results")[0].GetProperty("Name").GetString());
    }

    [Fact]
    public async Task NoRequestsIsAnEmptyAnswer()
    {
        var db = await fixture.CreateDatabaseAsync();
        Assert.Empty(await MultiGetAsync(db, "[]"));
    }

    [Fact]
    public async Task AMultiGetInsideAMultiGetIsRefusedForThatItem()
    {
        var db = await DatabaseWithUsersAsync(1);
        var results = await MultiGetAsync(db, """
            [
              {"Url":"/databases/{db}/multi_get","Method":"POST","Content":{"Requests":[{"Url":"/docs","Query":"?id=users/1"}]}},
              {"Url":"/databases/{db}/docs","Query":"?id=users/1"}
            ]
            """);
        AssertItemError(results[0], HttpStatusCode.BadRequest, "BadRequestException");
        Assert.Equal(200, Status(results[1]));
    }

    [Fact]
    public async Task AMissingDatabaseFailsTheWholeBatchAsRavenDbDoes()
    {
        using var response = await Client.PostAsync("/databases/nosuchdb/multi_get", Api.Json("""{"Requests":[{"Url":"/docs","Query":"?id=a"}]}"""));
        await Api.AssertErrorAsync(response, HttpStatusCode.ServiceUnavailable, "DatabaseDoesNotExistException");
        Assert.Equal("nosuchdb", response.Headers.GetValues("Database-Missing").Single());
    }

    [Theory]
    [InlineData("", "InvalidJsonException")]
    [InlineData("[]", "BadRequestException")]
    [InlineData("{}", "BadRequestException")]
    [InlineData("""{"Requests":{}}""", "BadRequestException")]
    [InlineData("""{"Requests":[1]}""", "BadRequestException")]
    [InlineData("""{"Requests":[{}]}""", "BadRequestException")]
    [InlineData("""{"Requests":[{"Url":"docs"}]}""", "BadRequestException")]
    [InlineData("""{"Requests":[{"Url":5}]}""", "BadRequestException")]
    [InlineData("""{"Requests":[{"Url":"/docs","Method":1}]}""", "BadRequestException")]
    [InlineData("""{"Requests":[{"Url":"/docs","Headers":[]}]}""", "BadRequestException")]
    [InlineData("""{"Requests":[{"Url":"/docs","Headers":{"If-None-Match":5}}]}""", "BadRequestException")]
    [InlineData("""{"Requests":[{"Url":"/docs",}]}""", "InvalidJsonException")]
    [InlineData("""{"Requests":[{"Url":"/docs"}""", "InvalidJsonException")]
    public async Task ABadBodyIsA400ThatSaysWhatIsWrong(string body, string type)
    {
        var db = await fixture.CreateDatabaseAsync();
        using var response = await Client.PostAsync($"/databases/{db}/multi_get", new StringContent(body, Encoding.UTF8, "application/json"));
        var message = await Api.AssertErrorAsync(response, HttpStatusCode.BadRequest, type);
        if (type == "BadRequestException")
        {
            Assert.Contains("Requests", message, StringComparison.Ordinal);
        }
    }

    [Fact]
    public async Task TheBatchCountsAsOneRequestServed()
    {
        var db = await DatabaseWithUsersAsync(1);
        var statistics = fixture.Server.Host.Server.Statistics;
        var before = statistics.RequestsServed;
        await MultiGetAsync(db, """[{"Url":"/docs","Query":"?id=users/1"},{"Url":"/docs","Query":"?id=users/1"},{"Url":"/docs","Query":"?id=users/1"}]""");
        // The batch is counted once its handler returns, which may be just after the client has the
        // answer; its items would have been counted before that.
        await Poll.UntilAsync(() => Task.FromResult(statistics.RequestsServed > before), TimeSpan.FromSeconds(10), "the batch to be counted");
        Assert.Equal(before + 1, statistics.RequestsServed);
    }
}
