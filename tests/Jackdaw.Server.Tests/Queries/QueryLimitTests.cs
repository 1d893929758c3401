using System.Net;
using System.Text.Json;
using Jackdaw.Server.Tests.Infrastructure;

namespace Jackdaw.Server.Tests.Queries;

/// <summary>
/// <c>Limits:MaxQueryLimit</c> (50 here): the most results a query answers, whatever <c>limit</c>
/// it asks, and the largest <c>pageSize</c> of a page of documents (a larger one is a 400); the
/// streams, which are how large results are read, are not held to it.
/// </summary>
public sealed class QueryLimitTests(LimitsFixture fixture) : IClassFixture<LimitsFixture>
{
    private const int Max = LimitsFixture.MaxQueryLimit;
    private const int Stored = Max + 10;

    private HttpClient Client => fixture.Client;

    private async Task<string> SeedAsync()
    {
        var db = await fixture.CreateDatabaseAsync();
        var commands = string.Join(',', Enumerable.Range(1, Stored).Select(i => $"{{\"Type\":\"PUT\",\"Id\":\"orders/{i:D3}\",\"Document\":{{\"N\":{i},\"@metadata\":{{\"@collection\":\"Orders\"}}}}}}"));
        using var response = await Client.PostAsync($"/databases/{db}/bulk_docs", Api.Json("{\"Commands\":[" + commands + "]}"));
        Assert.Equal(HttpStatusCode.OK, response.StatusCode);
        return db;
    }

    private Task<HttpResponseMessage> QueryAsync(string db, string query, object? parameters = null) =>
        Client.PostAsync($"/databases/{db}/queries", Api.Json(JsonSerializer.Serialize(new { Query = query, QueryParameters = parameters ?? new { } })));

    [Theory]
    [InlineData("from Orders", null)]
    [InlineData("from Orders where N > 0", null)]
    [InlineData("from Orders limit 51", null)]
    [InlineData("from Orders where N > 0 limit $take", 1000)]
    // RavenDB's clients' "no limit" (Jackdaw's sends it for a Skip without a Take).
    [InlineData("from Orders limit $take offset 5", int.MaxValue)]
    public async Task AQueryAnswersAtMostTheLimitWhateverItAsksAndCountsTheRest(string query, int? take)
    {
        var db = await SeedAsync();
        using var response = await QueryAsync(db, query, take is null ? null : new { take });
        var body = await Api.JsonAsync(response);
        Assert.True(response.StatusCode == HttpStatusCode.OK, body.ToString());
        Assert.Equal(Max, body.GetProperty("Results").GetArrayLength());
        Assert.Equal(Stored, body.GetProperty("TotalResults").GetInt32());
    }

    [Fact]
    public async Task ALimitUnderTheMostIsAnsweredAsAsked()
    {
        var db = await SeedAsync();
        using var response = await QueryAsync(db, $"from Orders limit {Max - 1}");
        Assert.Equal(Max - 1, (await Api.JsonAsync(response)).GetProperty("Results").GetArrayLength());
    }

    [Fact]
    public async Task StreamsAreNotHeldToTheLimit()
    {
        var db = await SeedAsync();
        using (var response = await Client.PostAsync($"/databases/{db}/streams/queries", Api.Json("{\"Query\":\"from Orders limit 1000\"}")))
        {
            Assert.Equal(Stored, (await Api.JsonAsync(response)).GetProperty("Results").GetArrayLength());
        }
        using (var response = await Client.GetAsync($"/databases/{db}/streams/docs?startsWith=orders/&pageSize=1000"))
        {
            Assert.Equal(Stored, (await Api.JsonAsync(response)).GetProperty("Results").GetArrayLength());
        }
    }

    [Theory]
    [InlineData("docs?startsWith=orders/&pageSize={0}")]
    [InlineData("docs?pageSize={0}")]
    [InlineData("collections/docs?name=Orders&pageSize={0}")]
    public async Task APageOfDocumentsIsHeldToTheSameLimitAndALargerPageSizeIsA400NamingIt(string route)
    {
        var db = await SeedAsync();
        using (var page = await Client.GetAsync($"/databases/{db}/" + string.Format(System.Globalization.CultureInfo.InvariantCulture, route, Max)))
        {
            Assert.Equal(Max, (await Api.JsonAsync(page)).GetProperty("Results").GetArrayLength());
        }

        using var response = await Client.GetAsync($"/databases/{db}/" + string.Format(System.Globalization.CultureInfo.InvariantCulture, route, Max + 1));
        var message = await Api.AssertErrorAsync(response, HttpStatusCode.BadRequest, "BadRequestException");
        Assert.Equal($"pageSize {Max + 1} is over {Max}, the most documents one page holds (Limits:MaxQueryLimit). Page on with start, or read them all with /streams/docs, which has no such limit.", message);
    }
}
