using System.Text.Json.Nodes;
using Jackdaw.Client.Tests.Infrastructure;

namespace Jackdaw.Client.Tests.Queries;

public sealed class RawQueryTests : QuerySender
{
    [Fact]
    public async Task TheTextIsSentAsWrittenWithItsParameters()
    {
        await Session.Advanced.AsyncRawQuery<User>("from Users where Name = $name and Age > $age")
            .AddParameter("name", "Ann")
            .AddParameter("$age", 30)
            .ToListAsync();

        var body = Fake.RequestsTo("/queries").Single().Body;
        Assert.Equal("""{"Query":"from Users where Name = $name and Age > $age","QueryParameters":{"name":"Ann","age":30},"WaitForNonStaleResults":false}""", body);
    }

    [Fact]
    public void AParameterCannotBeGivenTwice()
    {
        var query = Session.Advanced.AsyncRawQuery<User>("from Users where Name = $name").AddParameter("name", "a");

        Assert.Throws<ArgumentException>(() => query.AddParameter("$name", "b"));
    }

    [Fact]
    public async Task WaitForNonStaleResultsAndStatisticsWork()
    {
        Fake.AnswerQuery = _ => FakeJackdaw.QueryResult([], total: 3, indexName: "Users/Search");

        await Session.Advanced.AsyncRawQuery<User>("from index 'Users/Search'").WaitForNonStaleResults(TimeSpan.FromMinutes(1)).Statistics(out var stats).ToListAsync();

        Assert.True((bool)LastQuery["WaitForNonStaleResults"]!);
        Assert.Equal("00:01:00", (string?)LastQuery["WaitForNonStaleResultsTimeout"]);
        Assert.Equal(3, stats.TotalResults);
        Assert.Equal("Users/Search", stats.IndexName);
    }

    [Fact]
    public async Task DocumentsAreTrackedAndProjectionsAreNot()
    {
        Fake.AnswerQuery = _ => FakeJackdaw.QueryResult([
            FakeJackdaw.Document("users/1", "Users", new JsonObject { ["Name"] = "Ann" }),
            new JsonObject { ["Name"] = "Bob", ["@metadata"] = new JsonObject { ["@id"] = "users/2", ["@projection"] = true } },
            new JsonObject { ["Name"] = "Cid" },
        ]);

        var users = await Session.Advanced.AsyncRawQuery<User>("from Users select Name").ToListAsync();

        Assert.Equal([("users/1", "Ann"), ("users/2", "Bob"), (null, "Cid")], users.Select(u => (u.Id, u.Name)));
        Assert.True(Session.Advanced.IsLoaded("users/1"));
        Assert.False(Session.Advanced.IsLoaded("users/2"));
        Assert.Same(users[0], await Session.LoadAsync<User>("users/1"));
    }

    [Fact]
    public async Task EachResultIsReadWhereverItsMetadataLiesAndAsItsStoredType()
    {
        var employee = FakeJackdaw.Document("users/3", "Users", new JsonObject { ["Name"] = "Eve", ["Department"] = "R&D" });
        employee["@metadata"]!["Jackdaw-Clr-Type"] = DocumentConventions.DefaultFindClrTypeName(typeof(Employee));
        Fake.AnswerQuery = _ => FakeJackdaw.QueryResult([
            new JsonObject { ["@metadata"] = new JsonObject { ["@id"] = "users/1", ["@change-vector"] = "A:1-x" }, ["Name"] = "Ann" },
            new JsonObject { ["Name"] = "Bob", ["@metadata"] = new JsonObject { ["@projection"] = true, ["@id"] = "users/2" }, ["Age"] = 40 },
            employee,
            new JsonObject { ["Name"] = "Cid", ["@metadata"] = new JsonObject { ["@projection"] = new JsonObject { ["@id"] = "x" }, ["@id"] = "users/4" } },
        ]);

        var tracked = await Session.Advanced.AsyncRawQuery<User>("from Users").ToListAsync();
        using var other = Store.OpenAsyncSession();
        var untracked = await other.Advanced.AsyncRawQuery<User>("from Users").NoTracking().ToListAsync();

        foreach (var users in new[] { tracked, untracked })
        {
            Assert.Equal([("users/1", "Ann"), ("users/2", "Bob"), ("users/3", "Eve"), ("users/4", "Cid")], users.Select(u => (u.Id, u.Name)));
            Assert.Equal(40, users[1].Age);
            Assert.Equal("R&D", Assert.IsType<Employee>(users[2]).Department);
        }

        Assert.True(Session.Advanced.IsLoaded("users/1"));
        Assert.False(Session.Advanced.IsLoaded("users/2"));
        Assert.Same(tracked[2], await Session.LoadAsync<User>("users/3"));
        Assert.True(Session.Advanced.IsLoaded("users/4"));
        Assert.False(other.Advanced.IsLoaded("users/1"));
    }

    [Fact]
    public async Task CountAndAnyReadTheTotalFirstAndSingleTheResults()
    {
        Fake.AnswerQuery = _ => FakeJackdaw.QueryResult([FakeJackdaw.Document("users/1", "Users", new JsonObject { ["Name"] = "Ann" })], total: 12);
        var query = Session.Advanced.AsyncRawQuery<User>("from Users limit 1");

        Assert.Equal(12, await query.CountAsync());
        Assert.True(await query.AnyAsync());
        Assert.Equal("Ann", (await query.FirstAsync()).Name);
        Assert.Equal("Ann", (await query.SingleAsync()).Name);
        Assert.All(Fake.RequestsTo("/queries"), r => Assert.Equal("from Users limit 1", (string?)r.BodyJson["Query"]));

        Fake.AnswerQuery = _ => FakeJackdaw.QueryResult([]);
        Assert.Null(await query.FirstOrDefaultAsync());
        Assert.Null(await query.SingleOrDefaultAsync());
        await Assert.ThrowsAsync<InvalidOperationException>(() => query.FirstAsync());
    }

    [Fact]
    public async Task NoTrackingKeepsDocumentsOutOfTheSession()
    {
        Fake.AnswerQuery = _ => FakeJackdaw.QueryResult([FakeJackdaw.Document("users/1", "Users", new JsonObject { ["Name"] = "Ann" })]);

        var user = await Session.Advanced.AsyncRawQuery<User>("from Users").NoTracking().SingleAsync();

        Assert.Equal("users/1", user.Id);
        Assert.False(Session.Advanced.IsLoaded("users/1"));
    }

    [Fact]
    public async Task AnInvalidQueryIsReportedWithTheServersMessage()
    {
        Fake.Intercept = r => r.PathAndQuery.EndsWith("/queries", StringComparison.Ordinal)
            ? FakeJackdaw.Error(System.Net.HttpStatusCode.BadRequest, "InvalidQueryException", "Invalid query at position 5 (line 1, column 6): expected a collection name")
            : null;

        var error = await Assert.ThrowsAsync<InvalidQueryException>(() => Session.Advanced.AsyncRawQuery<User>("from ").ToListAsync());

        Assert.Contains("position 5", error.Message, StringComparison.Ordinal);
    }
}
