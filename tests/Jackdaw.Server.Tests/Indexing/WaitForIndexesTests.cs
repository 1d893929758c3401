using System.Diagnostics;
using System.Net;
using System.Text.Json;
using Jackdaw.Server.Tests.Infrastructure;

namespace Jackdaw.Server.Tests.Indexing;

/// <summary><c>bulk_docs?waitForIndexesTimeout=</c>: the answer of a save waits until its indexes have it, as RavenDB's waitForIndexesAfterSaveChanges asks.</summary>
public sealed class WaitForIndexesTests(ServerFixture fixture) : IClassFixture<ServerFixture>
{
    private HttpClient Client => fixture.Client;

    private static string Order(string id, string company) =>
        "{\"Type\":\"PUT\",\"Id\":\"" + id + "\",\"Document\":{\"Company\":\"" + company + "\",\"@metadata\":{\"@collection\":\"Orders\"}}}";

    private async Task<string> DatabaseWithIndexesAsync()
    {
        var db = await fixture.CreateDatabaseAsync();
        var body = JsonSerializer.Serialize(new
        {
            Indexes = new object[]
            {
                new { Name = "Orders/ByCompany", Maps = new[] { "map('Orders', o => ({ Company: o.Company }))" } },
                new { Name = "Users/ByName", Maps = new[] { "map('Users', u => ({ Name: u.Name }))" } },
            },
        });
        Assert.Equal(HttpStatusCode.Created, (await Client.PutAsync($"/databases/{db}/admin/indexes", Api.Json(body))).StatusCode);
        return db;
    }

    private async Task<HttpResponseMessage> SaveAsync(string db, string query, params string[] commands) =>
        await Client.PostAsync($"/databases/{db}/bulk_docs?{query}", Api.Json("{\"Commands\":[" + string.Join(",", commands) + "]}"));

    private async Task<JsonElement> QueryNowAsync(string db, string rql)
    {
        using var response = await Client.PostAsync($"/databases/{db}/queries", Api.Json(JsonSerializer.Serialize(new { Query = rql })));
        return await Api.JsonAsync(response);
    }

    [Fact]
    public async Task TheAnswerComesOnceTheAffectedIndexesHaveTheBatch()
    {
        var db = await DatabaseWithIndexesAsync();
        for (var round = 0; round < 20; round++)
        {
            using var saved = await SaveAsync(db, "waitForIndexesTimeout=00:00:30&waitForIndexThrow=true", Order($"orders/{round}", $"companies/{round}"));
            Assert.Equal(HttpStatusCode.OK, saved.StatusCode);
            // A query that does not wait finds what was just saved, and the index is not stale.
            var found = await QueryNowAsync(db, $"from index 'Orders/ByCompany' where Company = 'companies/{round}'");
            Assert.Equal(1, found.GetProperty("TotalResults").GetInt32());
            Assert.False(found.GetProperty("IsStale").GetBoolean());
        }
    }

    [Fact]
    public async Task ANamedIndexIsWaitedForAndAnUnknownOneIs404()
    {
        var db = await DatabaseWithIndexesAsync();
        using (var saved = await SaveAsync(db, "waitForIndexesTimeout=00:00:30&waitForSpecificIndex=Orders%2FByCompany", Order("orders/1", "companies/9")))
        {
            Assert.Equal(HttpStatusCode.OK, saved.StatusCode);
        }
        Assert.Equal(1, (await QueryNowAsync(db, "from index 'Orders/ByCompany' where Company = 'companies/9'")).GetProperty("TotalResults").GetInt32());

        using var unknown = await SaveAsync(db, "waitForIndexesTimeout=00:00:05&waitForSpecificIndex=Nope", Order("orders/2", "companies/9"));
        await Api.AssertErrorAsync(unknown, HttpStatusCode.NotFound, "IndexDoesNotExistException");
    }

    [Fact]
    public async Task StoppedIndexingDoesNotHangTheSave()
    {
        var db = await DatabaseWithIndexesAsync();
        Assert.Equal(HttpStatusCode.NoContent, (await Client.PostAsync($"/databases/{db}/admin/indexes/stop", null)).StatusCode);
        try
        {
            var clock = Stopwatch.StartNew();
            using (var thrown = await SaveAsync(db, "waitForIndexesTimeout=00:01:00&waitForIndexThrow=true", Order("orders/1", "companies/1")))
            {
                var message = await Api.AssertErrorAsync(thrown, HttpStatusCode.RequestTimeout, "TimeoutException");
                Assert.Contains("The batch was saved", message, StringComparison.Ordinal);
                Assert.Contains("'Orders/ByCompany': its indexing is stopped", message, StringComparison.Ordinal);
                Assert.DoesNotContain("Users/ByName", message, StringComparison.Ordinal);
            }
            using (var answered = await SaveAsync(db, "waitForIndexesTimeout=00:01:00&waitForIndexThrow=false", Order("orders/2", "companies/1")))
            {
                Assert.Equal(HttpStatusCode.OK, answered.StatusCode);
            }
            Assert.True(clock.Elapsed < TimeSpan.FromSeconds(30), $"The saves took {clock.Elapsed}; a stopped index is not waited for.");
            // Both were saved.
            using var loaded = await Client.GetAsync($"/databases/{db}/docs?id=orders/1&id=orders/2");
            Assert.All((await Api.JsonAsync(loaded)).GetProperty("Results").EnumerateArray(), r => Assert.Equal(JsonValueKind.Object, r.ValueKind));
        }
        finally
        {
            await Client.PostAsync($"/databases/{db}/admin/indexes/start", null);
        }
    }

    [Theory]
    [InlineData("waitForIndexesTimeout=soon", "'waitForIndexesTimeout' is 'soon'")]
    [InlineData("waitForIndexesTimeout=02:00:00", "at most 01:00:00")]
    [InlineData("waitForIndexesTimeout=00:00:05&waitForIndexThrow=maybe", "'waitForIndexThrow' is 'maybe'")]
    public async Task ABadWaitIsRefusedBeforeAnythingIsSaved(string query, string mentions)
    {
        var db = await DatabaseWithIndexesAsync();
        using var response = await SaveAsync(db, query, Order("orders/1", "companies/1"));
        Assert.Contains(mentions, await Api.AssertErrorAsync(response, HttpStatusCode.BadRequest, "BadRequestException"), StringComparison.Ordinal);
        using var loaded = await Client.GetAsync($"/databases/{db}/docs?id=orders/1");
        Assert.Equal(HttpStatusCode.NotFound, loaded.StatusCode);
    }
}
