using Jackdaw.Server.Tests.Infrastructure;

namespace Jackdaw.Server.Tests.Indexing;

/// <summary>An index whose writes stopped is merged down to one segment, at most once a minute.</summary>
public sealed class IdleMergeTests(ServerFixture fixture) : IClassFixture<ServerFixture>
{
    private HttpClient Client => fixture.Client;

    [Fact]
    public async Task AnIdleIndexIsMergedToOneSegmentAndNotAgainWithinTheSpacing()
    {
        var db = await fixture.CreateDatabaseAsync();
        // Each write is made searchable (a query waits for it) before the next: one segment each.
        await PutAndQueryAsync(db, "orders/1");
        await PutAndQueryAsync(db, "orders/2");

        await WaitForSegmentsAsync(db, 1, "the two segments merged once the writes stopped");

        await PutAndQueryAsync(db, "orders/3");
        await Task.Delay(Jackdaw.Server.Indexing.Index.IdleCommitDelay * 4);
        Assert.Equal(2, await SegmentsAsync(db));
    }

    private async Task PutAndQueryAsync(string db, string id)
    {
        using (var put = await Client.PutAsync($"/databases/{db}/docs?id={id}", Api.Json("""{"Company":"companies/1","@metadata":{"@collection":"Orders"}}""")))
        {
            Assert.Equal(System.Net.HttpStatusCode.Created, put.StatusCode);
        }

        using var query = await Client.GetAsync($"/databases/{db}/queries?query={Uri.EscapeDataString("from Orders where Company = 'companies/1'")}&waitForNonStaleResults=true");
        var answer = await Api.JsonAsync(query);
        Assert.Contains(answer.GetProperty("Results").EnumerateArray(), r => r.GetProperty("@metadata").GetProperty("@id").GetString() == id);
    }

    private async Task<int> SegmentsAsync(string db)
    {
        using var stats = await Client.GetAsync($"/databases/{db}/indexes/stats");
        var results = (await Api.JsonAsync(stats)).GetProperty("Results");
        return results.EnumerateArray().Single(r => r.GetProperty("Name").GetString() == "Auto/Orders/ByCompany").GetProperty("SegmentsCount").GetInt32();
    }

    private async Task WaitForSegmentsAsync(string db, int segments, string what)
    {
        var deadline = DateTime.UtcNow + TimeSpan.FromSeconds(20);
        int seen;
        while ((seen = await SegmentsAsync(db)) != segments)
        {
            Assert.True(DateTime.UtcNow < deadline, $"Timed out waiting for {what}: {seen} segments");
            await Task.Delay(50);
        }
    }
}
