using System.Net;
using System.Text.Json;
using Jackdaw.Server.Tests.Infrastructure;

namespace Jackdaw.Server.Tests.Indexing;

/// <summary>
/// Auto-indexes over many long fields have names longer than a storage key (1,024 bytes): their
/// records are keyed by a cut name and a hash of the whole (JsonRecords.Key). They once gave a 500.
/// </summary>
public sealed class LongIndexNameTests(ServerFixture fixture) : IClassFixture<ServerFixture>
{
    private HttpClient Client => fixture.Client;

    private static string Fields(string separator, Func<int, string> field) =>
        string.Join(separator, Enumerable.Range(0, 30).Select(field));

    [Fact]
    public async Task AutoIndexesWhoseNamesPassAKeyAreMadeQueriedAndDeleted()
    {
        var db = await fixture.CreateDatabaseAsync();
        using (var put = await Client.PutAsync($"/databases/{db}/docs?id=orders/1", Api.Json("""{"Field0_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx":1,"@metadata":{"@collection":"Orders"}}""")))
        {
            Assert.Equal(HttpStatusCode.Created, put.StatusCode);
        }
        var where = "from Orders where " + Fields(" and ", i => $"Field{i}_{new string('x', 40)} = 1");
        var groupBy = "from Orders group by " + Fields(", ", i => $"Field{i}_{new string('x', 40)}") + " select count()";
        var names = new List<string>();
        foreach (var rql in new[] { where, groupBy })
        {
            using var response = await Client.PostAsync($"/databases/{db}/queries", Api.Json(JsonSerializer.Serialize(new { Query = rql, WaitForNonStaleResults = true })));
            var json = await Api.JsonAsync(response);
            Assert.True(response.StatusCode == HttpStatusCode.OK, json.ToString());
            var name = json.GetProperty("IndexName").GetString()!;
            Assert.True(System.Text.Encoding.UTF8.GetByteCount(name) > 1024, name);
            names.Add(name);
        }
        Assert.Equal(1, (await QueryTotalAsync(db, groupBy)));
        foreach (var name in names)
        {
            using var delete = await Client.DeleteAsync($"/databases/{db}/indexes?name={Uri.EscapeDataString(name)}");
            Assert.True(delete.IsSuccessStatusCode, await delete.Content.ReadAsStringAsync());
        }
        using var stats = await Client.GetAsync($"/databases/{db}/indexes/stats");
        Assert.Empty((await Api.JsonAsync(stats)).GetProperty("Results").EnumerateArray());
    }

    private async Task<long> QueryTotalAsync(string db, string rql)
    {
        using var response = await Client.PostAsync($"/databases/{db}/queries", Api.Json(JsonSerializer.Serialize(new { Query = rql, WaitForNonStaleResults = true })));
        return (await Api.JsonAsync(response)).GetProperty("TotalResults").GetInt64();
    }
}
