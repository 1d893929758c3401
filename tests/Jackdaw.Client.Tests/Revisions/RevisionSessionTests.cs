using System.Net;
using System.Text.Json.Nodes;
using Jackdaw.Client.Tests.Infrastructure;

namespace Jackdaw.Client.Tests.Revisions;

/// <summary>session.Advanced.Revisions and the revisions operations on the wire (RavenDB's routes and shapes).</summary>
public sealed class RevisionSessionTests : IDisposable
{
    private const string Revision1 = """{"Name":"Ann v2","Age":2,"@metadata":{"@id":"users/1","@change-vector":"A:2-x","@last-modified":"2024-05-01T10:00:00.0000000Z","@collection":"Users","@flags":"HasRevisions, Revision"}}""";
    private const string Revision2 = """{"Name":"Ann v1","Age":1,"@metadata":{"@id":"users/1","@change-vector":"A:1-x","@last-modified":"2024-04-01T10:00:00.0000000Z","@collection":"Users","@flags":"HasRevisions, Revision"}}""";
    private readonly WireRecorder _wire = new();
    private readonly DocumentStore _store;

    public RevisionSessionTests() => _store = _wire.CreateStore();

    public void Dispose() => _store.Dispose();

    [Fact]
    public async Task GetForPagesTheRevisionsAndTheyAreReadOnlyButAnswerTheirMetadata()
    {
        _wire.Answer = r => WireRecorder.Json($$"""{"Results":[{{Revision1}},{{Revision2}}],"TotalResults":2}""");
        using var session = _store.OpenAsyncSession();
        var revisions = await session.Advanced.Revisions.GetForAsync<User>("users/1", start: 5, pageSize: 2);

        Assert.Equal("/databases/db/revisions?id=users%2F1&start=5&pageSize=2", Assert.Single(_wire.Requests).PathAndQuery);
        Assert.Equal(["Ann v2", "Ann v1"], revisions.Select(r => r.Name));
        Assert.Equal("users/1", revisions[0].Id);
        Assert.Equal("A:1-x", session.Advanced.GetChangeVectorFor(revisions[1]));
        Assert.Equal("HasRevisions, Revision", session.Advanced.GetMetadataFor(revisions[0]).GetString("@flags"));
        Assert.False(session.Advanced.IsLoaded("users/1"), "a revision is not the document");

        revisions[0].Name = "changed";
        Assert.False(session.Advanced.HasChanged(revisions[0]));
        Assert.False(session.Advanced.HasChanges);
        await session.SaveChangesAsync();
        Assert.Single(_wire.Requests);
    }

    [Fact]
    public async Task GetMetadataForAsksForMetadataOnly()
    {
        _wire.Answer = r => WireRecorder.Json("""{"Results":[{"@metadata":{"@id":"users/1","@change-vector":"A:2-x","@flags":"Revision"}},{"@metadata":{"@id":"users/1","@change-vector":"A:1-x","@flags":"Revision"}}]}""");
        using var session = _store.OpenAsyncSession();
        var metadata = await session.Advanced.Revisions.GetMetadataForAsync("users/1");
        Assert.Equal("/databases/db/revisions?id=users%2F1&start=0&pageSize=25&metadataOnly=true", Assert.Single(_wire.Requests).PathAndQuery);
        Assert.Equal(["A:2-x", "A:1-x"], metadata.Select(m => m.GetString("@change-vector")));
    }

    [Fact]
    public async Task GetByChangeVectorsSendsEachAndMapsAMissingOneToNull()
    {
        _wire.Answer = r => WireRecorder.Json($$"""{"Results":[{{Revision2}},null]}""");
        using var session = _store.OpenAsyncSession();
        var revisions = await session.Advanced.Revisions.GetAsync<User>(["A:1-x", "B:9-y"]);
        Assert.Equal("/databases/db/revisions?changeVector=A%3A1-x&changeVector=B%3A9-y", Assert.Single(_wire.Requests).PathAndQuery);
        Assert.Equal("Ann v1", revisions["A:1-x"]!.Name);
        Assert.Null(revisions["B:9-y"]);

        _wire.Answer = r => new HttpResponseMessage(HttpStatusCode.NotFound);
        Assert.Null(await session.Advanced.Revisions.GetAsync<User>("C:1-z"));
        Assert.Equal(2, session.Advanced.NumberOfRequests);
    }

    [Fact]
    public async Task GetBeforeSendsTheDateInUtcAsRavenDbsClientsFormatIt()
    {
        _wire.Answer = r => WireRecorder.Json($$"""{"Results":[{{Revision2}}]}""");
        using var session = _store.OpenAsyncSession();
        var revision = await session.Advanced.Revisions.GetBeforeAsync<User>("users/1", new DateTime(2024, 4, 15, 8, 30, 0, DateTimeKind.Utc));
        Assert.Equal("Ann v1", revision!.Name);
        Assert.Equal("/databases/db/revisions?id=users%2F1&before=2024-04-15T08%3A30%3A00.0000000Z", Assert.Single(_wire.Requests).PathAndQuery);

        var local = new DateTime(2024, 4, 15, 8, 30, 0, DateTimeKind.Local);
        await session.Advanced.Revisions.GetAsync<User>("users/1", local);
        var expected = Uri.EscapeDataString(local.ToUniversalTime().ToString("yyyy-MM-dd'T'HH:mm:ss.fffffff'Z'"));
        Assert.EndsWith("&before=" + expected, _wire.Requests.Last().PathAndQuery);
    }

    [Fact]
    public async Task GetCountForReadsRavenDbsRevisionsCount()
    {
        _wire.Answer = r => WireRecorder.Json("""{"RevisionsCount":42}""");
        using var session = _store.OpenAsyncSession();
        Assert.Equal(42, await session.Advanced.Revisions.GetCountForAsync("users/1"));
        Assert.Equal("/databases/db/revisions/count?id=users%2F1", Assert.Single(_wire.Requests).PathAndQuery);
    }

    [Fact]
    public async Task AForcedRevisionIsACommandOfItsOwnOrPartOfTheDocumentsPut()
    {
        _wire.Answer = r => r.Method == "GET"
            ? WireRecorder.Json("""{"Results":[{"Name":"Ann","@metadata":{"@id":"users/1","@change-vector":"A:1-x","@collection":"Users"}},{"Name":"Bob","@metadata":{"@id":"users/2","@change-vector":"A:3-x","@collection":"Users"}}],"Includes":{}}""")
            : WireRecorder.Json("""{"Results":[{"Type":"PUT","@id":"users/2","@change-vector":"A:5-x"},{"Type":"PUT","@id":"users/9","@change-vector":"A:6-x"},{"Type":"ForceRevisionCreation","RevisionCreated":true,"@id":"users/9","@change-vector":"A:7-x"},{"Type":"ForceRevisionCreation","RevisionCreated":true,"@id":"users/1","@change-vector":"A:8-x"},{"Type":"ForceRevisionCreation","RevisionCreated":false}]}""");
        using var session = _store.OpenAsyncSession();
        var users = await session.LoadAsync<User>(["users/1", "users/2"]);
        session.Advanced.Revisions.ForceRevisionCreationFor(users["users/1"]!);
        session.Advanced.Revisions.ForceRevisionCreationFor(users["users/2"]!);
        session.Advanced.Revisions.ForceRevisionCreationFor("users/3");
        session.Advanced.Revisions.ForceRevisionCreationFor("USERS/3");
        Assert.Throws<InvalidOperationException>(() => session.Advanced.Revisions.ForceRevisionCreationFor("users/3", ForceRevisionStrategy.None));
        Assert.Throws<InvalidOperationException>(() => session.Advanced.Revisions.ForceRevisionCreationFor(new User()));
        Assert.True(session.Advanced.HasChanges);
        users["users/2"]!.Name = "Bob changed";
        var created = new User { Id = "users/9", Name = "New" };
        await session.StoreAsync(created);
        session.Advanced.Revisions.ForceRevisionCreationFor(created);
        await session.SaveChangesAsync();

        // A changed stored document's forced revision is its PUT's "Before" (the version it changes), a new one's a command after it.
        var sentCommands = _wire.Requests.Last().BodyJson["Commands"]!.AsArray();
        var commands = sentCommands.Select(c => $"{c!["Type"]} {c["Id"]} {c["ForceRevisionCreationStrategy"]}".TrimEnd()).ToList();
        Assert.Equal(["PUT users/2 Before", "PUT users/9", "ForceRevisionCreation users/9", "ForceRevisionCreation users/1", "ForceRevisionCreation users/3"], commands);
        Assert.Equal("""{"Id":"users/1","Type":"ForceRevisionCreation"}""", sentCommands[3]!.ToJsonString());
        Assert.Equal(("A:8-x", "A:5-x", "A:7-x"), (session.Advanced.GetChangeVectorFor(users["users/1"]!), session.Advanced.GetChangeVectorFor(users["users/2"]!), session.Advanced.GetChangeVectorFor(created)));
        Assert.False(session.Advanced.HasChanges);

        await session.SaveChangesAsync();
        Assert.Equal(2, _wire.Requests.Count);
    }

    [Fact]
    public async Task ConfigureRevisionsSendsRavenDbsConfigurationShape()
    {
        _wire.Answer = r => WireRecorder.Json("""{"RaftCommandIndex":7}""");
        var result = await _store.Maintenance.SendAsync(new ConfigureRevisionsOperation(new RevisionsConfiguration
        {
            Default = new RevisionsCollectionConfiguration { MinimumRevisionsToKeep = 5 },
            Collections = new()
            {
                ["Orders"] = new RevisionsCollectionConfiguration { MinimumRevisionAgeToKeep = TimeSpan.FromDays(7), PurgeOnDelete = true },
                ["Logs"] = new RevisionsCollectionConfiguration { Disabled = true },
            },
        }));

        var request = Assert.Single(_wire.Requests);
        Assert.Equal(("POST", "/databases/db/admin/revisions/config"), (request.Method, request.PathAndQuery));
        Assert.Equal(
            """{"Default":{"Disabled":false,"MinimumRevisionsToKeep":5,"PurgeOnDelete":false},"Collections":{"Orders":{"Disabled":false,"MinimumRevisionAgeToKeep":"7.00:00:00","PurgeOnDelete":true},"Logs":{"Disabled":true,"PurgeOnDelete":false}}}""",
            request.BodyText);
        Assert.Equal(7, result.RaftCommandIndex);
    }

    [Fact]
    public async Task RevertRevisionsStartsAnOperationWhoseResultReadsAsARevertResult()
    {
        _wire.Answer = r => r.PathAndQuery.Contains("operations/state")
            ? WireRecorder.Json("""{"Status":"Completed","Result":{"ScannedRevisions":10,"ScannedDocuments":4,"RevertedDocuments":3,"Warnings":{"users/9":"no revision"}}}""")
            : WireRecorder.Json("""{"OperationId":12,"OperationNodeTag":"A"}""");
        var operation = await _store.Maintenance.SendAsync(new RevertRevisionsOperation(new RevertRevisionsRequest
        {
            Time = new DateTime(2024, 1, 2, 3, 4, 5, DateTimeKind.Utc),
            WindowInSec = 60,
            Collections = ["Orders"],
        }));
        Assert.Equal(12, operation.Id);
        var start = _wire.Requests.First();
        Assert.Equal(("POST", "/databases/db/revisions/revert"), (start.Method, start.PathAndQuery));
        Assert.Equal("""{"Time":"2024-01-02T03:04:05Z","WindowInSec":60,"Collections":["Orders"]}""", start.BodyText);

        var result = await operation.WaitForCompletionAsync<RevertResult>(TimeSpan.FromSeconds(10));
        Assert.Equal((10L, 4L, 3L), (result.ScannedRevisions, result.ScannedDocuments, result.RevertedDocuments));
        Assert.Equal("no revision", result.Warnings!["users/9"]);
        Assert.Equal("/databases/db/operations/state?id=12", _wire.Requests.Last().PathAndQuery);
    }

    [Fact]
    public async Task RevertByIdSendsEachDocumentWithItsRevisionsChangeVector()
    {
        _wire.Answer = r => new HttpResponseMessage(HttpStatusCode.NoContent);
        await _store.Operations.SendAsync(new RevertRevisionsByIdOperation("users/1", "A:1-x"));
        var request = Assert.Single(_wire.Requests);
        Assert.Equal(("POST", "/databases/db/revisions/revert/docs"), (request.Method, request.PathAndQuery));
        Assert.Equal("""{"IdToChangeVector":{"users/1":"A:1-x"}}""", request.BodyText);
        Assert.Throws<ArgumentException>(() => new RevertRevisionsByIdOperation(new Dictionary<string, string>()));
        Assert.Throws<ArgumentException>(() => new RevertRevisionsByIdOperation("users/1", ""));
    }
}
