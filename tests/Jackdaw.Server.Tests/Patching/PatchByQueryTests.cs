using System.Net;
using System.Text.Json;
using Jackdaw.Server.Tests.Infrastructure;

namespace Jackdaw.Server.Tests.Patching;

/// <summary><c>PATCH</c> and <c>DELETE /queries</c>: patch and delete by query as operations.</summary>
public sealed class PatchByQueryTests(ServerFixture fixture) : IClassFixture<ServerFixture>
{
    private HttpClient Client => fixture.Client;

    internal static async Task PutOrdersAsync(HttpClient client, string db, int count, Func<int, string>? company = null)
    {
        for (var start = 0; start < count; start += 1000)
        {
            var commands = string.Join(',', Enumerable.Range(start, Math.Min(1000, count - start)).Select(i =>
                $"{{\"Type\":\"PUT\",\"Id\":\"orders/{i}\",\"Document\":{{\"Company\":\"{company?.Invoke(i) ?? "companies/" + (i % 3)}\",\"Freight\":{i},\"@metadata\":{{\"@collection\":\"Orders\"}}}}}}"));
            using var response = await client.PostAsync($"/databases/{db}/bulk_docs", Api.Json("{\"Commands\":[" + commands + "]}"));
            Assert.Equal(HttpStatusCode.OK, response.StatusCode);
        }
    }

    /// <summary>Sends the request and answers the operation id.</summary>
    internal static async Task<long> StartAsync(HttpClient client, HttpMethod method, string uri, string body)
    {
        using var request = new HttpRequestMessage(method, uri) { Content = Api.Json(body) };
        using var response = await client.SendAsync(request);
        var json = await Api.JsonAsync(response);
        Assert.True(response.StatusCode == HttpStatusCode.OK, json.ToString());
        Assert.Equal("A", json.GetProperty("OperationNodeTag").GetString());
        return json.GetProperty("OperationId").GetInt64();
    }

    internal static async Task<JsonElement> StateAsync(HttpClient client, string db, long id)
    {
        using var response = await client.GetAsync($"/databases/{db}/operations/state?id={id}");
        return await Api.JsonAsync(response);
    }

    /// <summary>Waits until the operation ended and answers its final state.</summary>
    internal static async Task<JsonElement> WaitAsync(HttpClient client, string db, long id, TimeSpan? timeout = null)
    {
        JsonElement state = default;
        await Poll.UntilAsync(async () =>
        {
            state = await StateAsync(client, db, id);
            return state.GetProperty("Status").GetString() != "InProgress";
        }, timeout ?? TimeSpan.FromSeconds(60), $"operation {id}");
        return state;
    }

    private async Task<JsonElement?> GetAsync(string db, string id)
    {
        using var response = await Client.GetAsync($"/databases/{db}/docs?id={Uri.EscapeDataString(id)}");
        return response.StatusCode == HttpStatusCode.NotFound ? null : (await Api.JsonAsync(response)).GetProperty("Results")[0];
    }

    [Fact]
    public async Task AnUpdateClauseSentAsAQueryIsRefusedNotIgnored()
    {
        var db = await fixture.CreateDatabaseAsync();
        await PutOrdersAsync(Client, db, 3);
        const string rql = "from Orders update { this.Freight = 0; }";
        using var query = await Client.PostAsync($"/databases/{db}/queries", Api.Json(JsonSerializer.Serialize(new { Query = rql })));
        Assert.Equal(HttpStatusCode.BadRequest, query.StatusCode);
        var error = await Api.JsonAsync(query);
        Assert.Equal("InvalidQueryException", error.GetProperty("Type").GetString());
        Assert.Contains("PATCH /databases/{db}/queries", error.GetProperty("Message").GetString());
        using var stream = await Client.GetAsync($"/databases/{db}/streams/queries?query={Uri.EscapeDataString(rql)}");
        Assert.Equal(HttpStatusCode.BadRequest, stream.StatusCode);
        Assert.Equal(1, (await GetAsync(db, "orders/1"))!.Value.GetProperty("Freight").GetInt32());
    }

    private static string Query(string query, string parameters = "{}") =>
        "{\"Query\":{\"Query\":" + JsonSerializer.Serialize(query) + ",\"QueryParameters\":" + parameters + "}}";

    [Fact]
    public async Task PatchByQueryPatchesEveryMatchingDocumentAndReportsAResult()
    {
        var db = await fixture.CreateDatabaseAsync();
        await PutOrdersAsync(Client, db, 2500);
        var id = await StartAsync(Client, HttpMethod.Patch, $"/databases/{db}/queries?allowStale=false&staleTimeout=00:00:30&details=true",
            Query("from Orders where Company = $c update { this.Freight += args.inc; this.Flag = $flag; }", """{"c":"companies/1","inc":1000,"flag":"x"}"""));
        var state = await WaitAsync(Client, db, id);
        Assert.Equal("Completed", state.GetProperty("Status").GetString());
        var result = state.GetProperty("Result");
        Assert.Equal(833, result.GetProperty("Total").GetInt64());
        Assert.Equal(833, result.GetProperty("Details").GetArrayLength());
        Assert.Equal("Patched", result.GetProperty("Details")[0].GetProperty("Status").GetString());
        Assert.Contains("BulkOperationResult", result.GetProperty("$type").GetString(), StringComparison.Ordinal);

        Assert.Equal(1001, (await GetAsync(db, "orders/1"))!.Value.GetProperty("Freight").GetInt32());
        Assert.Equal("x", (await GetAsync(db, "orders/1"))!.Value.GetProperty("Flag").GetString());
        Assert.Equal(2, (await GetAsync(db, "orders/2"))!.Value.GetProperty("Freight").GetInt32());
    }

    [Fact]
    public async Task ACollectionQueryWithAnAliasPatchesWithoutAnIndex()
    {
        var db = await fixture.CreateDatabaseAsync();
        await PutOrdersAsync(Client, db, 30);
        var id = await StartAsync(Client, HttpMethod.Patch, $"/databases/{db}/queries?allowStale=false", Query("from Orders as o update { o.Freight = o.Freight * 2; put('copies/' + id(o), { Of: id(o) }); }"));
        var state = await WaitAsync(Client, db, id);
        Assert.Equal("Completed", state.GetProperty("Status").GetString());
        Assert.Equal(30, state.GetProperty("Result").GetProperty("Total").GetInt64());
        Assert.Equal(0, state.GetProperty("Result").GetProperty("Details").GetArrayLength());
        Assert.Equal(58, (await GetAsync(db, "orders/29"))!.Value.GetProperty("Freight").GetInt32());
        Assert.Equal("orders/29", (await GetAsync(db, "copies/orders/29"))!.Value.GetProperty("Of").GetString());
    }

    [Fact]
    public async Task DeleteByQueryTakesTheNodeClientsUnwrappedBodyAndEmptyOptions()
    {
        var db = await fixture.CreateDatabaseAsync();
        await PutOrdersAsync(Client, db, 300);
        var id = await StartAsync(Client, HttpMethod.Delete, $"/databases/{db}/queries?allowStale=&details=",
            """{"Query":"from Orders where Company = $c","QueryParameters":{"c":"companies/2"}}""");
        var state = await WaitAsync(Client, db, id);
        Assert.Equal("Completed", state.GetProperty("Status").GetString());
        Assert.Equal(100, state.GetProperty("Result").GetProperty("Total").GetInt64());
        Assert.Null(await GetAsync(db, "orders/2"));
        Assert.NotNull(await GetAsync(db, "orders/1"));
    }

    [Fact]
    public async Task AScriptThatFailsFaultsTheOperationAndKeepsTheBatchesBefore()
    {
        var db = await fixture.CreateDatabaseAsync();
        await PutOrdersAsync(Client, db, 3000);
        // Documents are patched in etag order; orders/2500 is in the third batch of 1,024.
        var id = await StartAsync(Client, HttpMethod.Patch, $"/databases/{db}/queries",
            Query("from Orders update { if (id(this) === 'orders/2500') throw new Error('bad order'); this.Done = true; }"));
        var state = await WaitAsync(Client, db, id);
        Assert.Equal("Faulted", state.GetProperty("Status").GetString());
        var result = state.GetProperty("Result");
        Assert.Equal("JavaScriptException", result.GetProperty("Type").GetString());
        Assert.Contains("bad order", result.GetProperty("Message").GetString(), StringComparison.Ordinal);
        Assert.Equal(2048, result.GetProperty("Total").GetInt64());
        Assert.True((await GetAsync(db, "orders/2047"))!.Value.GetProperty("Done").GetBoolean());
        Assert.False((await GetAsync(db, "orders/2048"))!.Value.TryGetProperty("Done", out _));
        Assert.False((await GetAsync(db, "orders/2499"))!.Value.TryGetProperty("Done", out _));
    }

    [Theory]
    [InlineData("PATCH", """{"Query":{"Query":"from Orders"}}""", "InvalidQueryException", "update")]
    [InlineData("PATCH", """{"Query":{"Query":"from Orders update { this.X = ; }"}}""", "JavaScriptException", "line 1")]
    [InlineData("DELETE", """{"Query":"from Orders update { this.X = 1; }"}""", "InvalidQueryException", "update")]
    [InlineData("PATCH", """{"Query":{"Query":"from Orders where update { this.X = 1 }"}}""", "InvalidQueryException", "")]
    public async Task ABadQueryOrScriptIsRefusedBeforeAnOperationStarts(string method, string body, string type, string mentions)
    {
        var db = await fixture.CreateDatabaseAsync();
        using var request = new HttpRequestMessage(new HttpMethod(method), $"/databases/{db}/queries") { Content = Api.Json(body) };
        using var response = await Client.SendAsync(request);
        var message = await Api.AssertErrorAsync(response, HttpStatusCode.BadRequest, type);
        Assert.Contains(mentions, message, StringComparison.Ordinal);
    }

    [Fact]
    public async Task MaxOpsPerSecondSlowsTheOperationAndKillCancelsIt()
    {
        var db = await fixture.CreateDatabaseAsync();
        await PutOrdersAsync(Client, db, 1000);
        var id = await StartAsync(Client, HttpMethod.Patch, $"/databases/{db}/queries?maxOpsPerSec=100", Query("from Orders update { this.Slow = true; }"));
        await Poll.UntilAsync(async () => (await StateAsync(Client, db, id)).GetProperty("Progress") is { ValueKind: JsonValueKind.Object } p && p.GetProperty("Processed").GetInt64() >= 10, TimeSpan.FromSeconds(20), "the first batches");
        using (var kill = await Client.PostAsync($"/databases/{db}/operations/kill?id={id}", null))
        {
            Assert.Equal(HttpStatusCode.NoContent, kill.StatusCode);
        }
        var state = await WaitAsync(Client, db, id);
        Assert.Equal("Canceled", state.GetProperty("Status").GetString());
        var done = state.GetProperty("Result").GetProperty("Total").GetInt64();
        Assert.InRange(done, 10, 990);
        Assert.Equal(0, done % 10);
        Assert.Contains("killed", state.GetProperty("Result").GetProperty("Message").GetString(), StringComparison.Ordinal);
    }
}
