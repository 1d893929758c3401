using System.Net;
using System.Text;
using Jackdaw.Server.Tests.Infrastructure;

namespace Jackdaw.Server.Tests.Documents;

/// <summary>Bulk insert with <c>skipOverwriteIfUnchanged=true</c>: documents equal to the stored ones are not written again.</summary>
public sealed class BulkInsertSkipTests(ServerFixture fixture) : IClassFixture<ServerFixture>
{
    private HttpClient Client => fixture.Client;

    private static string Line(int i, string name) =>
        "{\"Id\":\"items/" + i + "\",\"Document\":{\"Name\":\"" + name + "\",\"Tags\":[\"a\",{\"b\":1}],\"@metadata\":{\"@collection\":\"Items\"}}}";

    private async Task InsertAsync(string db, string query, IEnumerable<string> lines)
    {
        using var response = await Client.PostAsync($"/databases/{db}/bulk_insert{query}", new StringContent(string.Join("\n", lines) + "\n", Encoding.UTF8, "application/x-ndjson"));
        Assert.True(response.StatusCode == HttpStatusCode.OK, await response.Content.ReadAsStringAsync());
    }

    private async Task<Dictionary<string, string>> ChangeVectorsAsync(string db)
    {
        var answer = await Api.JsonAsync(await Client.GetAsync($"/databases/{db}/docs?startsWith=items/&pageSize=100"));
        return answer.GetProperty("Results").EnumerateArray().ToDictionary(
            d => d.GetProperty("@metadata").GetProperty("@id").GetString()!,
            d => d.GetProperty("@metadata").GetProperty("@change-vector").GetString()!);
    }

    private async Task<long> LastEtagAsync(string db) => (await Api.JsonAsync(await Client.GetAsync($"/databases/{db}/stats"))).GetProperty("LastDocEtag").GetInt64();

    [Fact]
    public async Task UnchangedDocumentsKeepTheirChangeVectorsAndChangedOnesAreWritten()
    {
        var db = await fixture.CreateDatabaseAsync();
        await InsertAsync(db, "", Enumerable.Range(1, 5).Select(i => Line(i, $"item {i}")));
        var before = await ChangeVectorsAsync(db);
        var etag = await LastEtagAsync(db);

        // The same five again, but items/3 changed and items/6 new; items/5 as the document itself, metadata in another order.
        var again = Enumerable.Range(1, 4).Select(i => Line(i, i == 3 ? "item three" : $"item {i}")).Concat(
        [
            "{\"Document\":{\"Name\":\"item 5\",\"Tags\":[\"a\",{\"b\":1}],\"@metadata\":{\"@collection\":\"Items\"}},\"Id\":\"items/5\"}",
            Line(6, "item 6"),
        ]);
        await InsertAsync(db, "?skipOverwriteIfUnchanged=true", again);

        var after = await ChangeVectorsAsync(db);
        foreach (var id in new[] { "items/1", "items/2", "items/4", "items/5" })
        {
            Assert.Equal(before[id], after[id]);
        }
        Assert.NotEqual(before["items/3"], after["items/3"]);
        Assert.Equal(etag + 2, await LastEtagAsync(db));

        // Without the option every document is written again.
        await InsertAsync(db, "?skipOverwriteIfUnchanged=false", Enumerable.Range(1, 2).Select(i => Line(i, $"item {i}")));
        Assert.Equal(etag + 4, await LastEtagAsync(db));
    }

    [Fact]
    public async Task ABadValueIsA400()
    {
        var db = await fixture.CreateDatabaseAsync();
        using var response = await Client.PostAsync($"/databases/{db}/bulk_insert?skipOverwriteIfUnchanged=sometimes", new StringContent(Line(1, "x") + "\n"));
        Assert.Contains("'skipOverwriteIfUnchanged' is 'sometimes'", await Api.AssertErrorAsync(response, HttpStatusCode.BadRequest, "BadRequestException"), StringComparison.Ordinal);
    }
}
