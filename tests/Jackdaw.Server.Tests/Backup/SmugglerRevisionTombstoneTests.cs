using System.Net;
using System.Text.Json;
using Jackdaw.Server.Tests.Infrastructure;

namespace Jackdaw.Server.Tests.Backup;

/// <summary>
/// Revision tombstones in a dump: the export writes each removed revision as RavenDB's
/// <c>"Type":"Revision"</c> tombstone, an import removes that revision where it is stored and never
/// stores it again, and a tombstone of a type nobody knows is refused by name.
/// </summary>
public sealed class SmugglerRevisionTombstoneTests(SmugglerClient.Fixture fixture) : IClassFixture<SmugglerClient.Fixture>
{
    private const string WithRevisions = """{"OperateOnTypes":"Documents,RevisionDocuments,Tombstones"}""";

    private HttpClient Client => fixture.Client;

    /// <summary>The change vectors of a document's revisions, newest first.</summary>
    private async Task<List<string>> RevisionsAsync(string db, string id)
    {
        using var response = await Client.GetAsync($"/databases/{db}/revisions?id={Uri.EscapeDataString(id)}");
        Assert.Equal(HttpStatusCode.OK, response.StatusCode);
        return (await Api.JsonAsync(response)).GetProperty("Results").EnumerateArray()
            .Select(r => r.GetProperty("@metadata").GetProperty("@change-vector").GetString()!).ToList();
    }

    [Fact]
    public async Task RevisionsRemovedOnTheSourceAreRemovedOnATargetThatHadThemAndNeverComeBack()
    {
        var source = await fixture.CreateDatabaseAsync();
        var target = await fixture.CreateDatabaseAsync();
        using (var config = await Client.PostAsync($"/databases/{source}/admin/revisions/config", Api.Json("""{"Default":{"MinimumRevisionsToKeep":3}}""")))
        {
            Assert.True(config.IsSuccessStatusCode, await config.Content.ReadAsStringAsync());
        }
        for (var version = 1; version <= 3; version++)
        {
            await SmugglerClient.PutAsync(Client, source, "users/1", "{\"Name\":\"v" + version + "\",\"@metadata\":{\"@collection\":\"Users\"}}");
        }
        var (first, _) = await SmugglerClient.ExportAsync(Client, source, WithRevisions);
        Assert.Empty(SmugglerClient.Parse(first).GetProperty("Tombstones").EnumerateArray());
        var (response, body, _) = await SmugglerClient.ImportAsync(Client, target, first, WithRevisions);
        Assert.True(response.StatusCode == HttpStatusCode.OK, body.ToString());
        var old = await RevisionsAsync(source, "users/1");
        Assert.Equal(3, old.Count);
        Assert.Equal(old, await RevisionsAsync(target, "users/1"));

        // Two more versions: the limit removes the two oldest revisions.
        await SmugglerClient.PutAsync(Client, source, "users/1", """{"Name":"v4","@metadata":{"@collection":"Users"}}""");
        await SmugglerClient.PutAsync(Client, source, "users/1", """{"Name":"v5","@metadata":{"@collection":"Users"}}""");
        var now = await RevisionsAsync(source, "users/1");
        Assert.Equal(old[0], now[2]);
        var removed = old[1..];

        var (second, state) = await SmugglerClient.ExportAsync(Client, source, WithRevisions);
        var tombstones = SmugglerClient.Parse(second).GetProperty("Tombstones").EnumerateArray().ToList();
        Assert.Equal(removed.Order(), tombstones.Select(t => t.GetProperty("Key").GetString()!).Order());
        Assert.All(tombstones, t =>
        {
            Assert.Equal("Revision", t.GetProperty("Type").GetString());
            Assert.Equal(t.GetProperty("Key").GetString(), t.GetProperty("ChangeVector").GetString());
            Assert.Equal("@empty", t.GetProperty("Collection").GetString());
            Assert.Equal(JsonValueKind.Number, t.GetProperty("Etag").ValueKind);
            Assert.Equal(JsonValueKind.String, t.GetProperty("LastModified").ValueKind);
        });
        Assert.Equal(2, state.GetProperty("Result").GetProperty("Tombstones").GetProperty("ReadCount").GetInt64());

        // Without revisions, or with a collection filter (a tombstone keeps no collection), none are written.
        var (withoutRevisions, _) = await SmugglerClient.ExportAsync(Client, source, """{"OperateOnTypes":"Documents,Tombstones"}""");
        Assert.Empty(SmugglerClient.Parse(withoutRevisions).GetProperty("Tombstones").EnumerateArray());
        var (filtered, _) = await SmugglerClient.ExportAsync(Client, source, """{"OperateOnTypes":"Documents,RevisionDocuments,Tombstones","Collections":["Users"]}""");
        Assert.Empty(SmugglerClient.Parse(filtered).GetProperty("Tombstones").EnumerateArray());

        (response, body, _) = await SmugglerClient.ImportAsync(Client, target, second, WithRevisions);
        Assert.True(response.StatusCode == HttpStatusCode.OK, body.ToString());
        Assert.Equal(0, body.GetProperty("RefusedCount").GetInt64());
        Assert.Equal(now, await RevisionsAsync(target, "users/1"));

        // The first dump again: its removed revisions are known removed here and stay out.
        (response, body, _) = await SmugglerClient.ImportAsync(Client, target, first, WithRevisions);
        Assert.True(response.StatusCode == HttpStatusCode.OK, body.ToString());
        Assert.Equal(now, await RevisionsAsync(target, "users/1"));
    }

    [Fact]
    public async Task ATombstoneOfAnUnknownTypeIsRefusedByNameAndTheOthersApplied()
    {
        var db = await fixture.CreateDatabaseAsync();
        await SmugglerClient.PutAsync(Client, db, "users/3", """{"@metadata":{"@collection":"Users"}}""");
        var dump = SmugglerClient.Gzip("""
            {"BuildVersion":60000,"Tombstones":[
             {"Key":"users/1","Type":"Banana","Collection":"Users"},
             {"Key":"users/2","Type":7},
             {"Key":"users/1/photo.png","Type":"Attachment","Collection":null},
             {"Key":"A:1-x","Type":"Revision","Collection":"Users","ChangeVector":"A:9-x","LastModified":"2026-01-01T00:00:00.0000000Z"},
             {"Type":"Revision","Collection":"Users"},
             {"Key":"users/3","Type":"Document","Collection":"Users"},
             {"Key":"users/8\u001eA:2-x","Type":"Revision","Collection":"Users","ChangeVector":"A:10-x"}
            ]}
            """);
        var (response, body, state) = await SmugglerClient.ImportAsync(Client, db, dump, """{"OperateOnTypes":"Documents,RevisionDocuments,Tombstones"}""");
        Assert.True(response.StatusCode == HttpStatusCode.OK, body.ToString());
        Assert.Equal("Completed", state.GetProperty("Status").GetString());

        var refused = body.GetProperty("Refused").EnumerateArray().ToDictionary(r => r.GetProperty("Position").GetInt64());
        Assert.Equal([1L, 2, 5], refused.Keys.Order());
        Assert.All(refused.Values, r => Assert.Equal("Tombstones", r.GetProperty("Section").GetString()));
        Assert.Contains("'Banana' is not a tombstone type", refused[1].GetProperty("Reason").GetString());
        Assert.Equal("users/1", refused[1].GetProperty("Id").GetString());
        Assert.Contains("'Type' is not a string", refused[2].GetProperty("Reason").GetString());
        Assert.Contains("change vector", refused[5].GetProperty("Reason").GetString());
        var counts = body.GetProperty("Tombstones");
        Assert.Equal(7, counts.GetProperty("ReadCount").GetInt64());
        Assert.Equal(3, counts.GetProperty("ErroredCount").GetInt64());
        Assert.Contains(body.GetProperty("Messages").EnumerateArray(), m => m.GetString()!.Contains("Banana", StringComparison.Ordinal));

        // The document tombstone was applied; the revision tombstones recorded (RavenDB 6's key, the
        // document's id, 0x1E, the change vector, too): those revisions are never stored here.
        Assert.Null(await SmugglerClient.GetAsync(Client, db, "users/3"));
        var revision = SmugglerClient.Gzip("""
            {"BuildVersion":60000,"RevisionDocuments":[
             {"Name":"old","@metadata":{"@id":"users/9","@collection":"Users","@change-vector":"A:1-x","@last-modified":"2025-07-27T12:10:00.0000000Z","@flags":"HasRevisions, Revision"}},
             {"Name":"older","@metadata":{"@id":"users/8","@collection":"Users","@change-vector":"A:2-x","@last-modified":"2025-07-27T12:10:00.0000000Z","@flags":"HasRevisions, Revision"}},
             {"Name":"kept","@metadata":{"@id":"users/8","@collection":"Users","@change-vector":"A:3-x","@last-modified":"2025-07-27T12:11:00.0000000Z","@flags":"HasRevisions, Revision"}}]}
            """);
        (response, body, _) = await SmugglerClient.ImportAsync(Client, db, revision, """{"OperateOnTypes":"Documents,RevisionDocuments"}""");
        Assert.True(response.StatusCode == HttpStatusCode.OK, body.ToString());
        Assert.Empty(await RevisionsAsync(db, "users/9"));
        Assert.Equal(["A:3-x"], await RevisionsAsync(db, "users/8"));
    }
}
