using System.Net;
using System.Text.Json;
using Jackdaw.Server.Tests.Infrastructure;

namespace Jackdaw.Server.Tests.Queries;

/// <summary>The slow-query log, <c>/databases/{db}/queries/slow</c>, on a server that logs every query and keeps three.</summary>
public sealed class SlowQueryLogTests : IAsyncLifetime
{
    // A value no query text, index or log line may show: only its parameter's name is kept.
    private const string Secret = "s3cr3t-value-9f2c";

    private InProcessServer _server = null!;

    private HttpClient Client => _server.Client;

    public async Task InitializeAsync()
    {
        _server = await InProcessServer.StartAsync("--Queries:SlowQueryThresholdMs=0", "--Queries:SlowQueryLogSize=3");
        foreach (var db in new[] { "shop", "other" })
        {
            using var created = await Client.PutAsync($"/admin/databases?name={db}", null);
            Assert.Equal(HttpStatusCode.Created, created.StatusCode);
        }
        using var bulk = await Client.PostAsync("/databases/shop/bulk_docs", Api.Json(
            "{\"Commands\":[{\"Type\":\"PUT\",\"Id\":\"people/1\",\"Document\":{\"Name\":\"Ann\",\"@metadata\":{\"@collection\":\"People\"}}}," +
            "{\"Type\":\"PUT\",\"Id\":\"people/2\",\"Document\":{\"Name\":\"Bob\",\"@metadata\":{\"@collection\":\"People\"}}}]}"));
        Assert.Equal(HttpStatusCode.OK, bulk.StatusCode);
    }

    public async Task DisposeAsync() => await _server.DisposeAsync();

    private async Task<JsonElement> QueryAsync(string query, object? parameters = null)
    {
        using var response = await Client.PostAsync("/databases/shop/queries", Api.Json(JsonSerializer.Serialize(new { Query = query, QueryParameters = parameters ?? new { }, WaitForNonStaleResults = true })));
        Assert.Equal(HttpStatusCode.OK, response.StatusCode);
        return await Api.JsonAsync(response);
    }

    private async Task<(JsonElement Json, string Text)> SlowAsync(string db = "shop")
    {
        using var response = await Client.GetAsync($"/databases/{db}/queries/slow");
        Assert.Equal(HttpStatusCode.OK, response.StatusCode);
        var text = await response.Content.ReadAsStringAsync();
        return (JsonDocument.Parse(text).RootElement.Clone(), text);
    }

    [Fact]
    public async Task AtThresholdZeroEveryQueryIsLoggedWithItsIndexAndTimingsButNoParameterValue()
    {
        var answer = await QueryAsync("from People where Name = $name", new { name = Secret });
        // The answer is what it was: timings measured for the log are not sent unless asked for.
        Assert.False(answer.TryGetProperty("Timings", out _));

        var (slow, text) = await SlowAsync();
        Assert.Equal(0, slow.GetProperty("ThresholdMs").GetInt32());
        var entry = Assert.Single(slow.GetProperty("Results").EnumerateArray());
        Assert.Equal("from People where Name = $name", entry.GetProperty("Query").GetString());
        Assert.Equal("<redacted>", entry.GetProperty("QueryParameters").GetProperty("name").GetString());
        Assert.Equal(answer.GetProperty("IndexName").GetString(), entry.GetProperty("IndexName").GetString());
        Assert.StartsWith("Auto/People", entry.GetProperty("IndexName").GetString(), StringComparison.Ordinal);
        Assert.False(entry.GetProperty("IsStale").GetBoolean());
        Assert.Equal(0, entry.GetProperty("TotalResults").GetInt64());
        Assert.True(entry.GetProperty("DurationInMs").GetInt64() >= 0);
        Assert.True(DateTime.UtcNow - entry.GetProperty("At").GetDateTime().ToUniversalTime() < TimeSpan.FromMinutes(5));
        var timings = entry.GetProperty("Timings");
        Assert.True(timings.GetProperty("DurationInMs").GetInt64() >= 0);
        Assert.True(timings.GetProperty("Timings").TryGetProperty("Query", out _));
        Assert.DoesNotContain(Secret, text, StringComparison.Ordinal);

        var warnings = _server.Logs.Records.Where(r => r.Category == "Jackdaw.Queries.Slow").ToList();
        var warning = Assert.Single(warnings);
        Assert.Equal(Microsoft.Extensions.Logging.LogLevel.Warning, warning.Level);
        Assert.Contains("from People where Name = $name", warning.Message, StringComparison.Ordinal);
        Assert.DoesNotContain(Secret, warning.Message, StringComparison.Ordinal);
    }

    [Fact]
    public async Task TheLogKeepsTheNewestUpToItsSizeAndDeleteEmptiesIt()
    {
        for (var i = 1; i <= 5; i++)
        {
            var answer = await QueryAsync($"from People where Name = $n{i}", new Dictionary<string, string> { [$"n{i}"] = $"n{i}" });
            Assert.Equal(0, answer.GetProperty("TotalResults").GetInt64());
        }
        var (slow, _) = await SlowAsync();
        var queries = slow.GetProperty("Results").EnumerateArray().Select(e => e.GetProperty("Query").GetString()).ToList();
        Assert.Equal(["from People where Name = $n5", "from People where Name = $n4", "from People where Name = $n3"], queries);

        var (other, _) = await SlowAsync("other");
        Assert.Empty(other.GetProperty("Results").EnumerateArray());

        using (var delete = await Client.DeleteAsync("/databases/shop/queries/slow"))
        {
            Assert.Equal(HttpStatusCode.NoContent, delete.StatusCode);
        }
        (slow, _) = await SlowAsync();
        Assert.Empty(slow.GetProperty("Results").EnumerateArray());
    }

    [Fact]
    public async Task AQueryLongerThanEightKiBIsKeptAndLoggedCutWithANoteOfWhatWasLeftOut()
    {
        var query = "from People" + new string(' ', 20_000) + "where Name = $name";
        await QueryAsync(query, new { name = "Ann" });

        var (slow, _) = await SlowAsync();
        var kept = Assert.Single(slow.GetProperty("Results").EnumerateArray()).GetProperty("Query").GetString()!;
        var leftOut = query.Length - 8 * 1024;
        Assert.Equal(query[..(8 * 1024)] + $"... ({leftOut} more characters left out)", kept);
        var warning = Assert.Single(_server.Logs.Records, r => r.Category == "Jackdaw.Queries.Slow");
        Assert.Contains($"({leftOut} more characters left out)", warning.Message, StringComparison.Ordinal);
        Assert.True(warning.Message.Length < 9 * 1024, $"the log line is {warning.Message.Length} characters long");
    }

    [Fact]
    public async Task StringAndNumberLiteralsAreMaskedInTheAnswerAndTheLogLine()
    {
        const string query = "from People where (Name = '" + Secret + "' or Name = \"x" + Secret + "\\\"\" or Age = 987654 or Age = -4.25e3) and Name != $name";
        await QueryAsync(query, new { name = "Ann" });

        var (slow, text) = await SlowAsync();
        var entry = Assert.Single(slow.GetProperty("Results").EnumerateArray());
        Assert.Equal("from People where (Name = '?' or Name = '?' or Age = ? or Age = -?) and Name != $name", entry.GetProperty("Query").GetString());
        var warning = Assert.Single(_server.Logs.Records, r => r.Category == "Jackdaw.Queries.Slow");
        foreach (var value in new[] { Secret, "987654", "4.25e3", "25e3" })
        {
            Assert.DoesNotContain(value, text, StringComparison.Ordinal);
            Assert.DoesNotContain(value, warning.Message, StringComparison.Ordinal);
        }
        Assert.Contains("Name != $name", warning.Message, StringComparison.Ordinal);
    }

    [Fact]
    public async Task ACollectionQueryIsLoggedWithWhatAnsweredIt()
    {
        var answer = await QueryAsync("from People include timings()");
        Assert.True(answer.TryGetProperty("Timings", out _));
        var (slow, _) = await SlowAsync();
        var entry = Assert.Single(slow.GetProperty("Results").EnumerateArray());
        Assert.Equal("collection/People", entry.GetProperty("IndexName").GetString());
        Assert.Equal(2, entry.GetProperty("TotalResults").GetInt64());
        Assert.Empty(entry.GetProperty("QueryParameters").EnumerateObject());
    }

    [Fact]
    public async Task AnUnknownDatabaseIsA503AsOnEveryRoute()
    {
        using var get = await Client.GetAsync("/databases/nowhere/queries/slow");
        await Api.AssertErrorAsync(get, HttpStatusCode.ServiceUnavailable, "DatabaseDoesNotExistException");
        using var delete = await Client.DeleteAsync("/databases/nowhere/queries/slow");
        await Api.AssertErrorAsync(delete, HttpStatusCode.ServiceUnavailable, "DatabaseDoesNotExistException");
    }

    [Fact]
    public async Task AQueryUnderTheThresholdIsNotLogged()
    {
        await using var server = await InProcessServer.StartAsync("--Queries:SlowQueryThresholdMs=600000");
        using (var created = await server.Client.PutAsync("/admin/databases?name=quick", null))
        {
            Assert.Equal(HttpStatusCode.Created, created.StatusCode);
        }
        using (var query = await server.Client.PostAsync("/databases/quick/queries", Api.Json("{\"Query\":\"from People\"}")))
        {
            Assert.Equal(HttpStatusCode.OK, query.StatusCode);
        }
        using var response = await server.Client.GetAsync("/databases/quick/queries/slow");
        var slow = await Api.JsonAsync(response);
        Assert.Equal(600000, slow.GetProperty("ThresholdMs").GetInt32());
        Assert.Empty(slow.GetProperty("Results").EnumerateArray());
    }
}
