using System.Net;
using System.Text;
using System.Text.Json;
using Jackdaw.Server.Tests.Infrastructure;

namespace Jackdaw.Server.Tests.Indexing.MapReduce;

/// <summary>A map-reduce index's results written as documents (OutputReduceToCollection), with reference documents at predictable ids.</summary>
public sealed class OutputReduceToCollectionTests(ServerFixture fixture) : IClassFixture<ServerFixture>
{
    private HttpClient Client => fixture.Client;

    private const string Map = "map('Orders', o => ({ Company: o.Company, Count: 1, Total: o.Freight }))";
    private const string Reduce = "groupBy(r => r.Company).aggregate(g => ({ Company: g.key, Count: g.values.reduce((c, r) => c + r.Count, 0), Total: g.values.reduce((t, r) => t + r.Total, 0) }))";

    private async Task PutAsync(string db, string id, string json)
    {
        using var response = await Client.PutAsync($"/databases/{db}/docs?id={Uri.EscapeDataString(id)}", Api.Json(json));
        Assert.Equal(HttpStatusCode.Created, response.StatusCode);
    }

    private Task PutOrderAsync(string db, int n, string company, double freight) =>
        PutAsync(db, $"orders/{n}", $$$"""{"Company":"{{{company}}}","Freight":{{{freight}}},"@metadata":{"@collection":"Orders"}}""");

    private async Task<HttpResponseMessage> PutIndexAsync(string db, object definition) =>
        await Client.PutAsync($"/databases/{db}/admin/indexes", Api.Json(JsonSerializer.Serialize(new { Indexes = new[] { definition } })));

    private async Task<JsonElement> QueryAsync(string db, string rql)
    {
        var body = JsonSerializer.Serialize(new { Query = rql, WaitForNonStaleResults = true });
        using var response = await Client.PostAsync($"/databases/{db}/queries", new StringContent(body, Encoding.UTF8, "application/json"));
        var json = await Api.JsonAsync(response);
        Assert.True(response.StatusCode == HttpStatusCode.OK, $"{rql}: {json}");
        return json;
    }

    // The output documents follow the index's commits: polled until they match.
    private async Task<Dictionary<string, (double Count, double Total)>> OutputsAsync(string db, int expected)
    {
        Dictionary<string, (double, double)> outputs = new();
        for (var attempt = 0; attempt < 100; attempt++)
        {
            var answer = await QueryAsync(db, "from CompanyTotals");
            outputs = answer.GetProperty("Results").EnumerateArray().ToDictionary(
                r => r.GetProperty("Company").GetString()!,
                r => (r.GetProperty("Count").GetDouble(), r.GetProperty("Total").GetDouble()));
            if (outputs.Count == expected)
            {
                break;
            }
            await Task.Delay(100);
        }
        return outputs;
    }

    private async Task<JsonElement?> GetAsync(string db, string id)
    {
        using var response = await Client.GetAsync($"/databases/{db}/docs?id={Uri.EscapeDataString(id)}");
        return response.StatusCode == HttpStatusCode.NotFound ? null : (await Api.JsonAsync(response)).GetProperty("Results")[0];
    }

    [Fact]
    public async Task ResultsBecomeDocumentsAndFollowTheirGroups()
    {
        var db = await fixture.CreateDatabaseAsync();
        await PutOrderAsync(db, 1, "companies/1", 10);
        await PutOrderAsync(db, 2, "companies/1", 5);
        await PutOrderAsync(db, 3, "companies/2", 7);
        using (var put = await PutIndexAsync(db, new { Name = "Orders/ByCompany", Maps = new[] { Map }, Reduce, OutputReduceToCollection = "CompanyTotals", PatternForOutputReduceToCollectionReferences = "reports/{Company}" }))
        {
            Assert.Equal(HttpStatusCode.Created, put.StatusCode);
        }

        var outputs = await OutputsAsync(db, 2);
        Assert.Equal((2, 15), outputs["companies/1"]);
        Assert.Equal((1, 7), outputs["companies/2"]);

        // The reference document at the pattern's id lists the output under it; its metadata says it is artificial.
        var reference = await GetAsync(db, "reports/companies/1");
        Assert.NotNull(reference);
        var outputId = reference!.Value.GetProperty("ReduceOutputs")[0].GetString()!;
        Assert.StartsWith("CompanyTotals/", outputId);
        Assert.Equal("CompanyTotals/References", reference.Value.GetProperty("@metadata").GetProperty("@collection").GetString());
        var output = await GetAsync(db, outputId);
        Assert.Equal("Artificial, FromIndex", output!.Value.GetProperty("@metadata").GetProperty("@flags").GetString());
        Assert.Equal(15, output.Value.GetProperty("Total").GetDouble());

        // A change updates the same document; a group that empties loses its document and its reference.
        await PutOrderAsync(db, 2, "companies/1", 50);
        await Eventually(async () => (await GetAsync(db, outputId))?.GetProperty("Total").GetDouble() == 60);
        using (await Client.DeleteAsync($"/databases/{db}/docs?id=orders/3"))
        {
        }
        outputs = await OutputsAsync(db, 1);
        Assert.Equal(["companies/1"], outputs.Keys);
        await Eventually(async () => await GetAsync(db, "reports/companies/2") is null);
    }

    [Fact]
    public async Task ResetRewritesAndDeleteRemovesTheOutputButNotOtherDocuments()
    {
        var db = await fixture.CreateDatabaseAsync();
        await PutOrderAsync(db, 1, "companies/1", 10);
        await PutOrderAsync(db, 2, "companies/2", 7);
        await PutAsync(db, "CompanyTotals/mine", """{"Note":"written by hand","@metadata":{"@collection":"CompanyTotals"}}""");
        using (var put = await PutIndexAsync(db, new { Name = "Orders/ByCompany", Maps = new[] { Map }, Reduce, OutputReduceToCollection = "CompanyTotals", PatternForOutputReduceToCollectionReferences = "reports/{Company}" }))
        {
            Assert.Equal(HttpStatusCode.Created, put.StatusCode);
        }
        await Eventually(async () => (await QueryAsync(db, "from CompanyTotals")).GetProperty("TotalResults").GetInt64() == 3);

        using (var reset = await Client.SendAsync(new HttpRequestMessage(new HttpMethod("RESET"), $"/databases/{db}/indexes?name=Orders/ByCompany")))
        {
            Assert.True(reset.IsSuccessStatusCode);
        }
        await Eventually(async () => (await QueryAsync(db, "from CompanyTotals")).GetProperty("TotalResults").GetInt64() == 3);
        Assert.NotNull(await GetAsync(db, "reports/companies/2"));

        using (var delete = await Client.DeleteAsync($"/databases/{db}/indexes?name=Orders/ByCompany"))
        {
            Assert.True(delete.IsSuccessStatusCode);
        }
        var left = await QueryAsync(db, "from CompanyTotals");
        Assert.Equal(["CompanyTotals/mine"], left.GetProperty("Results").EnumerateArray().Select(r => r.GetProperty("@metadata").GetProperty("@id").GetString()!));
        Assert.Null(await GetAsync(db, "reports/companies/1"));
    }

    [Fact]
    public async Task AnIndexCannotOutputIntoACollectionItMaps()
    {
        var db = await fixture.CreateDatabaseAsync();
        using var put = await PutIndexAsync(db, new { Name = "Loop", Maps = new[] { Map }, Reduce, OutputReduceToCollection = "Orders" });
        Assert.Equal(HttpStatusCode.BadRequest, put.StatusCode);
        var error = await Api.JsonAsync(put);
        Assert.Contains("cannot output to a collection it reads", error.GetProperty("Message").GetString());
    }

    [Fact]
    public async Task APatternThatGivesNoValidIdMakesNoReferenceAndStopsNothing()
    {
        var db = await fixture.CreateDatabaseAsync();
        await PutOrderAsync(db, 1, "companies/1", 10);
        using (var put = await PutIndexAsync(db, new { Name = "Orders/ByCompany", Maps = new[] { Map }, Reduce, OutputReduceToCollection = "CompanyTotals", PatternForOutputReduceToCollectionReferences = "reports/{Company}" }))
        {
            Assert.Equal(HttpStatusCode.Created, put.StatusCode);
        }
        await OutputsAsync(db, 1);

        // An id longer than the database takes, and an empty value (an id the database would
        // complete as a new one on every write): no reference document, an error, and the rest goes on.
        await PutOrderAsync(db, 2, new string('x', 1100), 1);
        await PutOrderAsync(db, 3, "", 2);
        await PutOrderAsync(db, 4, "", 3);
        await PutOrderAsync(db, 5, "companies/1", 5);
        var outputs = await OutputsAsync(db, 3);
        Assert.Equal((2, 15), outputs["companies/1"]);
        Assert.Equal((2, 5), outputs[""]);
        await Eventually(async () => (await GetAsync(db, "reports/companies/1"))?.GetProperty("ReduceOutputs").GetArrayLength() == 1);
        var references = await QueryAsync(db, "from 'CompanyTotals/References'");
        Assert.Equal(1, references.GetProperty("TotalResults").GetInt64());
        using var errors = await Client.GetAsync($"/databases/{db}/indexes/errors?name=Orders/ByCompany");
        var text = await errors.Content.ReadAsStringAsync();
        Assert.Contains("no reference document", text);
    }

    [Fact]
    public async Task AnOutputCollectionThatCannotNameDocumentsIsRefused()
    {
        var db = await fixture.CreateDatabaseAsync();
        using var put = await PutIndexAsync(db, new { Name = "Bad", Maps = new[] { Map }, Reduce, OutputReduceToCollection = "Totals\u0001" });
        Assert.Equal(HttpStatusCode.BadRequest, put.StatusCode);
        Assert.Contains("cannot name documents", (await Api.JsonAsync(put)).GetProperty("Message").GetString());
    }

    private static async Task Eventually(Func<Task<bool>> condition)
    {
        for (var attempt = 0; attempt < 100; attempt++)
        {
            if (await condition())
            {
                return;
            }
            await Task.Delay(100);
        }
        Assert.Fail("The output documents did not follow the index within 10 s.");
    }
}
