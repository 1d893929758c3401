using Jackdaw.Client.Tests.Infrastructure;

namespace Jackdaw.Client.Tests.Integration;

/// <summary>
/// Queries against the real server: collections and ids, and through its auto-indexes where on
/// fields, order by, search and projections, checked against LINQ to objects over the corpus.
/// </summary>
public sealed class QueryServerTests(ServerFixture server) : IClassFixture<ServerFixture>
{
    private const int CorpusSample = 2_000;

    [Fact]
    public async Task AQueryReturnsTheCollectionsDocumentsAsTheSessionsTrackedInstances()
    {
        using var store = await server.NewStoreAsync();
        await StoreAsync(store, new User { Id = "users/1", Name = "Ann", Age = 31 }, new User { Id = "users/2", Name = "Bob", Age = 42 }, new Company { Id = "companies/1", Name = "Acme" });

        using (var session = store.OpenAsyncSession())
        {
            var ann = await session.LoadAsync<User>("users/1");
            var users = await session.Query<User>().Statistics(out var stats).ToListAsync();

            Assert.Equal(["users/1", "users/2"], users.Select(u => u.Id).Order());
            Assert.Same(ann, users.Single(u => u.Id == "users/1"));
            Assert.Equal(2, stats.TotalResults);
            Assert.False(stats.IsStale);
            Assert.NotNull(stats.IndexName);
            Assert.NotNull(stats.ResultEtag);
            Assert.False(session.Advanced.HasChanges);

            users.Single(u => u.Id == "users/2").Age = 43;
            await session.SaveChangesAsync();
            Assert.Equal(3, session.Advanced.NumberOfRequests);
        }

        using (var check = store.OpenAsyncSession())
        {
            Assert.Equal(43, (await check.LoadAsync<User>("users/2"))!.Age);
        }
    }

    [Fact]
    public async Task AWhereOnTheIdAnswersWithoutAnIndex()
    {
        using var store = await server.NewStoreAsync();
        await StoreAsync(store, new User { Id = "users/1", Name = "Ann" }, new User { Id = "users/2", Name = "Bob" });
        using var session = store.OpenAsyncSession();

        var bob = await session.Query<User>().Where(x => x.Id == "users/2").SingleAsync();
        var none = await session.Query<User>().FirstOrDefaultAsync(x => x.Id == "users/404");
        var either = await session.Query<User>().Where(x => x.Id == "users/1" || x.Id == "users/2").CountAsync();
        var prefixed = await session.Query<User>().Where(x => x.Id!.StartsWith("users/")).CountAsync();

        Assert.Equal("Bob", bob.Name);
        Assert.Null(none);
        Assert.Equal(2, either);
        Assert.Equal(2, prefixed);
    }

    [Fact]
    public async Task SkipAndTakePageTheResultsInWriteOrder()
    {
        using var store = await server.NewStoreAsync();
        for (var i = 1; i <= 5; i++)
        {
            await StoreAsync(store, new User { Id = $"users/{i}", Name = $"User {i}" });
        }

        using var session = store.OpenAsyncSession();
        var page = await session.Query<User>().Statistics(out var stats).Skip(1).Take(2).ToListAsync();
        var rest = await session.Query<User>().Skip(3).ToListAsync();

        Assert.Equal(["users/2", "users/3"], page.Select(u => u.Id));
        Assert.Equal(["users/4", "users/5"], rest.Select(u => u.Id));
        Assert.Equal(5, stats.TotalResults);
        Assert.Equal(5, await session.Query<User>().CountAsync());
        Assert.Equal(2, await session.Query<User>().Skip(3).CountAsync());
        Assert.True(await session.Query<User>().AnyAsync());
        Assert.False(await session.Query<Company>().AnyAsync());
        Assert.Equal("users/1", (await session.Query<User>().FirstAsync()).Id);
    }

    [Fact]
    public async Task IncludedDocumentsAreLoadedWithoutAnotherRequest()
    {
        using var store = await server.NewStoreAsync();
        await StoreAsync(
            store,
            new User { Id = "users/7", Name = "Ann" },
            new Article { Id = "articles/1", Title = "News", Author = "users/7" },
            new Article { Id = "articles/2", Title = "Gone", Author = "users/404" });
        using var session = store.OpenAsyncSession();

        var articles = await session.Query<Article>().Include(x => x.Author).ToListAsync();
        var author = await session.LoadAsync<User>("users/7");

        Assert.Equal(2, articles.Count);
        Assert.Equal("Ann", author!.Name);
        Assert.Equal(1, session.Advanced.NumberOfRequests);

        // The server leaves an included id without a document out of Includes, so the session asks.
        Assert.Null(await session.LoadAsync<User>("users/404"));
    }

    [Fact]
    public async Task ARawQueryOnTheIdTakesItsParameters()
    {
        using var store = await server.NewStoreAsync();
        await StoreAsync(store, new User { Id = "users/1", Name = "Ann" }, new User { Id = "users/2", Name = "Bob" });
        using var session = store.OpenAsyncSession();

        var bob = await session.Advanced.AsyncRawQuery<User>("from Users where id() = $id").AddParameter("id", "users/2").Statistics(out var stats).SingleAsync();
        var count = await session.Advanced.AsyncRawQuery<User>("from Users limit 1").CountAsync();

        Assert.Equal("Bob", bob.Name);
        Assert.Same(bob, await session.LoadAsync<User>("users/2"));
        Assert.Equal(1, stats.TotalResults);
        Assert.Equal(2, count);
    }

    [Fact]
    public async Task WaitingForNonStaleResultsOnACollectionAnswersAtOnce()
    {
        using var store = await server.NewStoreAsync();
        await StoreAsync(store, new User { Id = "users/1", Name = "Ann" });
        using var session = store.OpenAsyncSession();

        var users = await session.Query<User>().Customize(x => x.WaitForNonStaleResults(TimeSpan.FromSeconds(5))).Statistics(out var stats).ToListAsync();

        Assert.Single(users);
        Assert.False(stats.IsStale);
    }

    [Fact]
    public async Task ARawQueryTheServerCannotParseThrowsInvalidQueryExceptionWithThePosition()
    {
        using var store = await server.NewStoreAsync();
        using var session = store.OpenAsyncSession();

        var error = await Assert.ThrowsAsync<InvalidQueryException>(() => session.Advanced.AsyncRawQuery<User>("from Users where").ToListAsync());

        Assert.Equal(System.Net.HttpStatusCode.BadRequest, error.StatusCode);
        Assert.Contains("position", error.Message, StringComparison.Ordinal);
    }

    [Fact]
    public async Task AClientListOfIdsIsOneArrayParameterOfIn()
    {
        using var store = await server.NewStoreAsync();
        await StoreAsync(store, new User { Id = "users/1", Name = "Ann" }, new User { Id = "users/2", Name = "Bob" }, new User { Id = "users/3", Name = "Cid" });
        using var session = store.OpenAsyncSession();
        var ids = new[] { "users/1", "users/3", "users/404" };

        var users = await session.Query<User>().Customize(x => x.WaitForNonStaleResults()).Where(x => ids.Contains(x.Id)).ToListAsync();

        Assert.Equal(["Ann", "Cid"], users.Select(u => u.Name).Order());
    }

    [Fact]
    public async Task WhereOnFieldsMatchesLinqToObjectsOverTheCorpus()
    {
        using var store = await server.NewStoreAsync();
        var orders = await StoreCorpusAsync(store);
        var company = orders[17].Company;
        var city = orders[42].ShipTo.City;
        var product = orders[99].Lines[0].Product;
        var companies = orders.Take(30).Select(o => o.Company).Distinct().ToList();
        using var session = store.OpenAsyncSession();

        await AssertSameIdsAsync(session.Query<CorpusOrder>().Where(x => x.Company == company), orders.Where(x => x.Company == company));
        await AssertSameIdsAsync(session.Query<CorpusOrder>().Where(x => x.ShipTo.City == city && x.Valid), orders.Where(x => x.ShipTo.City == city && x.Valid));
        await AssertSameIdsAsync(session.Query<CorpusOrder>().Where(x => x.Freight > 500 || x.Freight < 1), orders.Where(x => x.Freight > 500 || x.Freight < 1));
        await AssertSameIdsAsync(session.Query<CorpusOrder>().Where(x => x.Lines.Any(l => l.Product == product)), orders.Where(x => x.Lines.Any(l => l.Product == product)));
        await AssertSameIdsAsync(session.Query<CorpusOrder>().Where(x => companies.Contains(x.Company) && !x.Valid), orders.Where(x => companies.Contains(x.Company) && !x.Valid));
        await AssertSameIdsAsync(session.Query<CorpusOrder>().Where(x => x.ShipTo.City.StartsWith("North")), orders.Where(x => x.ShipTo.City.StartsWith("North", StringComparison.OrdinalIgnoreCase)));
        await AssertSameIdsAsync(session.Query<CorpusOrder>().Where(x => x.ShippedAt == null), orders.Where(x => x.ShippedAt == null));
        var since = orders[5].OrderedAt;
        await AssertSameIdsAsync(session.Query<CorpusOrder>().Where(x => x.OrderedAt >= since), orders.Where(x => x.OrderedAt >= since));
    }

    [Fact]
    public async Task OrderByNumbersDatesAndStringsMatchesLinqToObjectsOverTheCorpus()
    {
        using var store = await server.NewStoreAsync();
        var orders = await StoreCorpusAsync(store);
        using var session = store.OpenAsyncSession();

        var byFreight = await session.Query<CorpusOrder>().Customize(x => x.WaitForNonStaleResults(ServerFixture.IndexingWait)).OrderByDescending(x => x.Freight).Take(50).ToListAsync();
        Assert.Equal(orders.OrderByDescending(x => x.Freight).Take(50).Select(x => x.Freight), byFreight.Select(x => x.Freight));

        var byDate = await session.Query<CorpusOrder>().Customize(x => x.WaitForNonStaleResults(ServerFixture.IndexingWait)).Where(x => x.Valid).OrderBy(x => x.OrderedAt).Skip(10).Take(20).ToListAsync();
        Assert.Equal(orders.Where(x => x.Valid).OrderBy(x => x.OrderedAt).Skip(10).Take(20).Select(x => x.OrderedAt), byDate.Select(x => x.OrderedAt));

        var byCity = await session.Query<CorpusOrder>().Customize(x => x.WaitForNonStaleResults(ServerFixture.IndexingWait)).OrderBy(x => x.ShipTo.City).ThenByDescending(x => x.Freight).Take(40).ToListAsync();
        Assert.Equal(
            orders.OrderBy(x => x.ShipTo.City.ToLowerInvariant(), StringComparer.Ordinal).ThenByDescending(x => x.Freight).Take(40).Select(x => (x.ShipTo.City, x.Freight)),
            byCity.Select(x => (x.ShipTo.City, x.Freight)));
    }

    [Fact]
    public async Task SearchFindsDocumentsByTheirWords()
    {
        using var store = await server.NewStoreAsync();
        await StoreAsync(
            store,
            new Article { Id = "articles/1", Title = "Birds", Body = "The jackdaw is a small crow" },
            new Article { Id = "articles/2", Title = "Ravens", Body = "A raven is larger than a crow" },
            new Article { Id = "articles/3", Title = "Fish", Body = "Trout and salmon" });
        using var session = store.OpenAsyncSession();

        var anyWord = await session.Query<Article>().Customize(x => x.WaitForNonStaleResults()).Search(x => x.Body, "jackdaw salmon").ToListAsync();
        var allWords = await session.Query<Article>().Customize(x => x.WaitForNonStaleResults()).Search(x => x.Body, "crow raven", SearchOperator.And).ToListAsync();
        var either = await session.Query<Article>().Customize(x => x.WaitForNonStaleResults()).Search(x => x.Body, "trout").Search(x => x.Title, "ravens").ToListAsync();

        Assert.Equal(["articles/1", "articles/3"], anyWord.Select(a => a.Id).Order());
        Assert.Equal(["articles/2"], allWords.Select(a => a.Id));
        Assert.Equal(["articles/2", "articles/3"], either.Select(a => a.Id).Order());
    }

    [Fact]
    public async Task ProjectionsReturnTheSelectedFieldsUntracked()
    {
        using var store = await server.NewStoreAsync();
        var orders = await StoreCorpusAsync(store);
        var company = orders[3].Company;
        using var session = store.OpenAsyncSession();

        var projected = await session.Query<CorpusOrder>().Customize(x => x.WaitForNonStaleResults(ServerFixture.IndexingWait)).Where(x => x.Company == company).Select(x => new { x.Id, x.Company, City = x.ShipTo.City }).ToListAsync();
        var summaries = await session.Query<CorpusOrder>().Customize(x => x.WaitForNonStaleResults(ServerFixture.IndexingWait)).Where(x => x.Company == company).Select(x => new OrderSummary { Id = x.Id, Company = x.Company, City = x.ShipTo.City }).ToListAsync();
        var cities = await session.Query<CorpusOrder>().Customize(x => x.WaitForNonStaleResults(ServerFixture.IndexingWait)).Where(x => x.Company == company).Select(x => x.ShipTo.City).ToListAsync();

        var expected = orders.Where(x => x.Company == company).Select(x => (x.Id, x.Company, x.ShipTo.City)).Order().ToList();
        Assert.Equal(expected, projected.Select(x => (x.Id, x.Company, x.City)).Order());
        Assert.Equal(expected, summaries.Select(x => (x.Id, x.Company, x.City!)).Order());
        Assert.Equal(expected.Select(x => x.City).Order(), cities.Order());
        Assert.False(session.Advanced.IsLoaded(expected[0].Id!));
    }

    [Fact]
    public async Task QueryingAMissingIndexThrowsIndexDoesNotExist()
    {
        using var store = await server.NewStoreAsync();
        using var session = store.OpenAsyncSession();

        var error = await Assert.ThrowsAsync<IndexDoesNotExistException>(() => session.Query<User>("Nope/Nothing").ToListAsync());

        Assert.Contains("Nope/Nothing", error.Message, StringComparison.Ordinal);
    }

    /// <summary>The first <see cref="CorpusSample"/> corpus orders, stored by bulk insert.</summary>
    internal static async Task<List<CorpusOrder>> StoreCorpusAsync(DocumentStore store)
    {
        var orders = CorpusOrder.ReadCorpus(store.Conventions.SerializerOptions).Take(CorpusSample).ToList();
        await using (var bulk = store.BulkInsert())
        {
            foreach (var order in orders)
            {
                await bulk.StoreAsync(order);
            }
        }

        return orders;
    }

    internal static async Task StoreAsync(DocumentStore store, params object[] entities)
    {
        using var session = store.OpenAsyncSession();
        foreach (var entity in entities)
        {
            await session.StoreAsync(entity);
        }

        await session.SaveChangesAsync();
    }

    private static async Task AssertSameIdsAsync(IJackdawQueryable<CorpusOrder> query, IEnumerable<CorpusOrder> expected)
    {
        var expectedIds = expected.Select(x => x.Id!).Order(StringComparer.Ordinal).ToList();
        Assert.NotEmpty(expectedIds);
        var actual = await query.Customize(x => x.WaitForNonStaleResults(ServerFixture.IndexingWait)).ToListAsync();
        Assert.Equal(expectedIds, actual.Select(x => x.Id!).Order(StringComparer.Ordinal));
    }
}
