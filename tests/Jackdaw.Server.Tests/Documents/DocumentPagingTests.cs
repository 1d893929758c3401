using System.Net;
using Jackdaw.Server.Tests.Infrastructure;

namespace Jackdaw.Server.Tests.Documents;

/// <summary>Pages of documents under the default limits (QueryLimitTests has a lowered one).</summary>
public sealed class DocumentPagingTests(ServerFixture fixture) : IClassFixture<ServerFixture>
{
    private HttpClient Client => fixture.Client;

    [Fact]
    public async Task APageOfDocumentsMayHoldMoreThan1024()
    {
        // Once refused over 1,024; now held to Limits:MaxQueryLimit, as a query's limit is.
        var db = await fixture.CreateDatabaseAsync();
        var commands = string.Join(',', Enumerable.Range(0, 1500).Select(i => $"{{\"Type\":\"PUT\",\"Id\":\"items/{i}\",\"Document\":{{\"@metadata\":{{\"@collection\":\"Items\"}}}}}}"));
        using (var batch = await Client.PostAsync($"/databases/{db}/bulk_docs", Api.Json("{\"Commands\":[" + commands + "]}")))
            Assert.Equal(HttpStatusCode.OK, batch.StatusCode);
        foreach (var route in new[] { "docs?startsWith=items/&pageSize=2000", "docs?pageSize=2000", "collections/docs?name=Items&pageSize=2000" })
        {
            using var response = await Client.GetAsync($"/databases/{db}/{route}");
            Assert.Equal(1500, (await Api.JsonAsync(response)).GetProperty("Results").GetArrayLength());
        }
    }
}
