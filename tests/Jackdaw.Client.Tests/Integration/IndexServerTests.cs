using Jackdaw.Client.Tests.Infrastructure;

namespace Jackdaw.Client.Tests.Integration;

/// <summary>Indexes from code and index maintenance against the real server.</summary>
public sealed class IndexServerTests(ServerFixture server) : IClassFixture<ServerFixture>
{
    [Fact]
    public async Task AnIndexFromCodeAnswersQueriesAndReportsItsStatistics()
    {
        using var store = await server.NewStoreAsync();
        var orders = await QueryServerTests.StoreCorpusAsync(store);
        await new Orders_Totals().ExecuteAsync(store);
        var company = orders[11].Company;
        using var session = store.OpenAsyncSession();

        var found = await session.Query<CorpusOrder, Orders_Totals>()
            .Customize(x => x.WaitForNonStaleResults(ServerFixture.IndexingWait))
            .Statistics(out var stats)
            .Where(x => x.Company == company)
            .OrderByDescending(x => x.Freight)
            .ToListAsync();

        Assert.Equal(orders.Where(x => x.Company == company).OrderByDescending(x => x.Freight).Select(x => x.Id), found.Select(x => x.Id));
        Assert.Equal("Orders/Totals", stats.IndexName);
        Assert.False(stats.IsStale);
        Assert.Same(found[0], await session.LoadAsync<CorpusOrder>(found[0].Id!));

        var statistics = Assert.Single(await store.Maintenance.GetIndexStatisticsAsync(), s => s.Name == "Orders/Totals");
        Assert.Equal(orders.Count, statistics.EntriesCount);
        Assert.Equal(orders.Count, statistics.MapAttempts);
        Assert.Equal(0, statistics.MapErrors);
        Assert.Equal(IndexState.Normal, statistics.State);
        Assert.False(statistics.IsStale);
        Assert.NotNull(statistics.LastQueryingTime);

        var definition = Assert.Single(await store.Maintenance.GetIndexesAsync(), d => d.Name == "Orders/Totals");
        Assert.Equal(new Orders_Totals().Maps, definition.Maps);
        Assert.Equal((FieldIndexing.Exact, FieldStorage.Yes), (definition.Fields["Company"].Indexing, definition.Fields["Company"].Storage));
    }

    [Fact]
    public async Task CreateIndexesCreatesEveryIndexTaskOfTheAssembly()
    {
        using var store = await server.NewStoreAsync();

        var created = await IndexCreation.CreateIndexesAsync(typeof(Orders_Totals).Assembly, store);
        var again = await IndexCreation.CreateIndexesAsync(typeof(Orders_Totals).Assembly, store);

        Assert.Equal(["Orders/Totals", "Users/Search", "Users/ByNameAndAge"], created.Select(d => d.Name));
        Assert.All(created, d => Assert.Equal(IndexDeploymentOutcome.Created, d.Outcome));
        Assert.Equal(created.Select(d => d.Name), again.Select(d => d.Name));
        Assert.All(again, d => Assert.Equal(IndexDeploymentOutcome.Unchanged, d.Outcome));
        Assert.Equal(created.Select(d => d.Name).Order(), (await store.Maintenance.GetIndexesAsync()).Select(d => d.Name).Order());
    }

    [Fact]
    public async Task ASearchIndexFindsUsersByTheWordsOfTheirNames()
    {
        using var store = await server.NewStoreAsync();
        await new UsersSearch().ExecuteAsync(store);
        await QueryServerTests.StoreAsync(store, new User { Id = "users/1", Name = "Ann Marie Smith" }, new User { Id = "users/2", Name = "Bob Smith" }, new User { Id = "users/3", Name = "Cid" });
        using var session = store.OpenAsyncSession();

        var smiths = await session.Query<User, UsersSearch>().Customize(x => x.WaitForNonStaleResults()).Search(x => x.Name, "smith").ToListAsync();
        var ann = await session.Query<User, UsersSearch>().Customize(x => x.WaitForNonStaleResults()).Search(x => x.Name, "marie smith", SearchOperator.And).ToListAsync();

        Assert.Equal(["users/1", "users/2"], smiths.Select(u => u.Id).Order());
        Assert.Equal(["users/1"], ann.Select(u => u.Id));
    }

    [Fact]
    public async Task MapErrorsAreReportedAndResetAndDeleteWork()
    {
        using var store = await server.NewStoreAsync();
        await QueryServerTests.StoreAsync(store, new User { Id = "users/1", Name = "Ann", Address = new Address { City = "Oslo" } }, new User { Id = "users/2", Name = "Bob" });
        await store.Maintenance.PutIndexesAsync(new IndexDefinition { Name = "Users/ByCity", Maps = ["map('Users', u => ({ City: u.Address.City }))"] });
        using (var session = store.OpenAsyncSession())
        {
            // The index's field is City, not the document's Address.City: a raw query names it.
            var oslo = await session.Advanced.AsyncRawQuery<User>("from index 'Users/ByCity' where City = $city").AddParameter("city", "Oslo").WaitForNonStaleResults().ToListAsync();
            Assert.Equal(["users/1"], oslo.Select(u => u.Id));
        }

        var errors = Assert.Single(await store.Maintenance.GetIndexErrorsAsync(), e => e.Name == "Users/ByCity");
        var error = Assert.Single(errors.Errors);
        Assert.Equal("users/2", error.Document);
        Assert.False(string.IsNullOrEmpty(error.Error));
        Assert.Equal(1, Assert.Single(await store.Maintenance.GetIndexStatisticsAsync()).MapErrors);

        await store.Maintenance.ResetIndexAsync("Users/ByCity");
        await store.Maintenance.DeleteIndexAsync("Users/ByCity");

        Assert.Empty(await store.Maintenance.GetIndexesAsync());
        await Assert.ThrowsAsync<IndexDoesNotExistException>(() => store.Maintenance.DeleteIndexAsync("Users/ByCity"));
        await Assert.ThrowsAsync<IndexDoesNotExistException>(() => store.Maintenance.ResetIndexAsync("Users/ByCity"));
    }

    [Fact]
    public async Task AMapTheServerCannotCompileThrowsIndexCompilationException()
    {
        using var store = await server.NewStoreAsync();

        var error = await Assert.ThrowsAsync<IndexCompilationException>(() =>
            store.Maintenance.PutIndexesAsync(new IndexDefinition { Name = "Broken", Maps = ["map('Users', u => ({ Name: u.Name )"] }));

        Assert.Contains("Broken", error.Message, StringComparison.Ordinal);
        Assert.Empty(await store.Maintenance.GetIndexesAsync());
    }
}
