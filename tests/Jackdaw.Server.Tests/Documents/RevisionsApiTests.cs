using System.Net;
using System.Text.Json;
using Jackdaw.Server.Tests.Infrastructure;
using Jackdaw.Server.Tests.Patching;

namespace Jackdaw.Server.Tests.Documents;

/// <summary>Revisions over HTTP, in the shapes RavenDB's clients send and read.</summary>
public sealed class RevisionsApiTests(ServerFixture fixture) : IClassFixture<ServerFixture>
{
    private HttpClient Client => fixture.Client;

    private async Task<JsonElement> SendAsync(HttpMethod method, string uri, string? body = null, HttpStatusCode expected = HttpStatusCode.OK)
    {
        using var request = Api.Request(method, uri, body);
        using var response = await Client.SendAsync(request);
        var text = await response.Content.ReadAsStringAsync();
        Assert.True(expected == response.StatusCode, $"{method} {uri}: expected {expected}, got {response.StatusCode}: {text}");
        return text.Length == 0 ? default : JsonDocument.Parse(text).RootElement.Clone();
    }

    private Task<JsonElement> ConfigureAsync(string db, string json) => SendAsync(HttpMethod.Post, $"/databases/{db}/admin/revisions/config", json);

    private async Task<string> PutAsync(string db, string id, string json)
    {
        var result = await SendAsync(HttpMethod.Put, $"/databases/{db}/docs?id={Uri.EscapeDataString(id)}", json, HttpStatusCode.Created);
        return result.GetProperty("ChangeVector").GetString()!;
    }

    private async Task<JsonElement> BatchAsync(string db, string commands) =>
        (await SendAsync(HttpMethod.Post, $"/databases/{db}/bulk_docs", "{\"Commands\":[" + commands + "]}")).GetProperty("Results");

    private async Task<JsonElement?> GetDocumentAsync(string db, string id)
    {
        using var response = await Client.GetAsync($"/databases/{db}/docs?id={Uri.EscapeDataString(id)}");
        return response.StatusCode == HttpStatusCode.NotFound ? null : (await Api.JsonAsync(response)).GetProperty("Results")[0];
    }

    private static string Metadata(JsonElement document, string name) => document.GetProperty("@metadata").GetProperty(name).GetString()!;

    [Fact]
    public async Task RevisionsAreReadByIdNewestFirstByChangeVectorAndBeforeATime()
    {
        var db = await fixture.CreateDatabaseAsync();
        var index = await ConfigureAsync(db, """{"Default":null,"Collections":{"Users":{"Disabled":false,"MinimumRevisionsToKeep":null,"MinimumRevisionAgeToKeep":null,"PurgeOnDelete":false}}}""");
        Assert.True(index.GetProperty("RaftCommandIndex").GetInt64() > 0);
        var config = await SendAsync(HttpMethod.Get, $"/databases/{db}/revisions/config");
        Assert.False(config.GetProperty("Collections").GetProperty("Users").GetProperty("Disabled").GetBoolean());

        var changeVectors = new List<string>();
        for (var v = 1; v <= 3; v++)
        {
            changeVectors.Add(await PutAsync(db, "users/1", $$$"""{"Name":"v{{{v}}}","@metadata":{"@collection":"Users"}}"""));
        }
        var document = (await GetDocumentAsync(db, "users/1"))!.Value;
        Assert.Equal("HasRevisions", Metadata(document, "@flags"));

        var page = await SendAsync(HttpMethod.Get, $"/databases/{db}/revisions?id=users/1&start=0&pageSize=2");
        Assert.Equal(3, page.GetProperty("TotalResults").GetInt32());
        var results = page.GetProperty("Results").EnumerateArray().ToList();
        Assert.Equal(["v3", "v2"], results.Select(r => r.GetProperty("Name").GetString()));
        Assert.Equal("HasRevisions, Revision", Metadata(results[0], "@flags"));
        Assert.Equal(changeVectors[2], Metadata(results[0], "@change-vector"));
        Assert.Equal("users/1", Metadata(results[0], "@id"));
        Assert.Equal("Users", Metadata(results[0], "@collection"));

        var metadataOnly = await SendAsync(HttpMethod.Get, $"/databases/{db}/revisions?id=users/1&start=2&pageSize=25&metadataOnly=true");
        var only = Assert.Single(metadataOnly.GetProperty("Results").EnumerateArray());
        Assert.False(only.TryGetProperty("Name", out _));
        Assert.Equal(changeVectors[0], Metadata(only, "@change-vector"));

        var count = await SendAsync(HttpMethod.Get, $"/databases/{db}/revisions/count?&id=USERS%2F1");
        Assert.Equal(3, count.GetProperty("RevisionsCount").GetInt64());

        var byChangeVector = await SendAsync(HttpMethod.Get, $"/databases/{db}/revisions?changeVector={Uri.EscapeDataString(changeVectors[1])}&changeVector=A%3A999-nothing&changeVector={Uri.EscapeDataString(changeVectors[0])}");
        var found = byChangeVector.GetProperty("Results").EnumerateArray().ToList();
        Assert.Equal("v2", found[0].GetProperty("Name").GetString());
        Assert.Equal(JsonValueKind.Null, found[1].ValueKind);
        Assert.Equal("v1", found[2].GetProperty("Name").GetString());
        await SendAsync(HttpMethod.Get, $"/databases/{db}/revisions?changeVector=A%3A999-nothing", expected: HttpStatusCode.NotFound);

        // Before the second version's time: the first version; before anything: none.
        var secondAt = Metadata(results[1], "@last-modified");
        var before = await SendAsync(HttpMethod.Get, $"/databases/{db}/revisions?id=users/1&before={Uri.EscapeDataString(DateTime.Parse(secondAt, null, System.Globalization.DateTimeStyles.AdjustToUniversal).AddTicks(-1).ToString("O"))}");
        Assert.Equal("v1", Assert.Single(before.GetProperty("Results").EnumerateArray()).GetProperty("Name").GetString());
        var none = await SendAsync(HttpMethod.Get, $"/databases/{db}/revisions?id=users/1&before=2000-01-01T00:00:00.0000000Z");
        Assert.Empty(none.GetProperty("Results").EnumerateArray());
    }

    [Fact]
    public async Task ADeletedDocumentIsInTheBinWithItsDeleteRevisionUntilItComesBack()
    {
        var db = await fixture.CreateDatabaseAsync();
        await ConfigureAsync(db, """{"Default":{"Disabled":false}}""");
        await PutAsync(db, "orders/1", """{"Total":1,"@metadata":{"@collection":"Orders"}}""");
        await SendAsync(HttpMethod.Delete, $"/databases/{db}/docs?id=orders/1", expected: HttpStatusCode.NoContent);

        // The Node.js client sends pageSize=undefined when it has none.
        var bin = await SendAsync(HttpMethod.Get, $"/databases/{db}/revisions/bin?start=0&pageSize=undefined");
        var entry = Assert.Single(bin.GetProperty("Results").EnumerateArray());
        Assert.Equal("orders/1", Metadata(entry, "@id"));
        Assert.Equal("HasRevisions, DeleteRevision", Metadata(entry, "@flags"));
        Assert.Equal(2, (await SendAsync(HttpMethod.Get, $"/databases/{db}/revisions/count?id=orders/1")).GetProperty("RevisionsCount").GetInt64());

        await PutAsync(db, "orders/1", """{"Total":2,"@metadata":{"@collection":"Orders"}}""");
        Assert.Empty((await SendAsync(HttpMethod.Get, $"/databases/{db}/revisions/bin")).GetProperty("Results").EnumerateArray());
        var all = (await SendAsync(HttpMethod.Get, $"/databases/{db}/revisions?id=orders/1")).GetProperty("Results").EnumerateArray().ToList();
        Assert.Equal(["HasRevisions, Revision", "HasRevisions, DeleteRevision", "HasRevisions, Revision"], all.Select(r => Metadata(r, "@flags")));
    }

    [Fact]
    public async Task ForceRevisionCreationInABatchWorksWithoutConfigurationOncePerVersion()
    {
        var db = await fixture.CreateDatabaseAsync();
        var stored = await PutAsync(db, "users/1", """{"Name":"a","@metadata":{"@collection":"Users"}}""");
        var first = (await BatchAsync(db, """{"Id":"users/1","Type":"ForceRevisionCreation"}"""))[0];
        Assert.Equal("ForceRevisionCreation", first.GetProperty("Type").GetString());
        Assert.True(first.GetProperty("RevisionCreated").GetBoolean());
        Assert.Equal("users/1", first.GetProperty("@id").GetString());
        Assert.NotEqual(stored, first.GetProperty("@change-vector").GetString());

        var second = (await BatchAsync(db, """{"Id":"users/1","Type":"ForceRevisionCreation"}"""))[0];
        Assert.False(second.GetProperty("RevisionCreated").GetBoolean());
        Assert.Equal(first.GetProperty("@change-vector").GetString(), second.GetProperty("@change-vector").GetString());
        Assert.Equal(1, (await SendAsync(HttpMethod.Get, $"/databases/{db}/revisions/count?id=users/1")).GetProperty("RevisionsCount").GetInt64());

        using var missing = await Client.PostAsync($"/databases/{db}/bulk_docs", Api.Json("""{"Commands":[{"Id":"users/404","Type":"ForceRevisionCreation"}]}"""));
        Assert.Contains("users/404", await Api.AssertErrorAsync(missing, HttpStatusCode.UnprocessableEntity, "DocumentDoesNotExistException"), StringComparison.Ordinal);
    }

    private async Task<string[]> RevisionNamesAsync(string db, string id) =>
        [.. (await SendAsync(HttpMethod.Get, $"/databases/{db}/revisions?id={id}")).GetProperty("Results").EnumerateArray().Select(r => r.GetProperty("Name").GetString()!)];

    private static string PutBefore(string id, string name, string? changeVector = null) =>
        "{\"Type\":\"PUT\",\"Id\":\"" + id + "\",\"Document\":{\"Name\":\"" + name + "\",\"@metadata\":{\"@collection\":\"Users\"}},"
        + (changeVector is null ? "" : "\"ChangeVector\":\"" + changeVector + "\",") + "\"ForceRevisionCreationStrategy\":\"Before\"}";

    [Fact]
    public async Task APutWithForceRevisionCreationStrategyBeforeStoresTheStoredVersionFirst()
    {
        // As RavenDB's clients send it when a session forces the revision of an entity it changed.
        var db = await fixture.CreateDatabaseAsync();
        var a = await PutAsync(db, "users/1", """{"Name":"a","@metadata":{"@collection":"Users"}}""");
        var put = (await BatchAsync(db, PutBefore("users/1", "b", a)))[0];
        Assert.Equal("PUT", put.GetProperty("Type").GetString());
        Assert.Equal(["a"], await RevisionNamesAsync(db, "users/1"));
        var revision = (await SendAsync(HttpMethod.Get, $"/databases/{db}/revisions?id=users/1")).GetProperty("Results")[0];
        Assert.Equal(a, Metadata(revision, "@change-vector"));
        var stored = (await GetDocumentAsync(db, "users/1"))!.Value;
        Assert.Equal("b", stored.GetProperty("Name").GetString());
        Assert.Equal("HasRevisions", Metadata(stored, "@flags"));
        Assert.Equal(put.GetProperty("@change-vector").GetString(), Metadata(stored, "@change-vector"));

        await BatchAsync(db, PutBefore("users/1", "c"));
        Assert.Equal(["b", "a"], await RevisionNamesAsync(db, "users/1"));

        // The stored version already is the newest revision: not stored twice.
        await BatchAsync(db, """{"Id":"users/1","Type":"ForceRevisionCreation"}""" + "," + PutBefore("users/1", "d"));
        Assert.Equal(["c", "b", "a"], await RevisionNamesAsync(db, "users/1"));

        // With revisions configured the PUT's own version is a revision too, after the forced one.
        await ConfigureAsync(db, """{"Default":{}}""");
        await BatchAsync(db, PutBefore("users/1", "e"));
        Assert.Equal(["e", "d", "c", "b", "a"], await RevisionNamesAsync(db, "users/1"));

        // A change vector the document does not have fails the batch before anything is kept.
        using (var stale = await Client.PostAsync($"/databases/{db}/bulk_docs", Api.Json("{\"Commands\":[" + PutBefore("users/1", "f", a) + "]}")))
        {
            await Api.AssertErrorAsync(stale, HttpStatusCode.Conflict, "ConcurrencyException");
        }
        Assert.Equal(5, (await SendAsync(HttpMethod.Get, $"/databases/{db}/revisions/count?id=users/1")).GetProperty("RevisionsCount").GetInt64());

        // A document never saved has no "before" (RavenDB refuses it too): the batch is refused, naming it.
        using (var missing = await Client.PostAsync($"/databases/{db}/bulk_docs", Api.Json("{\"Commands\":[" + PutBefore("users/new", "n") + "]}")))
        {
            Assert.Contains("users/new", await Api.AssertErrorAsync(missing, HttpStatusCode.UnprocessableEntity, "DocumentDoesNotExistException"), StringComparison.Ordinal);
        }
        Assert.Null(await GetDocumentAsync(db, "users/new"));

        using var bad = await Client.PostAsync($"/databases/{db}/bulk_docs", Api.Json("""{"Commands":[{"Type":"PUT","Id":"users/1","Document":{},"ForceRevisionCreationStrategy":"After"}]}"""));
        Assert.Contains("ForceRevisionCreationStrategy", await Api.AssertErrorAsync(bad, HttpStatusCode.BadRequest, "BadRequestException"), StringComparison.Ordinal);
    }

    [Fact]
    public async Task ADocumentIsRevertedToARevisionByItsChangeVector()
    {
        var db = await fixture.CreateDatabaseAsync();
        await ConfigureAsync(db, """{"Default":{}}""");
        var first = await PutAsync(db, "users/1", """{"Name":"first","@metadata":{"@collection":"Users"}}""");
        await PutAsync(db, "users/1", """{"Name":"second","@metadata":{"@collection":"Users"}}""");

        await SendAsync(HttpMethod.Post, $"/databases/{db}/revisions/revert/docs", $$$"""{"IdToChangeVector":{"users/1":"{{{first}}}"}}""", HttpStatusCode.NoContent);
        var document = (await GetDocumentAsync(db, "users/1"))!.Value;
        Assert.Equal("first", document.GetProperty("Name").GetString());
        Assert.NotEqual(first, Metadata(document, "@change-vector"));
        Assert.Equal(3, (await SendAsync(HttpMethod.Get, $"/databases/{db}/revisions/count?id=users/1")).GetProperty("RevisionsCount").GetInt64());

        using var unknown = await Client.PostAsync($"/databases/{db}/revisions/revert/docs", Api.Json("""{"IdToChangeVector":{"users/1":"A:999-nothing"}}"""));
        Assert.Contains("A:999-nothing", await Api.AssertErrorAsync(unknown, HttpStatusCode.BadRequest, "BadRequestException"), StringComparison.Ordinal);
    }

    [Theory]
    [InlineData("/admin/revisions/config", """{"Default":{"MinimumRevisionsToKeep":-1}}""", "MinimumRevisionsToKeep")]
    [InlineData("/admin/revisions/config", """{"Default":{"MinimumRevisionAgeToKeep":"soon"}}""", "MinimumRevisionAgeToKeep")]
    [InlineData("/admin/revisions/config", """{"Collections":[]}""", "Collections")]
    [InlineData("/admin/revisions/config", """[1]""", "JSON object")]
    [InlineData("/admin/revisions/conflicts/config", """{"MaximumRevisionsToDeleteUponDocumentUpdate":0}""", "MaximumRevisionsToDeleteUponDocumentUpdate")]
    [InlineData("/revisions/revert", """{"WindowInSec":10}""", "Time")]
    [InlineData("/revisions/revert", """{"Time":"yesterday"}""", "Time")]
    [InlineData("/revisions/revert/docs", """{"IdToChangeVector":{"users/1":5}}""", "users/1")]
    public async Task BadRevisionsRequestsAre400sSayingWhatIsWrong(string route, string body, string named)
    {
        var db = await fixture.CreateDatabaseAsync();
        using var response = await Client.PostAsync($"/databases/{db}{route}", Api.Json(body));
        Assert.Contains(named, await Api.AssertErrorAsync(response, HttpStatusCode.BadRequest, "BadRequestException"), StringComparison.Ordinal);
    }

    [Fact]
    public async Task AQueryIncludesRevisionsByAPathToChangeVectorsAndBeforeATime()
    {
        var db = await fixture.CreateDatabaseAsync();
        await ConfigureAsync(db, """{"Default":{}}""");
        var firstContract = await PutAsync(db, "contracts/1", """{"Terms":"old","@metadata":{"@collection":"Contracts"}}""");
        await PutAsync(db, "contracts/1", """{"Terms":"new","@metadata":{"@collection":"Contracts"}}""");
        await PutAsync(db, "users/1", "{\"Name\":\"a\",\"Signed\":\"" + firstContract + "\",\"@metadata\":{\"@collection\":\"Users\"}}");

        // As the Node.js client writes it: revisions('Path') for includeRevisions(x => x.Signed).
        var byPath = await SendAsync(HttpMethod.Post, $"/databases/{db}/queries", """{"Query":"from Users include revisions('Signed')"}""");
        var included = Assert.Single(byPath.GetProperty("RevisionIncludes").EnumerateArray());
        Assert.Equal(firstContract, included.GetProperty("ChangeVector").GetString());
        Assert.Equal("contracts/1", included.GetProperty("Id").GetString());
        Assert.Equal("old", included.GetProperty("Revision").GetProperty("Terms").GetString());

        var userAt = Metadata(byPath.GetProperty("Results")[0], "@last-modified");
        await PutAsync(db, "users/1", """{"Name":"b","@metadata":{"@collection":"Users"}}""");
        var byTime = await SendAsync(HttpMethod.Post, $"/databases/{db}/queries", "{\"Query\":\"from Users include revisions('" + userAt + "')\"}");
        Assert.Equal("b", byTime.GetProperty("Results")[0].GetProperty("Name").GetString());
        var before = Assert.Single(byTime.GetProperty("RevisionIncludes").EnumerateArray());
        Assert.Equal("users/1", before.GetProperty("Id").GetString());
        Assert.Equal(userAt, before.GetProperty("Before").GetString());
        Assert.Equal("a", before.GetProperty("Revision").GetProperty("Name").GetString());

        using var bad = await Client.PostAsync($"/databases/{db}/queries", Api.Json("""{"Query":"from Users include revisions(Signed)"}"""));
        Assert.Contains("revisions", await Api.AssertErrorAsync(bad, HttpStatusCode.BadRequest, "InvalidQueryException"), StringComparison.Ordinal);
    }

    [Fact]
    public async Task ALoadIncludesRevisionsByAPathToChangeVectorsAndBeforeATime()
    {
        var db = await fixture.CreateDatabaseAsync();
        await ConfigureAsync(db, """{"Default":{}}""");
        var firstContract = await PutAsync(db, "contracts/1", """{"Terms":"old","@metadata":{"@collection":"Contracts"}}""");
        await PutAsync(db, "contracts/1", """{"Terms":"new","@metadata":{"@collection":"Contracts"}}""");
        await PutAsync(db, "users/1", "{\"Name\":\"a\",\"Signed\":\"" + firstContract + "\",\"@metadata\":{\"@collection\":\"Users\"}}");

        void AssertContract(JsonElement answer)
        {
            var included = Assert.Single(answer.GetProperty("RevisionIncludes").EnumerateArray());
            Assert.Equal("contracts/1", included.GetProperty("Id").GetString());
            Assert.Equal(firstContract, included.GetProperty("ChangeVector").GetString());
            Assert.Equal(JsonValueKind.Null, included.GetProperty("Before").ValueKind);
            Assert.Equal("old", included.GetProperty("Revision").GetProperty("Terms").GetString());
        }

        // As the Node.js client sends session.load(id, { includes: b => b.includeRevisions("Signed") }).
        using (var one = await Client.GetAsync($"/databases/{db}/docs?id=users/1&revisions=Signed"))
        {
            Assert.Equal(HttpStatusCode.OK, one.StatusCode);
            Assert.Null(one.Headers.ETag);
            AssertContract(await Api.JsonAsync(one));
        }
        AssertContract(await SendAsync(HttpMethod.Get, $"/databases/{db}/docs?id=users/1&id=users/2&revisions=Signed"));
        AssertContract(await SendAsync(HttpMethod.Post, $"/databases/{db}/docs?revisions=Signed", """{"Ids":["users/1"]}"""));
        var multi = await SendAsync(HttpMethod.Post, $"/databases/{db}/multi_get", """{"Requests":[{"Url":"/docs","Query":"?id=users/1&revisions=Signed"}]}""");
        AssertContract(multi.GetProperty("Results")[0].GetProperty("Result"));

        // Before a time: the newest revision of each loaded document at or before it.
        var userAt = Metadata((await GetDocumentAsync(db, "users/1"))!.Value, "@last-modified");
        await PutAsync(db, "users/1", """{"Name":"b","@metadata":{"@collection":"Users"}}""");
        var byTime = await SendAsync(HttpMethod.Get, $"/databases/{db}/docs?id=users/1&revisionsBefore={Uri.EscapeDataString(userAt)}");
        Assert.Equal("b", byTime.GetProperty("Results")[0].GetProperty("Name").GetString());
        var before = Assert.Single(byTime.GetProperty("RevisionIncludes").EnumerateArray());
        Assert.Equal("users/1", before.GetProperty("Id").GetString());
        Assert.Equal(userAt, before.GetProperty("Before").GetString());
        Assert.Equal("a", before.GetProperty("Revision").GetProperty("Name").GetString());

        // Without them the answer keeps its shape; a time that is not one is a 400 naming the parameter.
        Assert.False((await SendAsync(HttpMethod.Get, $"/databases/{db}/docs?id=users/1")).TryGetProperty("RevisionIncludes", out _));
        using var bad = await Client.GetAsync($"/databases/{db}/docs?id=users/1&revisionsBefore=yesterday");
        Assert.Contains("revisionsBefore", await Api.AssertErrorAsync(bad, HttpStatusCode.BadRequest, "BadRequestException"), StringComparison.Ordinal);
    }

    [Fact]
    public async Task TheConflictsConfigurationIsStoredAndAnswered()
    {
        var db = await fixture.CreateDatabaseAsync();
        await SendAsync(HttpMethod.Get, $"/databases/{db}/revisions/conflicts/config", expected: HttpStatusCode.NoContent);
        await SendAsync(HttpMethod.Get, $"/databases/{db}/revisions/config", expected: HttpStatusCode.NoContent);
        var index = await SendAsync(HttpMethod.Post, $"/databases/{db}/admin/revisions/conflicts/config", """{"Disabled":false,"MinimumRevisionAgeToKeep":"2.00:00:00"}""");
        Assert.True(index.GetProperty("RaftCommandIndex").GetInt64() > 0);
        var stored = await SendAsync(HttpMethod.Get, $"/databases/{db}/revisions/conflicts/config");
        Assert.Equal("2.00:00:00", stored.GetProperty("MinimumRevisionAgeToKeep").GetString());
    }

    /// <summary>Pages of several flushes (each read from a fresh snapshot) come out whole and in order.</summary>
    [Fact]
    public async Task ALargePageOfRevisionsOrOfTheBinStreamsOutWhole()
    {
        var db = await fixture.CreateDatabaseAsync();
        await ConfigureAsync(db, """{"Default":{}}""");
        const int Versions = 600;
        var padding = new string('x', 2000);
        await BatchAsync(db, string.Join(',', Enumerable.Range(1, Versions).Select(v => "{\"Type\":\"PUT\",\"Id\":\"big/1\",\"Document\":{\"V\":" + v + ",\"Pad\":\"" + padding + "\",\"@metadata\":{\"@collection\":\"Bigs\"}}}")));
        var page = await SendAsync(HttpMethod.Get, $"/databases/{db}/revisions?id=big/1&start=0&pageSize=1048576");
        Assert.Equal(Versions, page.GetProperty("TotalResults").GetInt32());
        Assert.Equal(Enumerable.Range(1, Versions).Reverse(), page.GetProperty("Results").EnumerateArray().Select(r => r.GetProperty("V").GetInt32()));

        const int Deleted = 3000;
        await BatchAsync(db, string.Join(',', Enumerable.Range(1, Deleted).Select(i => "{\"Type\":\"PUT\",\"Id\":\"gone/" + i + "\",\"Document\":{\"@metadata\":{\"@collection\":\"Gones\"}}}")));
        await BatchAsync(db, string.Join(',', Enumerable.Range(1, Deleted).Select(i => "{\"Type\":\"DELETE\",\"Id\":\"gone/" + i + "\"}")));
        var bin = await SendAsync(HttpMethod.Get, $"/databases/{db}/revisions/bin?start=0&pageSize=1048576");
        Assert.Equal(Enumerable.Range(1, Deleted).Reverse().Select(i => $"gone/{i}"), bin.GetProperty("Results").EnumerateArray().Select(r => Metadata(r, "@id")));
    }

    [Fact]
    public async Task RevertingACollectionToAPointInTimeLeavesOtherWritersChangesInPlace()
    {
        var db = await fixture.CreateDatabaseAsync();
        await ConfigureAsync(db, """{"Default":{"MinimumRevisionsToKeep":50}}""");
        const int Orders = 40;
        var puts = string.Join(',', Enumerable.Range(1, Orders).Select(i => "{\"Type\":\"PUT\",\"Id\":\"orders/" + i + "\",\"Document\":{\"V\":1,\"@metadata\":{\"@collection\":\"Orders\"}}}"));
        var firstRound = await BatchAsync(db, puts + "," + """{"Type":"PUT","Id":"notes/1","Document":{"V":0,"@metadata":{"@collection":"Notes"}}}""");
        var time = firstRound[Orders].GetProperty("@last-modified").GetString()!;

        // After the point in time: every order changes, some are deleted, one is new.
        await BatchAsync(db, string.Join(',', Enumerable.Range(1, Orders).Select(i => "{\"Type\":\"PUT\",\"Id\":\"orders/" + i + "\",\"Document\":{\"V\":2,\"@metadata\":{\"@collection\":\"Orders\"}}}")));
        await BatchAsync(db, """{"Type":"DELETE","Id":"orders/1"},{"Type":"DELETE","Id":"orders/2"},{"Type":"PUT","Id":"orders/new","Document":{"V":2,"@metadata":{"@collection":"Orders"}}}""");

        // Another writer keeps changing notes while the revert runs.
        using var stop = new CancellationTokenSource();
        var lastNote = 0;
        var writer = Task.Run(async () =>
        {
            while (!stop.IsCancellationRequested)
            {
                var next = lastNote + 1;
                await PutAsync(db, "notes/1", $$$"""{"V":{{{next}}},"@metadata":{"@collection":"Notes"}}""");
                lastNote = next;
            }
        });
        await Poll.UntilAsync(() => Task.FromResult(lastNote >= 3), TimeSpan.FromSeconds(30), "the notes writer");

        var started = await SendAsync(HttpMethod.Post, $"/databases/{db}/revisions/revert", $$"""{"Time":"{{time}}","WindowInSec":3600,"Collections":["orders"]}""");
        var state = await PatchByQueryTests.WaitAsync(Client, db, started.GetProperty("OperationId").GetInt64());
        var stopAt = lastNote + 3;
        await Poll.UntilAsync(() => Task.FromResult(lastNote >= stopAt), TimeSpan.FromSeconds(30), "the notes writer after the revert");
        stop.Cancel();
        await writer;

        Assert.Equal("Completed", state.GetProperty("Status").GetString());
        var result = state.GetProperty("Result");
        Assert.Equal(Orders + 1, result.GetProperty("RevertedDocuments").GetInt64());
        Assert.Equal(Orders + 1, result.GetProperty("ScannedDocuments").GetInt64());
        for (var i = 1; i <= Orders; i++)
        {
            Assert.Equal(1, (await GetDocumentAsync(db, $"orders/{i}"))!.Value.GetProperty("V").GetInt32());
        }
        Assert.Null(await GetDocumentAsync(db, "orders/new"));
        Assert.Equal(lastNote, (await GetDocumentAsync(db, "notes/1"))!.Value.GetProperty("V").GetInt32());

        // The revert is revisioned: the new order's last revision is its delete, in the bin.
        var bin = (await SendAsync(HttpMethod.Get, $"/databases/{db}/revisions/bin")).GetProperty("Results").EnumerateArray().ToList();
        Assert.Equal(["orders/new"], bin.Select(r => Metadata(r, "@id")));
    }
}
