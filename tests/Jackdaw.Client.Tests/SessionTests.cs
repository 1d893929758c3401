using System.Net;
using System.Text.Json.Nodes;
using Jackdaw.Client.Tests.Infrastructure;

namespace Jackdaw.Client.Tests;

public sealed class SessionTests : IDisposable
{
    private readonly FakeJackdaw _fake = new(TestStores.Database);
    private readonly DocumentStore _store;

    public SessionTests() => _store = TestStores.Create(_fake);

    public void Dispose() => _store.Dispose();

    [Fact]
    public async Task StoreAndSaveSendsOnePutInBulkDocsWithCollectionAndClrTypeMetadata()
    {
        using var session = _store.OpenAsyncSession();
        await session.StoreAsync(new User { Id = "users/1", Name = "Ann", Age = 31 });
        await session.SaveChangesAsync();

        var request = Assert.Single(_fake.Requests);
        Assert.Equal("POST", request.Method);
        Assert.Equal("/databases/db/bulk_docs", request.PathAndQuery);
        Assert.StartsWith("application/json", request.ContentType);
        var command = Assert.Single(request.BodyJson["Commands"]!.AsArray())!;
        Assert.Equal("PUT", (string?)command["Type"]);
        Assert.Equal("users/1", (string?)command["Id"]);
        Assert.Null(command["ChangeVector"]);
        var document = command["Document"]!.AsObject();
        Assert.Equal("Ann", (string?)document["Name"]);
        Assert.False(document.ContainsKey("Id"), "the id lives in @metadata.@id, not in the body");
        Assert.Equal("Users", (string?)document["@metadata"]!["@collection"]);
        Assert.Equal(typeof(User).FullName + ", Jackdaw.Client.Tests", (string?)document["@metadata"]!["Jackdaw-Clr-Type"]);
        Assert.Equal(1, session.Advanced.NumberOfRequests);
        Assert.Equal("A:1-fake", session.Advanced.GetChangeVectorFor(await session.LoadAsync<User>("users/1") ?? throw new InvalidOperationException()));
    }

    [Fact]
    public async Task LoadingTheSameIdTwiceReturnsTheSameInstanceWithOneRequest()
    {
        _fake.Put(TestStores.Database, "users/1", new JsonObject { ["Name"] = "Ann", ["@metadata"] = new JsonObject { ["@collection"] = "Users" } });
        using var session = _store.OpenAsyncSession();

        var first = await session.LoadAsync<User>("users/1");
        var second = await session.LoadAsync<User>("USERS/1");

        Assert.NotNull(first);
        Assert.Same(first, second);
        Assert.Equal("users/1", first.Id);
        var request = Assert.Single(_fake.Requests);
        Assert.Equal("GET", request.Method);
        Assert.Equal("/databases/db/docs?id=users%2F1", request.PathAndQuery);
        Assert.Equal(1, session.Advanced.NumberOfRequests);
    }

    [Fact]
    public async Task LoadingAMissingIdReturnsNullAndIsRememberedForTheSession()
    {
        using var session = _store.OpenAsyncSession();

        Assert.Null(await session.LoadAsync<User>("users/404"));
        Assert.Null(await session.LoadAsync<User>("users/404"));

        Assert.Single(_fake.Requests);
    }

    [Fact]
    public async Task LoadManySendsOneRequestForUnloadedIdsAndMapsMissingToNull()
    {
        _fake.Put(TestStores.Database, "users/1", new JsonObject { ["Name"] = "Ann" });
        _fake.Put(TestStores.Database, "users/2", new JsonObject { ["Name"] = "Bob" });
        using var session = _store.OpenAsyncSession();
        var ann = await session.LoadAsync<User>("users/1");

        var loaded = await session.LoadAsync<User>(["users/1", "users/2", "users/3"]);

        Assert.Same(ann, loaded["users/1"]);
        Assert.Equal("Bob", loaded["users/2"]!.Name);
        Assert.Null(loaded["users/3"]);
        Assert.Equal(2, _fake.Requests.Count);
        Assert.Equal("/databases/db/docs?id=users%2F2&id=users%2F3", _fake.Requests.Last().PathAndQuery);
    }

    [Fact]
    public async Task LoadManyOfManyIdsSplitsIntoRequestsOfBoundedUrlLength()
    {
        var ids = Enumerable.Range(0, 1500).Select(i => $"users/{i:D10}").ToList();
        using var session = _store.OpenAsyncSession();

        var loaded = await session.LoadAsync<User>(ids);

        Assert.Equal(1500, loaded.Count);
        Assert.All(loaded.Values, Assert.Null);
        Assert.True(_fake.Requests.Count > 1);
        Assert.All(_fake.Requests, r => Assert.True(r.PathAndQuery.Length < 6100, $"URL of {r.PathAndQuery.Length} chars"));
        Assert.Equal(1500, _fake.Requests.Sum(r => r.PathAndQuery.Split("id=").Length - 1));
    }

    [Fact]
    public async Task LoadManyOfLongNonAsciiIdsKeepsEveryUrlUnderTheLimit()
    {
        var ids = Enumerable.Range(0, 40).Select(i => $"users/{i}/" + new string('語', 200)).ToList();
        using var session = _store.OpenAsyncSession();

        await session.LoadAsync<User>(ids);

        Assert.All(_fake.Requests, r => Assert.True(r.PathAndQuery.Length <= 6000, $"URL of {r.PathAndQuery.Length} chars"));
        Assert.Equal(40, _fake.Requests.Sum(r => r.PathAndQuery.Split("id=").Length - 1));
    }

    [Fact]
    public async Task SaveChangesWithNothingChangedMakesNoRequest()
    {
        _fake.Put(TestStores.Database, "users/1", new JsonObject { ["Name"] = "Ann", ["Tags"] = new JsonArray("a"), ["Address"] = new JsonObject { ["City"] = "Oslo" } });
        using var session = _store.OpenAsyncSession();
        await session.LoadAsync<User>("users/1");

        Assert.False(session.Advanced.HasChanges);
        await session.SaveChangesAsync();

        Assert.Single(_fake.Requests);
        Assert.Equal(1, session.Advanced.NumberOfRequests);
    }

    [Fact]
    public async Task AChangedNestedListIsDetectedAndOnlyThatDocumentIsSent()
    {
        _fake.Put(TestStores.Database, "users/1", new JsonObject { ["Name"] = "Ann", ["Tags"] = new JsonArray("a") });
        _fake.Put(TestStores.Database, "users/2", new JsonObject { ["Name"] = "Bob", ["Tags"] = new JsonArray("b") });
        using var session = _store.OpenAsyncSession();
        var users = await session.LoadAsync<User>(["users/1", "users/2"]);

        users["users/2"]!.Tags.Add("c");
        Assert.True(session.Advanced.HasChanged(users["users/2"]!));
        Assert.False(session.Advanced.HasChanged(users["users/1"]!));
        await session.SaveChangesAsync();

        var command = Assert.Single(_fake.Requests.Last().BodyJson["Commands"]!.AsArray())!;
        Assert.Equal("users/2", (string?)command["Id"]);
        Assert.Equal(["b", "c"], command["Document"]!["Tags"]!.AsArray().Select(t => (string?)t));
        Assert.Equal(["b", "c"], _fake.Stored(TestStores.Database, "users/2")!["Tags"]!.AsArray().Select(t => (string?)t));

        // Saved: the snapshot moved on, so a second save sends nothing.
        await session.SaveChangesAsync();
        Assert.Equal(2, _fake.Requests.Count);
    }

    [Fact]
    public async Task AnEntityLoadedBackAsTheSessionSavedItIsUnchangedUntilItsNestedListChanges()
    {
        using (var writer = _store.OpenAsyncSession())
        {
            await writer.StoreAsync(new User { Id = "users/1", Name = "Ann", Age = 31, Tags = ["a"], Address = new Address { City = "Oslo" } });
            await writer.SaveChangesAsync();
        }

        using var session = _store.OpenAsyncSession();
        var user = await session.LoadAsync<User>("users/1");

        Assert.False(session.Advanced.HasChanged(user!));
        await session.SaveChangesAsync();
        Assert.Equal(2, _fake.Requests.Count);

        user!.Tags.Add("b");
        Assert.True(session.Advanced.HasChanged(user));
        await session.SaveChangesAsync();

        Assert.Equal(3, _fake.Requests.Count);
        Assert.Equal(["a", "b"], _fake.Stored(TestStores.Database, "users/1")!["Tags"]!.AsArray().Select(t => (string?)t));
        await session.SaveChangesAsync();
        Assert.Equal(3, _fake.Requests.Count);
    }

    [Theory]
    [InlineData("""{"@metadata":{"@id":"users/1","@collection":"Users"},"Name":"Ann","Age":31,"Tags":["a"],"Address":null}""")]
    [InlineData("""{"Age":31,"Name":"Ann","Tags":["a"],"Address":null,"@metadata":{"@id":"users/1","@collection":"Users"}}""")]
    [InlineData("""{"Name":"Ann","Age":31,"Tags":["a"],"Address":null,"Nickname":"A","@metadata":{"@id":"users/1","@collection":"Users"}}""")]
    [InlineData("""{ "Name": "Ann", "Age": 31, "Tags": [ "a" ], "@metadata": { "@id": "users/1", "@collection": "Users" } }""")]
    public async Task ADocumentStoredInAnyFormIsUnchangedUntilTheEntityChanges(string stored)
    {
        AnswerGetsWith("{\"Results\":[" + stored + "],\"Includes\":{}}");
        using var session = _store.OpenAsyncSession();
        var user = await session.LoadAsync<User>("users/1");

        Assert.False(session.Advanced.HasChanged(user!));
        await session.SaveChangesAsync();
        Assert.Single(_fake.Requests);

        user!.Tags.Add("b");
        Assert.True(session.Advanced.HasChanged(user));
        await session.SaveChangesAsync();

        var document = Assert.Single(_fake.Requests.Last().BodyJson["Commands"]!.AsArray())!["Document"]!;
        Assert.Equal(["a", "b"], document["Tags"]!.AsArray().Select(t => (string?)t));
        Assert.Equal(31, (int?)document["Age"]);
    }

    private const string ValidDocsAnswer = """{"Includes":{},"Results":[{"@metadata":{"@collection":"Users","@id":"users/1","@change-vector":"A:7-x"},"Name":"Ann","Tags":["a"]}]}""";

    [Theory]
    [InlineData("not json", "not JSON")]
    [InlineData("""{"Includes":{}}""", "one result per id")]
    [InlineData("""{"Results":[]}""", "one result per id")]
    [InlineData("""{"Results":[null,null]}""", "one result per id")]
    [InlineData("""{"Results":[1]}""", "one result per id")]
    [InlineData("""{"Results":{}}""", "one result per id")]
    [InlineData("""[]""", "one result per id")]
    [InlineData("""{"Results":[{"Name":"Ann"}]}""", "without @metadata")]
    [InlineData("""{"Results":[{"Name":"Ann","@metadata":"x"}]}""", "without @metadata")]
    [InlineData("""{"Results":[{"Name":1,"@metadata":{}}]}""", "cannot be read as")]
    public async Task AMalformedLoadAnswerThrowsJackdawExceptionSayingWhatWasWrong(string answer, string expected)
    {
        AnswerGetsWith(answer);
        using var session = _store.OpenAsyncSession();

        var error = await Assert.ThrowsAsync<JackdawException>(() => session.LoadAsync<User>("users/1"));

        Assert.Contains(expected, error.Message, StringComparison.Ordinal);
        Assert.False(session.Advanced.IsLoaded("users/1"));
    }

    [Fact]
    public async Task EveryTruncatedPrefixOfALoadAnswerThrowsJackdawException()
    {
        for (var length = 0; length < ValidDocsAnswer.Length; length++)
        {
            AnswerGetsWith(ValidDocsAnswer[..length]);
            using var session = _store.OpenAsyncSession();
            await Assert.ThrowsAsync<JackdawException>(() => session.LoadAsync<User>("users/1"));
        }
    }

    [Fact]
    public async Task ALoadAnswerIsReadWhereverItsResultsAndMetadataStand()
    {
        AnswerGetsWith(ValidDocsAnswer);
        using var session = _store.OpenAsyncSession();

        var user = await session.LoadAsync<User>("USERS/1");

        Assert.Equal("users/1", user!.Id);
        Assert.Equal("Ann", user.Name);
        Assert.Equal(["a"], user.Tags);
        Assert.Equal("A:7-x", session.Advanced.GetChangeVectorFor(user));
        Assert.Equal("Users", session.Advanced.GetMetadataFor(user).GetString("@collection"));
        Assert.False(session.Advanced.HasChanged(user));
    }

    private void AnswerGetsWith(string answer) =>
        _fake.Intercept = request => request.Method == "GET"
            ? new HttpResponseMessage(HttpStatusCode.OK) { Content = new StringContent(answer, System.Text.Encoding.UTF8, "application/json") }
            : null;

    [Fact]
    public async Task ChangingTheIdPropertyOfALoadedEntityCountsAsAChange()
    {
        using (var writer = _store.OpenAsyncSession())
        {
            await writer.StoreAsync(new User { Id = "users/1", Name = "Ann" });
            await writer.SaveChangesAsync();
        }

        using var session = _store.OpenAsyncSession();
        var user = await session.LoadAsync<User>("users/1");
        user!.Id = "users/2";

        Assert.True(session.Advanced.HasChanged(user));
    }

    [Fact]
    public async Task AChangedNestedObjectPropertyIsDetected()
    {
        _fake.Put(TestStores.Database, "users/1", new JsonObject { ["Name"] = "Ann", ["Address"] = new JsonObject { ["City"] = "Oslo" } });
        using var session = _store.OpenAsyncSession();
        var user = await session.LoadAsync<User>("users/1");

        user!.Address!.City = "Bergen";
        await session.SaveChangesAsync();

        Assert.Equal("Bergen", (string?)_fake.Stored(TestStores.Database, "users/1")!["Address"]!["City"]);
    }

    [Fact]
    public async Task GeneratedIdsAreWrittenBackIntoTheEntityAfterSave()
    {
        using var session = _store.OpenAsyncSession();
        var user = new User { Name = "Ann" };
        var company = new Company { Name = "Acme" };
        await session.StoreAsync(user);
        await session.StoreAsync(company, "companies|");
        Assert.Null(session.Advanced.GetDocumentId(user));

        await session.SaveChangesAsync();

        var commands = _fake.Requests.Single().BodyJson["Commands"]!.AsArray();
        Assert.Equal("users/", (string?)commands[0]!["Id"]);
        Assert.Equal("companies|", (string?)commands[1]!["Id"]);
        Assert.Equal("users/0000000000000000001-A", user.Id);
        Assert.Equal("companies/1", company.Id);
        Assert.Equal(user.Id, session.Advanced.GetDocumentId(user));
        Assert.Same(user, await session.LoadAsync<User>(user.Id!));
        Assert.False(session.Advanced.HasChanges, "writing the id back is not a change");
        await session.SaveChangesAsync();
        Assert.Single(_fake.Requests);
    }

    [Fact]
    public async Task OptimisticConcurrencySendsTheLoadedChangeVectors()
    {
        var cv = _fake.Put(TestStores.Database, "users/1", new JsonObject { ["Name"] = "Ann" });
        _fake.Put(TestStores.Database, "users/2", new JsonObject { ["Name"] = "Bob" });
        using var session = _store.OpenAsyncSession();
        session.Advanced.UseOptimisticConcurrency = true;
        var ann = await session.LoadAsync<User>("users/1");
        var bob = await session.LoadAsync<User>("users/2");
        var bobCv = session.Advanced.GetChangeVectorFor(bob!);

        ann!.Age = 40;
        session.Delete(bob!);
        await session.StoreAsync(new User { Id = "users/3" });
        await session.SaveChangesAsync();

        var commands = _fake.Requests.Last().BodyJson["Commands"]!.AsArray();
        Assert.Equal(("DELETE", "users/2", bobCv), ((string?)commands[0]!["Type"], (string?)commands[0]!["Id"], (string?)commands[0]!["ChangeVector"]));
        Assert.Equal(("PUT", "users/1", cv), ((string?)commands[1]!["Type"], (string?)commands[1]!["Id"], (string?)commands[1]!["ChangeVector"]));
        Assert.Equal(("PUT", "users/3", (string?)null), ((string?)commands[2]!["Type"], (string?)commands[2]!["Id"], (string?)commands[2]!["ChangeVector"]));
    }

    [Fact]
    public async Task WithoutOptimisticConcurrencyNoChangeVectorIsSent()
    {
        _fake.Put(TestStores.Database, "users/1", new JsonObject { ["Name"] = "Ann" });
        using var session = _store.OpenAsyncSession();
        var ann = await session.LoadAsync<User>("users/1");

        ann!.Age = 40;
        await session.SaveChangesAsync();

        Assert.Null(_fake.Requests.Last().BodyJson["Commands"]![0]!["ChangeVector"]);
    }

    [Fact]
    public async Task AConcurrentChangeThrowsConcurrencyExceptionAndKeepsTheSessionRetryable()
    {
        _fake.Put(TestStores.Database, "users/1", new JsonObject { ["Name"] = "Ann" });
        using var session = _store.OpenAsyncSession(new SessionOptions { UseOptimisticConcurrency = true });
        var ann = await session.LoadAsync<User>("users/1");
        _fake.Put(TestStores.Database, "users/1", new JsonObject { ["Name"] = "Changed elsewhere" });

        ann!.Age = 40;
        var error = await Assert.ThrowsAsync<ConcurrencyException>(() => session.SaveChangesAsync());

        Assert.Equal(HttpStatusCode.Conflict, error.StatusCode);
        Assert.Equal("ConcurrencyException", error.ServerErrorType);
        Assert.Contains("users/1", error.Message);
        Assert.Equal("Changed elsewhere", (string?)_fake.Stored(TestStores.Database, "users/1")!["Name"]);
        Assert.True(session.Advanced.HasChanged(ann), "a failed save leaves the change pending");
    }

    [Fact]
    public async Task StoreWithAnExplicitChangeVectorSendsIt()
    {
        using var session = _store.OpenAsyncSession();
        await session.StoreAsync(new User { Name = "Ann" }, "A:7-x", "users/1");
        var error = await Assert.ThrowsAsync<ConcurrencyException>(() => session.SaveChangesAsync());

        Assert.Equal("A:7-x", (string?)_fake.Requests.Last().BodyJson["Commands"]![0]!["ChangeVector"]);
        Assert.Contains("users/1", error.Message);
    }

    [Fact]
    public async Task DeleteByIdSendsADeleteAndLaterLoadsReturnNull()
    {
        _fake.Put(TestStores.Database, "users/1", new JsonObject { ["Name"] = "Ann" });
        using var session = _store.OpenAsyncSession();

        session.Delete("users/1");
        Assert.Null(await session.LoadAsync<User>("users/1"));
        await session.SaveChangesAsync();

        var command = Assert.Single(_fake.Requests.Single().BodyJson["Commands"]!.AsArray())!;
        Assert.Equal("DELETE", (string?)command["Type"]);
        Assert.Null(_fake.Stored(TestStores.Database, "users/1"));
        Assert.Null(await session.LoadAsync<User>("users/1"));
        Assert.Single(_fake.Requests);
    }

    [Fact]
    public async Task DeletingAnEntityNeverSavedSendsNothing()
    {
        using var session = _store.OpenAsyncSession();
        var user = new User { Name = "Ann" };
        await session.StoreAsync(user);
        session.Delete(user);

        await session.SaveChangesAsync();

        Assert.Empty(_fake.Requests);
    }

    [Fact]
    public async Task EvictForgetsTheEntitySoTheNextLoadAsksTheServer()
    {
        _fake.Put(TestStores.Database, "users/1", new JsonObject { ["Name"] = "Ann" });
        using var session = _store.OpenAsyncSession();
        var first = await session.LoadAsync<User>("users/1");

        session.Advanced.Evict(first!);
        first!.Name = "ignored";
        await session.SaveChangesAsync();
        var second = await session.LoadAsync<User>("users/1");

        Assert.NotSame(first, second);
        Assert.Equal("Ann", second!.Name);
        Assert.Equal(2, _fake.Requests.Count(r => r.Method == "GET"));
        Assert.DoesNotContain(_fake.Requests, r => r.Method == "POST");
    }

    [Fact]
    public async Task ClearForgetsEverythingIncludingPendingDeletes()
    {
        _fake.Put(TestStores.Database, "users/1", new JsonObject { ["Name"] = "Ann" });
        using var session = _store.OpenAsyncSession();
        var user = await session.LoadAsync<User>("users/1");
        user!.Name = "changed";
        session.Delete("users/2");

        session.Advanced.Clear();
        await session.SaveChangesAsync();

        Assert.False(session.Advanced.IsLoaded("users/1"));
        Assert.Single(_fake.Requests);
    }

    [Fact]
    public async Task StoringADifferentObjectUnderATrackedIdThrows()
    {
        using var session = _store.OpenAsyncSession();
        await session.StoreAsync(new User { Id = "users/1" });

        var error = await Assert.ThrowsAsync<InvalidOperationException>(() => session.StoreAsync(new User { Id = "users/1" }));
        Assert.Contains("users/1", error.Message);
    }

    [Fact]
    public async Task StoringATrackedEntityAgainIsANoOp()
    {
        using var session = _store.OpenAsyncSession();
        var user = new User { Id = "users/1" };
        await session.StoreAsync(user);
        await session.StoreAsync(user);
        await session.SaveChangesAsync();

        Assert.Single(_fake.Requests.Single().BodyJson["Commands"]!.AsArray());
    }

    [Fact]
    public async Task MetadataIsReadableAndChangesToItAreSaved()
    {
        _fake.Put(TestStores.Database, "users/1", new JsonObject { ["Name"] = "Ann", ["@metadata"] = new JsonObject { ["@collection"] = "Users", ["Owner"] = "x" } });
        using var session = _store.OpenAsyncSession();
        var user = await session.LoadAsync<User>("users/1");

        var metadata = session.Advanced.GetMetadataFor(user!);
        Assert.Equal("users/1", metadata.GetString("@id"));
        Assert.Equal("x", metadata["Owner"]);
        Assert.Equal("2026-11-23T10:00:00.0000000Z", metadata.GetString("@last-modified"));
        Assert.False(session.Advanced.HasChanges);

        metadata["Expires"] = "2027-01-01";
        await session.SaveChangesAsync();

        var sent = _fake.Requests.Last().BodyJson["Commands"]![0]!["Document"]!["@metadata"]!.AsObject();
        Assert.Equal("x", (string?)sent["Owner"]);
        Assert.Equal("2027-01-01", (string?)sent["Expires"]);
        Assert.False(sent.ContainsKey("@id") || sent.ContainsKey("@change-vector") || sent.ContainsKey("@last-modified"), "server-managed metadata is not sent");
        using var other = _store.OpenAsyncSession();
        Assert.Equal("2027-01-01", other.Advanced.GetMetadataFor((await other.LoadAsync<User>("users/1"))!)["Expires"]);
    }

    [Fact]
    public async Task MetadataSetByOthersIsKeptWhenTheDocumentIsSaved()
    {
        _fake.Put(TestStores.Database, "users/1", new JsonObject { ["Name"] = "Ann", ["@metadata"] = new JsonObject { ["@collection"] = "People", ["Flag"] = 3 } });
        using var session = _store.OpenAsyncSession();
        var user = await session.LoadAsync<User>("users/1");

        user!.Age = 5;
        await session.SaveChangesAsync();

        var sent = _fake.Requests.Last().BodyJson["Commands"]![0]!["Document"]!["@metadata"]!.AsObject();
        Assert.Equal("People", (string?)sent["@collection"]);
        Assert.Equal(3, (int?)sent["Flag"]);
        Assert.NotNull(sent["Jackdaw-Clr-Type"]);
    }

    [Fact]
    public async Task LoadUsesTheStoredClrTypeForASubtype()
    {
        using (var session = _store.OpenAsyncSession())
        {
            await session.StoreAsync(new Employee { Id = "employees/1", Name = "Ann", Department = "R&D" });
            await session.SaveChangesAsync();
        }

        using (var session = _store.OpenAsyncSession())
        {
            var user = await session.LoadAsync<User>("employees/1");
            Assert.Equal("R&D", Assert.IsType<Employee>(user).Department);
        }
    }

    [Fact]
    public async Task LoadAsAnAbstractBaseTypeReturnsTheStoredSubtype()
    {
        using (var session = _store.OpenAsyncSession())
        {
            await session.StoreAsync(new Employee { Id = "employees/1", Name = "Ann", Department = "R&D" });
            await session.SaveChangesAsync();
        }

        using (var session = _store.OpenAsyncSession())
        {
            var person = await session.LoadAsync<PersonBase>("employees/1");
            Assert.Equal("R&D", Assert.IsType<Employee>(person).Department);
            Assert.False(session.Advanced.HasChanged(person));
        }
    }

    [Fact]
    public async Task LoadingADocumentOfAnUnrelatedStoredTypeThrows()
    {
        using (var session = _store.OpenAsyncSession())
        {
            await session.StoreAsync(new Company { Id = "companies/1", Name = "Acme" });
            await session.SaveChangesAsync();
        }

        using (var session = _store.OpenAsyncSession())
        {
            var error = await Assert.ThrowsAsync<InvalidOperationException>(() => session.LoadAsync<User>("companies/1"));
            Assert.Contains("Company", error.Message);
        }
    }

    [Fact]
    public async Task ATypeWithoutASettableIdKeepsItsIdInTheSession()
    {
        using var session = _store.OpenAsyncSession();
        var widget = new Widget { Color = "red" };
        await session.StoreAsync(widget);
        await session.SaveChangesAsync();

        Assert.Equal("widgets/0000000000000000001-A", session.Advanced.GetDocumentId(widget));
        Assert.Null(widget.Key);
    }

    [Fact]
    public async Task AGetOnlyIdPropertyIsReadButNotWritten()
    {
        using var session = _store.OpenAsyncSession();
        await session.StoreAsync(new ReadOnlyId("things/1") { Value = "v" });
        await session.SaveChangesAsync();

        Assert.Equal("things/1", (string?)_fake.Requests.Single().BodyJson["Commands"]![0]!["Id"]);
    }

    [Fact]
    public async Task ChangesAcrossSessionsAreSeparateUnitsOfWork()
    {
        using (var session = _store.OpenAsyncSession())
        {
            await session.StoreAsync(new User { Id = "users/1", Name = "Ann" });
            await session.SaveChangesAsync();
        }

        using (var session = _store.OpenAsyncSession())
        {
            var user = await session.LoadAsync<User>("users/1");
            Assert.Equal("Ann", user!.Name);
            Assert.Equal("users/1", user.Id);
        }
    }
}
