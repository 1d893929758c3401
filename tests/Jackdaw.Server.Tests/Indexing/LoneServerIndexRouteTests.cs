using System.Net;
using System.Text.Json;
using Jackdaw.Server.Tests.Infrastructure;

namespace Jackdaw.Server.Tests.Indexing;

/// <summary>The index routes a cluster adds, on a lone server: its indexes stay local, as before clusters.</summary>
public sealed class LoneServerIndexRouteTests(ServerFixture fixture) : IClassFixture<ServerFixture>
{
    private HttpClient Client => fixture.Client;

    [Fact]
    public async Task ALoneServerRefusesAnAutoIndexDefinitionAndAnswersAPutWithoutTheCluster()
    {
        var db = await fixture.CreateDatabaseAsync();
        using (var auto = await Client.PutAsync($"/databases/{db}/admin/indexes/auto",
            Api.Json("""{"Name":"Auto/Orders/ByCompany","Type":"AutoMap","Collection":"Orders","AutoFields":[{"Path":"Company","Indexing":"Default"}]}""")))
        {
            Assert.Equal(HttpStatusCode.BadRequest, auto.StatusCode);
            Assert.Contains("is not in a cluster", (await Api.JsonAsync(auto)).GetProperty("Message").GetString(), StringComparison.Ordinal);
        }

        using (var put = await Client.PutAsync($"/databases/{db}/admin/indexes", Api.Json("""{"Indexes":[{"Name":"Orders/ByCompany","Maps":["map('Orders', o => ({ Company: o.Company }))"],"LockMode":"LockedIgnore"}]}""")))
        {
            Assert.Equal(HttpStatusCode.Created, put.StatusCode);
            Assert.False(put.Headers.Contains("Jackdaw-Cluster-Etag"));
        }
        using (var get = await Client.GetAsync($"/databases/{db}/indexes?name=Orders/ByCompany"))
        {
            Assert.Equal("LockedIgnore", (await Api.JsonAsync(get)).GetProperty("Results")[0].GetProperty("LockMode").GetString());
        }

        // Bad bodies are still 400s, with the lone server's messages.
        using (var bad = await Client.PutAsync($"/databases/{db}/admin/indexes", Api.Json("""{"Indexes":[]}""")))
        {
            Assert.Equal(HttpStatusCode.BadRequest, bad.StatusCode);
        }
        using (var broken = await Client.PutAsync($"/databases/{db}/admin/indexes", Api.Json("""{"Indexes":[""")))
        {
            Assert.Equal(HttpStatusCode.BadRequest, broken.StatusCode);
        }
        using (var missing = await Client.PutAsync("/databases/NoSuchDatabase/admin/indexes", Api.Json("""{"Indexes":[]}""")))
        {
            Assert.Equal(HttpStatusCode.ServiceUnavailable, missing.StatusCode);
        }
    }
}
