using System.Net;
using System.Text.Json.Nodes;
using Jackdaw.Client.Tests.Infrastructure;
using Jackdaw.Client.Tests.Integration;

namespace Jackdaw.Client.Tests.Queries;

/// <summary>What the client does with the server's answers: tracking, includes, projections, statistics, the execution methods and errors.</summary>
public sealed class QueryExecutionTests : QuerySender
{
    private static JsonObject UserDocument(string id, string name, int age = 30) =>
        FakeJackdaw.Document(id, "Users", new JsonObject { ["Name"] = name, ["Age"] = age, ["Tags"] = new JsonArray(), ["Address"] = null });

    private void Answer(params JsonObject[] results) => Fake.AnswerQuery = _ => FakeJackdaw.QueryResult(results);

    [Fact]
    public async Task QueriedDocumentsAreDeserializedWithTheirIds()
    {
        Answer(UserDocument("users/1", "Ann", 31), UserDocument("users/2", "Bob", 42));

        var users = await Session.Query<User>().ToListAsync();

        Assert.Equal([("users/1", "Ann", 31), ("users/2", "Bob", 42)], users.Select(u => (u.Id, u.Name, u.Age)));
    }

    [Fact]
    public async Task AQueriedDocumentIsTheSameInstanceAsTheLoadedOneAndLoadingItAfterMakesNoRequest()
    {
        Fake.Put(TestStores.Database, "users/1", new JsonObject { ["Name"] = "Ann", ["@metadata"] = new JsonObject { ["@collection"] = "Users" } });
        var loaded = await Session.LoadAsync<User>("users/1");
        Answer(UserDocument("users/1", "Ann (newer)"), UserDocument("users/2", "Bob"));

        var queried = await Session.Query<User>().ToListAsync();
        var again = await Session.Query<User>().ToListAsync();
        var bob = await Session.LoadAsync<User>("users/2");

        Assert.Same(loaded, queried[0]);
        Assert.Equal("Ann", queried[0].Name);
        Assert.Same(queried[1], again[1]);
        Assert.Same(queried[1], bob);
        Assert.Equal(3, Session.Advanced.NumberOfRequests);
        Assert.True(Session.Advanced.IsLoaded("users/2"));
    }

    [Fact]
    public async Task AQueriedDocumentIsChangeTrackedAndSavedWhenChanged()
    {
        Answer(UserDocument("users/1", "Ann"), UserDocument("users/2", "Bob"));
        var users = await Session.Query<User>().ToListAsync();
        Assert.False(Session.Advanced.HasChanges);
        Assert.Equal("A:1-users/1", Session.Advanced.GetChangeVectorFor(users[0]));

        users[1].Age = 99;
        await Session.SaveChangesAsync();

        var save = Fake.RequestsTo("/bulk_docs").Single().BodyJson;
        var command = Assert.Single(save["Commands"]!.AsArray())!;
        Assert.Equal("users/2", (string?)command["Id"]);
        Assert.Equal(99, (int)command["Document"]!["Age"]!);
        Assert.Equal("Users", (string?)command["Document"]!["@metadata"]!["@collection"]);
        Assert.Equal(99, (int)Fake.Stored(TestStores.Database, "users/2")!["Age"]!);
    }

    [Fact]
    public async Task ADocumentLoadedAsAnotherTypeCannotBeQueriedAsThisOne()
    {
        Fake.Put(TestStores.Database, "users/1", new JsonObject { ["Name"] = "Ann" });
        await Session.LoadAsync<Company>("users/1");
        Answer(UserDocument("users/1", "Ann"));

        var error = await Assert.ThrowsAsync<InvalidOperationException>(() => Session.Query<User>().ToListAsync());

        Assert.Contains("users/1", error.Message, StringComparison.Ordinal);
        Assert.Contains(nameof(Company), error.Message, StringComparison.Ordinal);
    }

    [Fact]
    public async Task ADocumentDeletedInTheSessionComesBackUntrackedAndStaysDeleted()
    {
        Fake.Put(TestStores.Database, "users/1", new JsonObject { ["Name"] = "Ann" });
        Session.Delete("users/1");
        Answer(UserDocument("users/1", "Ann"));

        var users = await Session.Query<User>().ToListAsync();
        await Session.SaveChangesAsync();

        Assert.Equal("Ann", Assert.Single(users).Name);
        Assert.Null(Fake.Stored(TestStores.Database, "users/1"));
    }

    [Fact]
    public async Task IncludedDocumentsJoinTheSessionSoLoadingThemMakesNoRequest()
    {
        Fake.AnswerQuery = _ => FakeJackdaw.QueryResult(
            [FakeJackdaw.Document("articles/1", "Articles", new JsonObject { ["title"] = "News", ["Author"] = "users/7" }), FakeJackdaw.Document("articles/2", "Articles", new JsonObject { ["title"] = "Old", ["Author"] = "users/8" })],
            new JsonObject { ["users/7"] = UserDocument("users/7", "Ann"), ["users/8"] = null });

        var articles = await Session.Query<Article>().Include(x => x.Author).ToListAsync();
        Assert.True(Session.Advanced.IsLoaded("users/7"));
        var author = await Session.LoadAsync<User>(articles[0].Author!);
        var missing = await Session.LoadAsync<User>("users/8");
        var both = await Session.LoadAsync<User>(["USERS/7", "users/8"]);

        Assert.Equal("Ann", author!.Name);
        Assert.Equal("users/7", author.Id);
        Assert.Null(missing);
        Assert.Same(author, both["USERS/7"]);
        Assert.Equal(1, Session.Advanced.NumberOfRequests);
        Assert.Single(Fake.Requests);

        author.Age = 5;
        await Session.SaveChangesAsync();
        Assert.Equal("users/7", (string?)Fake.RequestsTo("/bulk_docs").Single().BodyJson["Commands"]![0]!["Id"]);
    }

    [Fact]
    public async Task IncludedDocumentsInAManyLoadAreTakenAndOnlyTheRestFetched()
    {
        Fake.Put(TestStores.Database, "users/9", new JsonObject { ["Name"] = "Cid" });
        Fake.AnswerQuery = _ => FakeJackdaw.QueryResult([], new JsonObject { ["users/7"] = UserDocument("users/7", "Ann") });
        await Session.Query<Article>().Include(x => x.Author).ToListAsync();

        var users = await Session.LoadAsync<User>(["users/7", "users/9"]);

        Assert.Equal("Ann", users["users/7"]!.Name);
        Assert.Equal("Cid", users["users/9"]!.Name);
        Assert.Equal("/databases/db/docs?id=users%2F9", Fake.RequestsTo("/docs").Single().PathAndQuery);
    }

    [Fact]
    public async Task ProjectionsAreReadIntoTheirTypeWithTheIdFromMetadataAndAreNotTracked()
    {
        Fake.AnswerQuery = _ => FakeJackdaw.QueryResult([
            new JsonObject { ["Company"] = "companies/1-A", ["City"] = "Lyon", ["@metadata"] = new JsonObject { ["@id"] = "orders/1-A", ["@projection"] = true } },
            new JsonObject { ["Company"] = "companies/2-A", ["City"] = null, ["@metadata"] = new JsonObject { ["@id"] = "orders/2-A", ["@projection"] = true } },
        ]);

        var anonymous = await Session.Query<CorpusOrder>().Select(x => new { x.Id, x.Company, City = x.ShipTo.City }).ToListAsync();
        var dtos = await Session.Query<CorpusOrder>().Select(x => new OrderSummary { Id = x.Id, Company = x.Company, City = x.ShipTo.City }).ToListAsync();
        var records = await Session.Query<CorpusOrder>().Select(x => new CompanyCity(x.Company, x.ShipTo.City)).ToListAsync();

        Assert.Equal(("orders/1-A", "companies/1-A", "Lyon"), (anonymous[0].Id, anonymous[0].Company, anonymous[0].City));
        Assert.Equal(("orders/2-A", "companies/2-A", (string?)null), (dtos[1].Id, dtos[1].Company, dtos[1].City));
        Assert.Equal(new CompanyCity("companies/1-A", "Lyon"), records[0]);
        Assert.False(Session.Advanced.IsLoaded("orders/1-A"));
        Assert.False(Session.Advanced.HasChanges);
    }

    [Fact]
    public async Task ASingleMemberProjectionReadsThatFieldOrTheId()
    {
        Fake.AnswerQuery = _ => FakeJackdaw.QueryResult([
            new JsonObject { ["Company"] = "companies/1-A", ["@metadata"] = new JsonObject { ["@id"] = "orders/1-A", ["@projection"] = true } },
        ]);

        Assert.Equal(["companies/1-A"], await Session.Query<CorpusOrder>().Select(x => x.Company).ToListAsync());
        Assert.Equal(["orders/1-A"], await Session.Query<CorpusOrder>().Select(x => x.Id).ToListAsync());
    }

    [Fact]
    public async Task NoTrackingReturnsDocumentsTheSessionDoesNotKeep()
    {
        Answer(UserDocument("users/1", "Ann"));

        var first = await Session.Query<User>().Customize(x => x.NoTracking()).SingleAsync();
        var second = await Session.Query<User>().Customize(x => x.NoTracking()).SingleAsync();

        Assert.Equal("users/1", first.Id);
        Assert.NotSame(first, second);
        Assert.False(Session.Advanced.IsLoaded("users/1"));
    }

    [Fact]
    public async Task StatisticsAreFilledFromTheAnswer()
    {
        Fake.AnswerQuery = _ => FakeJackdaw.QueryResult([UserDocument("users/1", "Ann")], total: 40, indexName: "Users/ByNameAndAge", isStale: true);

        await Session.Query<User>().Statistics(out var stats).Where(x => x.Age > 1).Take(1).ToListAsync();

        Assert.Equal(40, stats.TotalResults);
        Assert.Equal(40, stats.LongTotalResults);
        Assert.Equal(0, stats.SkippedResults);
        Assert.True(stats.IsStale);
        Assert.Equal("Users/ByNameAndAge", stats.IndexName);
        Assert.Equal(7, stats.DurationInMs);
        Assert.Equal(123, stats.ResultEtag);
        Assert.Equal("A", stats.NodeTag);
        Assert.Equal(new DateTime(2026, 11, 23, 10, 0, 0, DateTimeKind.Utc), stats.IndexTimestamp);
        Assert.Equal(DateTimeKind.Utc, stats.IndexTimestamp.Kind);
        Assert.Equal(new DateTime(2026, 11, 23, 10, 0, 1, DateTimeKind.Utc), stats.LastQueryTime);
        Assert.NotEqual(default, stats.Timestamp);
    }

    [Fact]
    public async Task CountAsksForNoResultsAndReadsTheTotalLessSkipAtMostTake()
    {
        Fake.AnswerQuery = _ => FakeJackdaw.QueryResult([], total: 40);

        Assert.Equal(40, await Session.Query<User>().Where(x => x.Age > 1).CountAsync());
        AssertLastQuery("from 'Users' where Age > $p0 limit 0", """{"p0":1}""");
        Assert.Equal(40L, await Session.Query<User>().LongCountAsync());
        Assert.Equal(30, await Session.Query<User>().Skip(10).CountAsync());
        Assert.Equal(5, await Session.Query<User>().Skip(10).Take(5).CountAsync());
        Assert.Equal(0, await Session.Query<User>().Skip(50).CountAsync());
        Assert.Equal(40, await Session.Query<User>().CountAsync(x => x.Name == "Ann"));
        AssertLastQuery("from 'Users' where Name = $p0 limit 0", """{"p0":"Ann"}""");
    }

    [Fact]
    public async Task AnyIsWhetherTheTotalIsAboveZero()
    {
        Fake.AnswerQuery = _ => FakeJackdaw.QueryResult([], total: 0);
        Assert.False(await Session.Query<User>().AnyAsync());
        Fake.AnswerQuery = _ => FakeJackdaw.QueryResult([], total: 2);
        Assert.True(await Session.Query<User>().AnyAsync(x => x.Age == 3));
        AssertLastQuery("from 'Users' where Age = $p0 limit 0", """{"p0":3}""");
        Assert.False(await Session.Query<User>().Skip(2).AnyAsync());
    }

    [Fact]
    public async Task FirstAsksForOneResultAndSingleForTwo()
    {
        Answer(UserDocument("users/1", "Ann"));

        Assert.Equal("Ann", (await Session.Query<User>().FirstAsync()).Name);
        AssertLastQuery("from 'Users' limit 1");
        Assert.Equal("Ann", (await Session.Query<User>().Where(x => x.Age > 2).Skip(3).FirstOrDefaultAsync())!.Name);
        AssertLastQuery("from 'Users' where Age > $p0 limit 1 offset 3", """{"p0":2}""");
        Assert.Equal("Ann", (await Session.Query<User>().SingleAsync(x => x.Name == "Ann")).Name);
        AssertLastQuery("from 'Users' where Name = $p0 limit 2", """{"p0":"Ann"}""");
        Assert.Equal("Ann", (await Session.Query<User>().SingleOrDefaultAsync())!.Name);
        await Session.Query<User>().Take(1).SingleAsync();
        AssertLastQuery("from 'Users' limit 1");
    }

    [Fact]
    public async Task FirstAndSingleThrowWhereLinqDoesAndTheOrDefaultsGiveNull()
    {
        Answer();
        Assert.Null(await Session.Query<User>().FirstOrDefaultAsync());
        Assert.Null(await Session.Query<User>().SingleOrDefaultAsync());
        await Assert.ThrowsAsync<InvalidOperationException>(() => Session.Query<User>().FirstAsync());
        await Assert.ThrowsAsync<InvalidOperationException>(() => Session.Query<User>().SingleAsync());

        Answer(UserDocument("users/1", "Ann"), UserDocument("users/2", "Bob"));
        var error = await Assert.ThrowsAsync<InvalidOperationException>(() => Session.Query<User>().SingleOrDefaultAsync());
        Assert.Contains("more than one", error.Message, StringComparison.Ordinal);
    }

    [Fact]
    public async Task ToArrayAsyncReturnsTheResults()
    {
        Answer(UserDocument("users/1", "Ann"));

        var users = await Session.Query<User>().ToArrayAsync();

        Assert.Equal("Ann", Assert.Single(users).Name);
    }

    [Theory]
    [InlineData(HttpStatusCode.BadRequest, "InvalidQueryException", typeof(InvalidQueryException))]
    [InlineData(HttpStatusCode.NotFound, "IndexDoesNotExistException", typeof(IndexDoesNotExistException))]
    [InlineData(HttpStatusCode.RequestTimeout, "TimeoutException", typeof(ServerTimeoutException))]
    [InlineData(HttpStatusCode.NotImplemented, "FeatureNotSupportedException", typeof(JackdawException))]
    public async Task QueryErrorsBecomeTheirExceptions(HttpStatusCode status, string type, Type expected)
    {
        Fake.Intercept = r => r.PathAndQuery.EndsWith("/queries", StringComparison.Ordinal) ? FakeJackdaw.Error(status, type, "the server's words") : null;

        var error = await Assert.ThrowsAnyAsync<JackdawException>(() => Session.Query<User>("Nope").Customize(x => x.WaitForNonStaleResults()).ToListAsync());

        Assert.IsType(expected, error);
        Assert.Equal(status, error.StatusCode);
        Assert.Equal(type, error.ServerErrorType);
        Assert.Equal("the server's words", error.Message);
    }

    [Fact]
    public async Task AnAnswerThatIsNotAQueryResultIsReported()
    {
        Fake.Intercept = r => r.PathAndQuery.EndsWith("/queries", StringComparison.Ordinal) ? FakeJackdaw.Json(HttpStatusCode.OK, new JsonObject { ["Something"] = 1 }) : null;

        var error = await Assert.ThrowsAsync<JackdawException>(() => Session.Query<User>().ToListAsync());

        Assert.Contains("Results", error.Message, StringComparison.Ordinal);
    }

    [Fact]
    public async Task AResultWithoutMetadataCannotBeTracked()
    {
        Fake.AnswerQuery = _ => FakeJackdaw.QueryResult([new JsonObject { ["Name"] = "Ann" }]);

        var error = await Assert.ThrowsAsync<JackdawException>(() => Session.Query<User>().ToListAsync());

        Assert.Contains("@metadata", error.Message, StringComparison.Ordinal);
    }

    [Fact]
    public async Task AQueryRunsAgainEachTimeItIsExecuted()
    {
        var query = Session.Query<User>().Where(x => x.Age > 1);
        await query.ToListAsync();
        await query.CountAsync();

        Assert.Equal(2, Fake.RequestsTo("/queries").Count);
        Assert.Equal(2, Session.Advanced.NumberOfRequests);
    }
}
