using System.Net;
using System.Text.Json;
using Jackdaw.Server.Tests.Infrastructure;

namespace Jackdaw.Server.Tests.Compat;

/// <summary>Answer shapes RavenDB's clients rely on: metadata-only loads, holes in id lists, index names, statistics.</summary>
public sealed class RavenShapesTests(ServerFixture fixture) : IClassFixture<ServerFixture>
{
    private HttpClient Client => fixture.Client;

    private async Task<string> DatabaseWithUsersAsync()
    {
        var db = await fixture.CreateDatabaseAsync();
        foreach (var (id, name) in new[] { ("users/1", "Ada"), ("users/2", "Grace") })
        {
            Assert.Equal(HttpStatusCode.Created, (await Client.PutAsync($"/databases/{db}/docs?id={id}", Api.Json("{\"Name\":\"" + name + "\",\"@metadata\":{\"@collection\":\"Users\"}}"))).StatusCode);
        }
        return db;
    }

    [Fact]
    public async Task MetadataOnlyAnswersTheMetadataAloneByIdByListAndByPage()
    {
        var db = await DatabaseWithUsersAsync();
        foreach (var path in new[] { "docs?id=users/1&metadataOnly=true", "docs?id=users/1&id=users/404&metadataOnly=true", "docs?startsWith=users/&pageSize=1&metadataOnly=true" })
        {
            var first = (await Api.JsonAsync(await Client.GetAsync($"/databases/{db}/{path}"))).GetProperty("Results")[0];
            Assert.Equal(["@metadata"], first.EnumerateObject().Select(p => p.Name));
            Assert.Equal("users/1", first.GetProperty("@metadata").GetProperty("@id").GetString());
        }
        using var posted = await Client.PostAsync($"/databases/{db}/docs?metadataOnly=true", Api.Json("""{"Ids":["users/2"]}"""));
        Assert.Equal(["@metadata"], (await Api.JsonAsync(posted)).GetProperty("Results")[0].EnumerateObject().Select(p => p.Name));

        using var missing = await Client.GetAsync($"/databases/{db}/docs?id=users/404&metadataOnly=true");
        await Api.AssertErrorAsync(missing, HttpStatusCode.NotFound, "DocumentDoesNotExistException");
        using var bad = await Client.GetAsync($"/databases/{db}/docs?id=users/1&metadataOnly=yes");
        Assert.Contains("'metadataOnly' is 'yes'", await Api.AssertErrorAsync(bad, HttpStatusCode.BadRequest, "BadRequestException"), StringComparison.Ordinal);
    }

    [Fact]
    public async Task AnEmptyOrNullIdAmongSeveralIsAHoleAnsweredNull()
    {
        var db = await DatabaseWithUsersAsync();
        static List<string?> Names(JsonElement answer) =>
            answer.GetProperty("Results").EnumerateArray().Select(r => r.ValueKind == JsonValueKind.Null ? null : r.GetProperty("Name").GetString()).ToList();

        Assert.Equal(["Ada", null, "Grace"], Names(await Api.JsonAsync(await Client.GetAsync($"/databases/{db}/docs?id=users/1&id=&id=users/2"))));
        Assert.Equal([null, "Grace"], Names(await Api.JsonAsync(await Client.GetAsync($"/databases/{db}/docs?id=&id=users/2"))));
        using var posted = await Client.PostAsync($"/databases/{db}/docs", Api.Json("""{"Ids":["users/1",null,"","users/2"]}"""));
        Assert.Equal(["Ada", null, null, "Grace"], Names(await Api.JsonAsync(posted)));
        // Alone, an empty id is still a mistake.
        using var alone = await Client.GetAsync($"/databases/{db}/docs?id=");
        await Api.AssertErrorAsync(alone, HttpStatusCode.BadRequest, "BadRequestException");
    }

    [Fact]
    public async Task LoadStartingWithFiltersByWildcardsAndStartsAfterAnId()
    {
        var db = await fixture.CreateDatabaseAsync();
        var ids = new[] { "users/1", "users/10", "users/11", "users/2", "users/20", "users/21", "users/3", "Users/3a", "orders/1" };
        foreach (var id in ids)
        {
            Assert.Equal(HttpStatusCode.Created, (await Client.PutAsync($"/databases/{db}/docs?id={id}", Api.Json("{}"))).StatusCode);
        }
        async Task<List<string>> IdsAsync(string query) =>
            (await Api.JsonAsync(await Client.GetAsync($"/databases/{db}/docs?startsWith=users/&{query}"))).GetProperty("Results")
                .EnumerateArray().Select(d => d.GetProperty("@metadata").GetProperty("@id").GetString()!).ToList();

        // A model: ids under the prefix in id order (case-insensitive), the wildcard on the rest of the id.
        Assert.Equal(["users/10", "users/11", "users/20", "users/21"], await IdsAsync("matches=1?|2?"));
        Assert.Equal(["users/2", "users/3", "Users/3a"], await IdsAsync("exclude=1*|2?"));
        Assert.Equal(["users/2", "users/20", "users/21", "users/3", "Users/3a"], await IdsAsync("startAfter=users/11"));
        Assert.Equal(["users/20", "users/21"], await IdsAsync("startAfter=users/11&matches=2*&start=1&pageSize=2"));
        Assert.Equal(["Users/3a"], await IdsAsync("matches=*A"));

        // An empty prefix is every id, the wildcards on the whole id.
        var all = await Api.JsonAsync(await Client.GetAsync($"/databases/{db}/docs?startsWith=&matches=*1&exclude=orders/*"));
        Assert.Equal(["users/1", "users/11", "users/21"], all.GetProperty("Results").EnumerateArray().Select(d => d.GetProperty("@metadata").GetProperty("@id").GetString()!));
    }

    [Fact]
    public async Task IndexNamesOnlyAndPagedDefinitions()
    {
        var db = await fixture.CreateDatabaseAsync();
        foreach (var name in new[] { "C/Index", "A/Index", "B/Index" })
        {
            var body = JsonSerializer.Serialize(new { Indexes = new[] { new { Name = name, Maps = new[] { "map('Users', u => ({ Name: u.Name }))" } } } });
            Assert.Equal(HttpStatusCode.Created, (await Client.PutAsync($"/databases/{db}/admin/indexes", Api.Json(body))).StatusCode);
        }
        var names = await Api.JsonAsync(await Client.GetAsync($"/databases/{db}/indexes?namesOnly=true"));
        Assert.Equal(["A/Index", "B/Index", "C/Index"], names.GetProperty("Results").EnumerateArray().Select(n => n.GetString()));
        var page = await Api.JsonAsync(await Client.GetAsync($"/databases/{db}/indexes?start=1&pageSize=1"));
        Assert.Equal("B/Index", Assert.Single(page.GetProperty("Results").EnumerateArray()).GetProperty("Name").GetString());
    }

    [Fact]
    public async Task StatisticsCarryWhatTheClientsDatabaseStatisticsReads()
    {
        var db = await DatabaseWithUsersAsync();
        var stats = await Api.JsonAsync(await Client.GetAsync($"/databases/{db}/stats"));
        foreach (var count in new[] { "CountOfRevisionDocuments", "CountOfAttachments", "CountOfUniqueAttachments", "CountOfCounterEntries", "CountOfTimeSeriesSegments", "CountOfConflicts", "CountOfDocumentsConflicts" })
        {
            Assert.Equal(0, stats.GetProperty(count).GetInt64());
        }
        Assert.Equal(2, stats.GetProperty("LastDatabaseEtag").GetInt64());
        Assert.Matches("^A:2-", stats.GetProperty("DatabaseChangeVector").GetString());
        Assert.True(stats.GetProperty("SizeOnDisk").GetProperty("SizeInBytes").GetInt64() > 0);
        Assert.EndsWith("Bytes", stats.GetProperty("SizeOnDisk").GetProperty("HumaneSize").GetString(), StringComparison.Ordinal);
        Assert.Equal(JsonValueKind.Null, stats.GetProperty("LastIndexingTime").ValueKind);
        Assert.True(stats.GetProperty("Is64Bit").GetBoolean());
        Assert.True(stats.GetProperty("NumberOfTransactionMergerQueueOperations").GetInt32() >= 0);
    }
}
