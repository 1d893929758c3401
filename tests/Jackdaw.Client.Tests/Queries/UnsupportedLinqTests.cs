using Jackdaw.Client.Tests.Infrastructure;
using Jackdaw.Client.Tests.Integration;

namespace Jackdaw.Client.Tests.Queries;

/// <summary>LINQ that RQL cannot say fails before any request, naming what it could not translate.</summary>
public sealed class UnsupportedLinqTests : QuerySender
{
    public static TheoryData<string, Func<IJackdawQueryable<User>, IQueryable<object>>, string> Unsupported => new()
    {
        { "GroupBy without a Select", q => q.GroupBy(x => x.Name).Select(g => (object)g.First()), "cannot be translated in a group-by query" },
        { "a whole composite key", q => q.GroupBy(x => new { x.Name, x.Age }).Select(g => (object)g.Key), "member by member" },
        { "Where between GroupBy and Select", q => q.GroupBy(x => x.Name).Where(g => g.Count() > 1).Select(g => (object)g.Key), "Where between GroupBy and its Select" },
        { "OrderBy between GroupBy and Select", q => q.GroupBy(x => x.Name).OrderBy(g => g.Key).Select(g => (object)g.Key), "OrderBy between GroupBy and its Select" },
        { "Where before GroupBy on another field", q => q.Where(x => x.Age > 30).GroupBy(x => x.Name).Select(g => (object)g.Key), "reads Age, which is not a group-by field" },
        { "Where before GroupBy on the id", q => q.Where(x => x.Id == "users/1").GroupBy(x => x.Name).Select(g => (object)g.Key), "reads id(), which is not a group-by field" },
        { "Search before GroupBy on another field", q => q.Search(x => x.Tags, "a").GroupBy(x => x.Name).Select(g => (object)g.Key), "Search before GroupBy" },
        { "OrderBy before GroupBy", q => q.OrderBy(x => x.Age).GroupBy(x => x.Name).Select(g => (object)g.Key), "OrderBy before GroupBy" },
        { "Where after a group-by Take", q => q.GroupBy(x => x.Name).Select(g => new { g.Key, Count = g.Count() }).Take(5).Where(r => r.Count > 1).Select(r => (object)r), "Where after Skip or Take" },
        { "Join", q => q.Join(new List<Company>().AsQueryable(), u => u.Name, c => c.Name, (u, c) => (object)u), "Join" },
        { "Distinct", q => q.Distinct().Select(x => (object)x), "Distinct" },
        { "SelectMany", q => q.SelectMany(x => x.Tags).Select(x => (object)x), "SelectMany" },
        { "Reverse", q => q.Reverse().Select(x => (object)x), "Reverse" },
        { "string.Contains", q => q.Where(x => x.Name.Contains("nn")).Select(x => (object)x), "string.Contains" },
        { "an untranslatable method", q => q.Where(x => x.Name.ToUpperInvariant() == "ANN").Select(x => (object)x), "ToUpperInvariant" },
        { "two fields compared", q => q.Where(x => x.Name == x.Id).Select(x => (object)x), "compares two fields" },
        { "a collection's Count", q => q.Where(x => x.Tags.Count > 1).Select(x => (object)x), "Count" },
        { "Where after Take", q => q.Take(5).Where(x => x.Age > 1).Select(x => (object)x), "Where after Skip or Take" },
        { "OrderBy after Skip", q => q.Skip(5).OrderBy(x => x.Age).Select(x => (object)x), "OrderBy after Skip or Take" },
        { "Where after Select", q => q.Select(x => new { x.Name }).Where(x => x.Name == "a").Select(x => (object)x), "Where after Select" },
        { "a computed projection", q => q.Select(x => (object)(x.Age + 1)), "is not a document field" },
        { "a nested projection", q => q.Select(x => new { Inner = new { x.Name } }).Select(x => (object)x), "is not a document field" },
        { "an ordering comparer", q => q.OrderBy(x => x.Name, StringComparer.Ordinal).Select(x => (object)x), "comparer" },
        { "Where with an index", q => q.Where((x, i) => i > 1).Select(x => (object)x), "element index" },
        { "Any without a predicate", q => q.Where(x => x.Tags.Any()).Select(x => (object)x), "Any" },
        { "StartsWith with a comparison", q => q.Where(x => x.Name.StartsWith("a", StringComparison.Ordinal)).Select(x => (object)x), "StartsWith(string)" },
        { "a condition that is always false", q => q.Where(x => false).Select(x => (object)x), "always false" },
    };

    [Theory]
    [MemberData(nameof(Unsupported))]
    public async Task UntranslatableLinqThrowsNotSupportedNamingTheConstructWithoutARequest(string construct, Func<IJackdawQueryable<User>, IQueryable<object>> build, string named)
    {
        var error = await Assert.ThrowsAsync<NotSupportedException>(() => build(Session.Query<User>()).ToListAsync());

        Assert.Contains(named, error.Message, StringComparison.Ordinal);
        Assert.Empty(Fake.Requests);
        Assert.NotEmpty(construct);
    }

    [Fact]
    public async Task AnIgnoredMemberCannotBeQueriedBecauseDocumentsDoNotHaveIt()
    {
        var error = await Assert.ThrowsAsync<NotSupportedException>(() => Session.Query<Article>().Where(x => x.Draft == "x").ToListAsync());

        Assert.Contains("Article.Draft", error.Message, StringComparison.Ordinal);
        Assert.Contains("JsonIgnore", error.Message, StringComparison.Ordinal);
    }

    [Fact]
    public void SynchronousExecutionThrowsNotSupportedPointingToTheAsyncMethods()
    {
        var query = Session.Query<User>().Where(x => x.Age > 1);

        Assert.Contains("ToListAsync", Assert.Throws<NotSupportedException>(() => query.ToList()).Message, StringComparison.Ordinal);
        Assert.Throws<NotSupportedException>(() => query.Count());
        Assert.Throws<NotSupportedException>(() => query.FirstOrDefault());
        Assert.Throws<NotSupportedException>(() =>
        {
            foreach (var user in query)
            {
                Assert.Fail(user.Name);
            }
        });
        Assert.Empty(Fake.Requests);
    }

    [Fact]
    public async Task TheAsyncMethodsRefuseQueryablesThatAreNotJackdawQueries()
    {
        var error = await Assert.ThrowsAsync<InvalidOperationException>(() => new List<User>().AsQueryable().ToListAsync());

        Assert.Contains("IAsyncDocumentSession.Query<T>()", error.Message, StringComparison.Ordinal);
    }

    [Fact]
    public async Task ASecondSelectThrows()
    {
        var error = await Assert.ThrowsAsync<NotSupportedException>(() =>
            Session.Query<CorpusOrder>().Select(x => new { x.Company, x.Freight }).Select(x => new { x.Company }).ToListAsync());

        Assert.Contains("second Select", error.Message, StringComparison.Ordinal);
    }
}
