using System.Net;
using System.Text.Json;
using Jackdaw.Server.Tests.Infrastructure;

namespace Jackdaw.Server.Tests.Backup;

/// <summary>
/// Export to a <c>.ravendbdump</c> and import into a new database, over HTTP as RavenDB's clients
/// call them: the copy equals the source (documents with their metadata, tombstones when asked,
/// index definitions, subscriptions, identities), filters apply, and an incremental export from
/// the last etag holds only what changed.
/// </summary>
public sealed class SmugglerRoundTripTests(SmugglerClient.Fixture fixture) : IClassFixture<SmugglerClient.Fixture>
{
    private HttpClient Client => fixture.Client;

    private static readonly string[] Ids = ["users/1", "users/2", "orders/1", "orders/2", "loose/1"];

    private async Task<string> SeedAsync()
    {
        var db = await fixture.CreateDatabaseAsync();
        await SmugglerClient.PutAsync(Client, db, "users/1", """{"Name":"Ann","Tags":["a","b"],"@metadata":{"@collection":"Users","Raven-Node-Type":"User","Custom":{"x":1}}}""");
        await SmugglerClient.PutAsync(Client, db, "users/2", """{"Name":"Bob","Age":42.5,"Nested":{"Deep":[{"A":null}]},"@metadata":{"@collection":"Users"}}""");
        await SmugglerClient.PutAsync(Client, db, "orders/1", """{"Total":10,"Unicode":"żółw ✓","@metadata":{"@collection":"Orders"}}""");
        await SmugglerClient.PutAsync(Client, db, "orders/2", """{"Total":20,"@metadata":{"@collection":"Orders"}}""");
        await SmugglerClient.PutAsync(Client, db, "orders/3", """{"Total":30,"@metadata":{"@collection":"Orders"}}""");
        await SmugglerClient.PutAsync(Client, db, "loose/1", """{"NoCollection":true}""");
        using (var deleted = await Client.DeleteAsync($"/databases/{db}/docs?id=orders/3"))
        {
            Assert.Equal(HttpStatusCode.NoContent, deleted.StatusCode);
        }
        using (var index = await Client.PutAsync($"/databases/{db}/indexes", Api.Json("""{"Indexes":[{"Name":"Orders/ByTotal","Maps":["map('Orders', o => ({ Total: o.Total }))"],"Fields":{"Total":{"Storage":"Yes"}}}]}""")))
        {
            Assert.Equal(HttpStatusCode.Created, index.StatusCode);
        }
        using (var subscription = await Client.PutAsync($"/databases/{db}/subscriptions", Api.Json("""{"Name":"BigOrders","Query":"from Orders where Total > 15"}""")))
        {
            Assert.Equal(HttpStatusCode.Created, subscription.StatusCode);
        }
        using (var identity = await Client.PostAsync($"/databases/{db}/identity/seed?name=people&value=41", null))
        {
            Assert.Equal(HttpStatusCode.OK, identity.StatusCode);
        }
        return db;
    }

    [Fact]
    public async Task AnExportImportedIntoANewDatabaseEqualsTheSource()
    {
        var source = await SeedAsync();
        var (dump, exported) = await SmugglerClient.ExportAsync(Client, source, """{"OperateOnTypes":"Documents,Indexes,Subscriptions,Identities,Tombstones,CompareExchange,Attachments,CounterGroups"}""");
        Assert.Equal("Completed", exported.GetProperty("Status").GetString());
        var result = exported.GetProperty("Result");
        Assert.Equal("Raven.Client.Documents.Smuggler.SmugglerResult, Raven.Client", result.GetProperty("$type").GetString());
        Assert.Equal(5, result.GetProperty("Documents").GetProperty("ReadCount").GetInt64());
        Assert.Equal(1, result.GetProperty("Tombstones").GetProperty("ReadCount").GetInt64());
        Assert.True(result.GetProperty("LastEtag").GetInt64() >= 7);

        var json = SmugglerClient.Parse(dump);
        Assert.Equal(60000, json.GetProperty("BuildVersion").GetInt64());
        Assert.Equal("orders/3", json.GetProperty("Tombstones")[0].GetProperty("Key").GetString());
        var index = json.GetProperty("Indexes")[0];
        Assert.Equal("JavaScriptMap", index.GetProperty("Type").GetString());
        Assert.Equal("Orders/ByTotal", index.GetProperty("IndexDefinition").GetProperty("Name").GetString());
        Assert.Equal("BigOrders", json.GetProperty("Subscriptions")[0].GetProperty("SubscriptionName").GetString());
        Assert.Equal("people|", json.GetProperty("Identities")[0].GetProperty("Key").GetString());

        var target = await fixture.CreateDatabaseAsync();
        var (response, body, imported) = await SmugglerClient.ImportAsync(Client, target, dump, """{"OperateOnTypes":"Documents,Indexes,Subscriptions,Identities,Tombstones"}""");
        Assert.True(response.StatusCode == HttpStatusCode.OK, body.ToString());
        Assert.Equal("Completed", imported.GetProperty("Status").GetString());
        Assert.Equal(0, body.GetProperty("RefusedCount").GetInt64());

        foreach (var id in Ids)
        {
            var expected = await SmugglerClient.GetAsync(Client, source, id);
            var actual = await SmugglerClient.GetAsync(Client, target, id);
            Assert.NotNull(actual);
            Assert.Equal(SmugglerClient.Comparable(expected!.Value), SmugglerClient.Comparable(actual!.Value));
        }
        Assert.Null(await SmugglerClient.GetAsync(Client, target, "orders/3"));

        // The tombstone came along: exporting the copy's tombstones gives the same deletion.
        var (again, _) = await SmugglerClient.ExportAsync(Client, target, """{"OperateOnTypes":"Tombstones"}""");
        Assert.Equal("orders/3", SmugglerClient.Parse(again).GetProperty("Tombstones")[0].GetProperty("Key").GetString());
        Assert.Equal("Orders", SmugglerClient.Parse(again).GetProperty("Tombstones")[0].GetProperty("Collection").GetString());

        Assert.Equal(await DefinitionsAsync(source), await DefinitionsAsync(target));
        Assert.Equal(await SubscriptionsAsync(source), await SubscriptionsAsync(target));
        using var next = await Client.PostAsync($"/databases/{target}/identity/next?name=people", null);
        Assert.Equal(42, (await Api.JsonAsync(next)).GetProperty("NewIdentityValue").GetInt64());
    }

    private async Task<string> DefinitionsAsync(string db)
    {
        using var response = await Client.GetAsync($"/databases/{db}/indexes");
        var results = (await Api.JsonAsync(response)).GetProperty("Results");
        return string.Join("\n", results.EnumerateArray().Select(d =>
        {
            var node = System.Text.Json.Nodes.JsonNode.Parse(d.GetRawText())!.AsObject();
            node.Remove("CreatedAt");
            node.Remove("State");
            return node.ToJsonString();
        }));
    }

    private async Task<string> SubscriptionsAsync(string db)
    {
        using var response = await Client.GetAsync($"/databases/{db}/subscriptions");
        var results = (await Api.JsonAsync(response)).GetProperty("Results");
        return string.Join("\n", results.EnumerateArray().Select(s => s.GetProperty("SubscriptionName").GetString() + ": " + s.GetProperty("Query").GetString() + " " + s.GetProperty("Disabled").GetBoolean()));
    }

    [Fact]
    public async Task TheDefaultTypesLeaveTombstonesOut()
    {
        var source = await SeedAsync();
        var (dump, _) = await SmugglerClient.ExportAsync(Client, source);
        var json = SmugglerClient.Parse(dump);
        Assert.False(json.TryGetProperty("Tombstones", out _));
        Assert.Equal(5, json.GetProperty("Docs").GetArrayLength());
    }

    [Fact]
    public async Task ACollectionFilterExportsAndImportsOnlyThoseCollections()
    {
        var source = await SeedAsync();
        var (dump, state) = await SmugglerClient.ExportAsync(Client, source, """{"OperateOnTypes":"Documents,Tombstones","Collections":["orders"]}""");
        var docs = SmugglerClient.Parse(dump).GetProperty("Docs").EnumerateArray().Select(d => d.GetProperty("@metadata").GetProperty("@id").GetString()).Order().ToList();
        Assert.Equal(["orders/1", "orders/2"], docs);
        Assert.Equal(1, SmugglerClient.Parse(dump).GetProperty("Tombstones").GetArrayLength());
        Assert.Equal(2, state.GetProperty("Result").GetProperty("Documents").GetProperty("ReadCount").GetInt64());

        // On import too: a full dump, filtered to Users.
        var (full, _) = await SmugglerClient.ExportAsync(Client, source);
        var target = await fixture.CreateDatabaseAsync();
        var (response, body, _) = await SmugglerClient.ImportAsync(Client, target, full, """{"OperateOnTypes":"Documents","Collections":["Users"]}""");
        Assert.True(response.StatusCode == HttpStatusCode.OK, body.ToString());
        Assert.Equal(3, body.GetProperty("Documents").GetProperty("SkippedCount").GetInt64());
        Assert.NotNull(await SmugglerClient.GetAsync(Client, target, "users/2"));
        Assert.Null(await SmugglerClient.GetAsync(Client, target, "orders/1"));
        Assert.Null(await SmugglerClient.GetAsync(Client, target, "loose/1"));
    }

    [Fact]
    public async Task AnIncrementalExportFromTheLastEtagHoldsOnlyWhatChangedSince()
    {
        var source = await SeedAsync();
        var (_, first) = await SmugglerClient.ExportAsync(Client, source, """{"OperateOnTypes":"Documents,Tombstones"}""");
        var last = first.GetProperty("Result").GetProperty("LastEtag").GetInt64();
        await SmugglerClient.PutAsync(Client, source, "users/1", """{"Name":"Ann again","@metadata":{"@collection":"Users"}}""");
        using (await Client.DeleteAsync($"/databases/{source}/docs?id=orders/1")) { }
        var (dump, second) = await SmugglerClient.ExportAsync(Client, source, """{"OperateOnTypes":"Documents,Tombstones"}""", $"&startEtag={last + 1}");
        var json = SmugglerClient.Parse(dump);
        Assert.Equal(["users/1"], json.GetProperty("Docs").EnumerateArray().Select(d => d.GetProperty("@metadata").GetProperty("@id").GetString()).ToList());
        Assert.Equal(["orders/1"], json.GetProperty("Tombstones").EnumerateArray().Select(t => t.GetProperty("Key").GetString()).ToList());
        Assert.True(second.GetProperty("Result").GetProperty("LastEtag").GetInt64() > last);

        // Applied over a copy of the first export, it gives the source's state.
        var (baseDump, _) = await SmugglerClient.ExportAsync(Client, source, """{"OperateOnTypes":"Documents"}""", "&startEtag=0");
        var target = await fixture.CreateDatabaseAsync();
        var (response, body, _) = await SmugglerClient.ImportAsync(Client, target, dump, """{"OperateOnTypes":"Documents,Tombstones"}""");
        Assert.True(response.StatusCode == HttpStatusCode.OK, body.ToString());
        Assert.Equal("Ann again", (await SmugglerClient.GetAsync(Client, target, "users/1"))!.Value.GetProperty("Name").GetString());
        Assert.Null(await SmugglerClient.GetAsync(Client, target, "orders/1"));
        Assert.Equal(4, SmugglerClient.Parse(baseDump).GetProperty("Docs").GetArrayLength());
    }

    [Fact]
    public async Task ExpiredDocumentsAreLeftOutWhenAsked()
    {
        var db = await fixture.CreateDatabaseAsync();
        await SmugglerClient.PutAsync(Client, db, "a/1", """{"@metadata":{"@collection":"As","@expires":"2001-01-01T00:00:00.0000000Z"}}""");
        await SmugglerClient.PutAsync(Client, db, "a/2", """{"@metadata":{"@collection":"As","@expires":"2999-01-01T00:00:00.0000000Z"}}""");
        var (dump, state) = await SmugglerClient.ExportAsync(Client, db, """{"IncludeExpired":false}""");
        Assert.Equal(["a/2"], SmugglerClient.Parse(dump).GetProperty("Docs").EnumerateArray().Select(d => d.GetProperty("@metadata").GetProperty("@id").GetString()).ToList());
        Assert.Equal(1, state.GetProperty("Result").GetProperty("Documents").GetProperty("SkippedCount").GetInt64());
        var (all, _) = await SmugglerClient.ExportAsync(Client, db);
        Assert.Equal(2, SmugglerClient.Parse(all).GetProperty("Docs").GetArrayLength());
    }

    [Fact]
    public async Task RemoveAnalyzersStripsThemFromExportedDefinitions()
    {
        var db = await fixture.CreateDatabaseAsync();
        using (var index = await Client.PutAsync($"/databases/{db}/indexes", Api.Json("""{"Indexes":[{"Name":"Notes/Text","Maps":["map('Notes', n => ({ Text: n.Text }))"],"Fields":{"Text":{"Indexing":"Search","Analyzer":"StandardAnalyzer"}}}]}""")))
        {
            Assert.Equal(HttpStatusCode.Created, index.StatusCode);
        }
        var (kept, _) = await SmugglerClient.ExportAsync(Client, db, """{"OperateOnTypes":"Indexes"}""");
        Assert.Equal("StandardAnalyzer", SmugglerClient.Parse(kept).GetProperty("Indexes")[0].GetProperty("IndexDefinition").GetProperty("Fields").GetProperty("Text").GetProperty("Analyzer").GetString());
        var (removed, _) = await SmugglerClient.ExportAsync(Client, db, """{"OperateOnTypes":"Indexes","RemoveAnalyzers":true}""");
        Assert.False(SmugglerClient.Parse(removed).GetProperty("Indexes")[0].GetProperty("IndexDefinition").GetProperty("Fields").GetProperty("Text").TryGetProperty("Analyzer", out _));
    }

    [Fact]
    public async Task BadOptionsAreA400BeforeAnythingIsSent()
    {
        var db = await fixture.CreateDatabaseAsync();
        using var types = await Client.PostAsync($"/databases/{db}/smuggler/export", Api.Json("""{"OperateOnTypes":"Documents,Nope"}"""));
        Assert.Contains("Nope", await Api.AssertErrorAsync(types, HttpStatusCode.BadRequest, "BadRequestException"));
        using var script = await Client.PostAsync($"/databases/{db}/smuggler/export", Api.Json("""{"TransformScript":"this.x = 1"}"""));
        Assert.Contains("TransformScript", await Api.AssertErrorAsync(script, HttpStatusCode.BadRequest, "BadRequestException"));
        using var zstd = await Client.PostAsync($"/databases/{db}/smuggler/export", Api.Json("""{"CompressionAlgorithm":"Zstd"}"""));
        Assert.Contains("Gzip", await Api.AssertErrorAsync(zstd, HttpStatusCode.BadRequest, "BadRequestException"));
    }
}
