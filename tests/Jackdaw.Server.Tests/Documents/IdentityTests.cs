using System.Net;
using System.Text.Json;
using Jackdaw.Server.Tests.Infrastructure;

namespace Jackdaw.Server.Tests.Documents;

/// <summary>Identities (ids ending in <c>|</c>) and their routes, as RavenDB's clients use them.</summary>
public sealed class IdentityTests(ServerFixture fixture) : IClassFixture<ServerFixture>
{
    private HttpClient Client => fixture.Client;

    private async Task<JsonElement> PostAsync(string path, HttpStatusCode status = HttpStatusCode.OK)
    {
        using var response = await Client.PostAsync(path, null);
        var body = await Api.JsonAsync(response);
        Assert.True(status == response.StatusCode, $"{path}: {(int)response.StatusCode} {body}");
        return body;
    }

    private async Task<List<string>> StoreAsync(string db, params string[] ids)
    {
        var commands = string.Join(",", ids.Select(id => "{\"Type\":\"PUT\",\"Id\":\"" + id + "\",\"Document\":{\"@metadata\":{\"@collection\":\"Users\"}}}"));
        using var response = await Client.PostAsync($"/databases/{db}/bulk_docs", Api.Json($$"""{"Commands":[{{commands}}]}"""));
        var body = await Api.JsonAsync(response);
        Assert.True(response.StatusCode == HttpStatusCode.Created || response.StatusCode == HttpStatusCode.OK, body.ToString());
        return body.GetProperty("Results").EnumerateArray().Select(r => r.GetProperty("@id").GetString()!).ToList();
    }

    private async Task<Dictionary<string, long>> IdentitiesAsync(string db, string query = "")
    {
        using var response = await Client.GetAsync($"/databases/{db}/debug/identities{query}");
        Assert.Equal(HttpStatusCode.OK, response.StatusCode);
        return (await Api.JsonAsync(response)).EnumerateObject().ToDictionary(p => p.Name, p => p.Value.GetInt64());
    }

    [Fact]
    public async Task NextAndSeedMoveTheCounterThatPutsOfPipeIdsTake()
    {
        var db = await fixture.CreateDatabaseAsync();
        Assert.Equal(["users/1", "users/2"], await StoreAsync(db, "users|", "users|"));

        Assert.Equal(3, (await PostAsync($"/databases/{db}/identity/next?name=users")).GetProperty("NewIdentityValue").GetInt64());
        // The identity is case-insensitive; the id keeps the casing it was written with.
        Assert.Equal(["USERS/4"], await StoreAsync(db, "USERS|"));

        Assert.Equal(1990, (await PostAsync($"/databases/{db}/identity/seed?name=users&value=1990")).GetProperty("NewSeedValue").GetInt64());
        Assert.Equal(["users/1991"], await StoreAsync(db, "users|"));
        // A lower seed leaves the counter where it is and says so.
        Assert.Equal(1991, (await PostAsync($"/databases/{db}/identity/seed?name=users&value=1975")).GetProperty("NewSeedValue").GetInt64());
        // The name may carry the '|' RavenDB's identity keys end in.
        Assert.Equal(1992, (await PostAsync($"/databases/{db}/identity/next?name=users|")).GetProperty("NewIdentityValue").GetInt64());

        Assert.Equal(["invoices/1"], await StoreAsync(db, "invoices|"));
        Assert.Equal(new Dictionary<string, long> { ["invoices|"] = 1, ["users|"] = 1992 }, await IdentitiesAsync(db));
        Assert.Equal(new Dictionary<string, long> { ["users|"] = 1992 }, await IdentitiesAsync(db, "?start=1&pageSize=5"));

        // Forced, a seed goes down too.
        Assert.Equal(0, (await PostAsync($"/databases/{db}/identity/seed?name=users&value=0&force=true")).GetProperty("NewSeedValue").GetInt64());
        Assert.Equal(0, (await IdentitiesAsync(db))["users|"]);
    }

    [Theory]
    [InlineData("identity/next", "'name' is required")]
    [InlineData("identity/next?name=", "'name' is required")]
    [InlineData("identity/seed?name=users", "'value' is required")]
    [InlineData("identity/seed?name=users&value=lots", "value")]
    [InlineData("identity/seed?name=users&value=5&force=maybe", "'force' is 'maybe'")]
    public async Task BadIdentityRequestsAre400(string path, string mentions)
    {
        var db = await fixture.CreateDatabaseAsync();
        using var response = await Client.PostAsync($"/databases/{db}/{path}", null);
        Assert.Contains(mentions, await Api.AssertErrorAsync(response, HttpStatusCode.BadRequest, "BadRequestException"), StringComparison.Ordinal);
    }

    [Fact]
    public async Task IdentitiesSurviveKillNineAndStayMonotonic()
    {
        using var data = new TempFolder();
        long last = 0;
        for (var round = 0; round < 2; round++)
        {
            using var server = ServerProcess.Start($"--urls http://127.0.0.1:0 --data-dir \"{data.Path}\"");
            using var client = new HttpClient { BaseAddress = await server.WaitForAddressAsync(TimeSpan.FromSeconds(60)) };
            if (round == 0)
            {
                Assert.Equal(HttpStatusCode.Created, (await client.PutAsync("/admin/databases?name=Ids", null)).StatusCode);
            }
            for (var i = 0; i < 20; i++)
            {
                using var response = await client.PostAsync("/databases/Ids/identity/next?name=orders", null);
                var value = (await Api.JsonAsync(response)).GetProperty("NewIdentityValue").GetInt64();
                Assert.Equal(last + 1, value);
                last = value;
            }
            server.KillHard();
        }
        Assert.Equal(40, last);
    }
}
