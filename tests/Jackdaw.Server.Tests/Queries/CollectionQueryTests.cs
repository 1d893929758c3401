using System.Net;
using System.Text.Json;
using Jackdaw.Server.Tests.Infrastructure;

namespace Jackdaw.Server.Tests.Queries;

/// <summary>What /queries answers before indexes exist: collection queries from the document store.</summary>
public sealed class CollectionQueryTests(ServerFixture fixture) : IClassFixture<ServerFixture>
{
    private HttpClient Client => fixture.Client;

    private async Task<string> SeedAsync()
    {
        var db = await fixture.CreateDatabaseAsync();
        var commands = string.Join(",", Enumerable.Range(1, 12).Select(i =>
            "{\"Type\":\"PUT\",\"Id\":\"users/" + i + "\",\"Document\":{\"Name\":\"user " + i + "\",\"Company\":\"companies/" + (i % 3) + "\",\"@metadata\":{\"@collection\":\"Users\"}}}"));
        commands += """,{"Type":"PUT","Id":"companies/1","Document":{"Name":"Acme","@metadata":{"@collection":"Companies"}}}""";
        using var response = await Client.PostAsync($"/databases/{db}/bulk_docs", Api.Json("{\"Commands\":[" + commands + "]}"));
        Assert.Equal(HttpStatusCode.OK, response.StatusCode);
        return db;
    }

    private async Task<JsonElement> QueryAsync(string db, string query, string parameters = "{}")
    {
        using var response = await Client.PostAsync($"/databases/{db}/queries", Api.Json($"{{\"Query\":{JsonSerializer.Serialize(query)},\"QueryParameters\":{parameters}}}"));
        var body = await Api.JsonAsync(response);
        Assert.True(response.StatusCode == HttpStatusCode.OK, body.ToString());
        return body;
    }

    private static string[] Ids(JsonElement body) =>
        body.GetProperty("Results").EnumerateArray().Select(d => d.GetProperty("@metadata").GetProperty("@id").GetString()!).ToArray();

    [Fact]
    public async Task ACollectionQueryAnswersItsDocumentsInWriteOrderWithPaging()
    {
        var db = await SeedAsync();
        var all = await QueryAsync(db, "from Users");
        Assert.Equal(Enumerable.Range(1, 12).Select(i => $"users/{i}"), Ids(all));
        Assert.Equal(12, all.GetProperty("TotalResults").GetInt64());
        Assert.Equal("collection/Users", all.GetProperty("IndexName").GetString());
        Assert.False(all.GetProperty("IsStale").GetBoolean());
        Assert.Matches(@"\.\d{7}Z$", all.GetProperty("IndexTimestamp").GetString());

        var page = await QueryAsync(db, "FROM users LIMIT 3 OFFSET 4");
        Assert.Equal(["users/5", "users/6", "users/7"], Ids(page));
        Assert.Equal(12, page.GetProperty("TotalResults").GetInt64());
        var byParameters = await QueryAsync(db, "from Users limit $take offset $skip", """{"take":2,"skip":10}""");
        Assert.Equal(["users/11", "users/12"], Ids(byParameters));
        Assert.Equal(13, (await QueryAsync(db, "from @all_docs")).GetProperty("TotalResults").GetInt64());

        using var get = await Client.GetAsync($"/databases/{db}/queries?query={Uri.EscapeDataString("from Companies")}");
        Assert.Equal(["companies/1"], Ids(await Api.JsonAsync(get)));
    }

    [Fact]
    public async Task AWhereOnIdAndIncludesAreAnsweredWithoutAnIndex()
    {
        var db = await SeedAsync();
        var body = await QueryAsync(db, "from Users where id() in ('users/1', 'USERS/4', 'users/404') or startsWith(id(), 'users/1') include Company");
        Assert.Equal(["users/1", "users/4", "users/10", "users/11", "users/12"], Ids(body));
        Assert.Equal(5, body.GetProperty("TotalResults").GetInt64());
        Assert.Equal("Acme", body.GetProperty("Includes").GetProperty("companies/1").GetProperty("Name").GetString());
        var none = await QueryAsync(db, "from Users where id() = $id", """{"id":"users/99"}""");
        Assert.Empty(Ids(none));
    }

    [Fact]
    public async Task AWhereOnFieldsIsAnsweredByAnAutoIndexMadeForIt()
    {
        var db = await SeedAsync();
        using var response = await Client.PostAsync($"/databases/{db}/queries", Api.Json("{\"Query\":\"from Users where Name != 'nobody' order by Name select Name\",\"WaitForNonStaleResults\":true}"));
        Assert.Equal(HttpStatusCode.OK, response.StatusCode);
        var body = await Api.JsonAsync(response);
        Assert.StartsWith("Auto/Users/By", body.GetProperty("IndexName").GetString(), StringComparison.Ordinal);
        Assert.False(body.GetProperty("IsStale").GetBoolean());
        Assert.True(body.GetProperty("TotalResults").GetInt64() > 0);
    }

    [Fact]
    public async Task AnUnknownIndexIs404()
    {
        var db = await SeedAsync();
        using var response = await Client.PostAsync($"/databases/{db}/queries", Api.Json("{\"Query\":\"from index 'Users/ByName'\"}"));
        Assert.Contains("Users/ByName", await Api.AssertErrorAsync(response, HttpStatusCode.NotFound, "IndexDoesNotExistException"), StringComparison.Ordinal);
    }

    [Theory]
    [InlineData("{\"Query\":\"from Users where\"}", "InvalidQueryException")]
    [InlineData("{\"Query\":\"from Users limit -1\"}", "InvalidQueryException")]
    [InlineData("{\"Query\":\"from Users limit $n\"}", "InvalidQueryException")]
    [InlineData("{\"Query\":\"from Users where id() = $id\"}", "InvalidQueryException")]
    [InlineData("{\"NoQuery\":1}", "BadRequestException")]
    public async Task BadQueriesAre400(string body, string type)
    {
        var db = await SeedAsync();
        using var response = await Client.PostAsync($"/databases/{db}/queries", Api.Json(body));
        await Api.AssertErrorAsync(response, HttpStatusCode.BadRequest, type);
    }
}
