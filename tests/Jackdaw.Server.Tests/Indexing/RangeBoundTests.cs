using System.Net;
using System.Text.Json;
using Jackdaw.Server.Tests.Infrastructure;

namespace Jackdaw.Server.Tests.Indexing;

/// <summary>Bounds an index's Lucene query gives a comparison, answered as the evaluator answers them.</summary>
public sealed class RangeBoundTests(ServerFixture fixture) : IClassFixture<ServerFixture>
{
    // things/i holds F = Values[i]; answers name the documents by the value they hold.
    private static readonly string[] Values = ["-0.0", "0", "1", "-1", "null", "true", "false", "\"0\""];

    private HttpClient Client => fixture.Client;

    private async Task<string> SeedAsync()
    {
        var db = await fixture.CreateDatabaseAsync();
        var commands = string.Join(',', Values.Select((v, i) => "{\"Type\":\"PUT\",\"Id\":\"things/" + i + "\",\"Document\":{\"F\":" + v + ",\"@metadata\":{\"@collection\":\"Things\"}}}"));
        using var response = await Client.PostAsync($"/databases/{db}/bulk_docs", Api.Json("{\"Commands\":[" + commands + "]}"));
        Assert.Equal(HttpStatusCode.OK, response.StatusCode);
        return db;
    }

    /// <summary>The ids (as the values they hold) found with an index and without one (filter).</summary>
    private async Task<(string Indexed, string Scanned)> AskAsync(string db, string where)
    {
        async Task<string> Ids(string rql, bool wait)
        {
            var body = JsonSerializer.Serialize(new { Query = rql, WaitForNonStaleResults = wait });
            using var response = await Client.PostAsync($"/databases/{db}/queries", Api.Json(body));
            var json = await Api.JsonAsync(response);
            Assert.True(response.StatusCode == HttpStatusCode.OK, json.ToString());
            return string.Join(" ", json.GetProperty("Results").EnumerateArray()
                .Select(r => int.Parse(r.GetProperty("@metadata").GetProperty("@id").GetString()!["things/".Length..], System.Globalization.CultureInfo.InvariantCulture))
                .Order().Select(i => Values[i]));
        }
        return (await Ids($"from Things where {where}", wait: true), await Ids($"from Things filter {where}", wait: false));
    }

    [Theory]
    [InlineData("F = 0", "-0.0 0")]
    [InlineData("F = -0", "-0.0 0")]
    [InlineData("F < 0", "-1")]
    [InlineData("F <= 0", "-0.0 0 -1")]
    [InlineData("F > -0", "1")]
    [InlineData("F >= 0", "-0.0 0 1")]
    [InlineData("F between -0 and 0", "-0.0 0")]
    [InlineData("F != 0", "1 -1 null true false \"0\"")]
    public async Task ABoundAtZeroTakesInBothZeros(string where, string expected)
    {
        var db = await SeedAsync();
        var (indexed, scanned) = await AskAsync(db, where);
        Assert.Equal(expected, scanned);
        Assert.Equal(expected, indexed);
    }

    [Theory]
    [InlineData("F >= null", "null")]
    [InlineData("F <= null", "null")]
    [InlineData("F > null", "")]
    [InlineData("F between null and null", "null")]
    [InlineData("F between null and 1", "")]
    [InlineData("F between true and false", "")]
    [InlineData("F between true and true", "true")]
    [InlineData("F <= true", "true")]
    [InlineData("F < true", "")]
    public async Task NullAndBooleansHaveNoOrderButInclusiveBoundsMatchTheirValue(string where, string expected)
    {
        var db = await SeedAsync();
        var (indexed, scanned) = await AskAsync(db, where);
        Assert.Equal(expected, scanned);
        Assert.Equal(expected, indexed);
    }
}
