using Jackdaw.Client.Tests.Infrastructure;

namespace Jackdaw.Client.Tests.Integration;

/// <summary>Map-reduce indexes from code, and typed queries on their results, against the real server.</summary>
public sealed class MapReduceServerTests(ServerFixture server) : IClassFixture<ServerFixture>
{
    [Fact]
    public async Task AMapReduceIndexFromCodeAnswersTypedQueriesOnItsResults()
    {
        using var store = await server.NewStoreAsync();
        var orders = await QueryServerTests.StoreCorpusAsync(store);
        var deployed = await new Orders_ByCompany("CorpusOrders").ExecuteAsync(store);
        var expected = Model(orders);
        using var session = store.OpenAsyncSession();

        var busy = await session.Query<Orders_ByCompany.Result>("Orders/ByCompany")
            .Customize(x => x.WaitForNonStaleResults(ServerFixture.IndexingWait))
            .Statistics(out var stats)
            .Where(x => x.Count > 1)
            .OrderByDescending(x => x.Total)
            .ToListAsync();

        Assert.Equal(IndexDeploymentOutcome.Created, deployed.Outcome);
        var wanted = expected.Values.Where(r => r.Count > 1).OrderByDescending(r => r.Total).ToList();
        Assert.NotEmpty(wanted);
        Assert.Equal(wanted.Select(r => (r.Company, r.Count)), busy.Select(r => (r.Company, r.Count)));
        Assert.All(busy.Zip(wanted), pair => Assert.Equal(pair.Second.Total, pair.First.Total, 6));
        Assert.Equal("Orders/ByCompany", stats.IndexName);
        Assert.False(stats.IsStale);
        Assert.Equal(wanted.Count, stats.TotalResults);

        // The rows are no documents: the session neither tracks them nor sends them back.
        Assert.False(session.Advanced.HasChanges);
        busy[0].Count = -1;
        Assert.False(session.Advanced.HasChanges);

        var company = orders[7].Company;
        var one = await session.Query<Orders_ByCompany.Result>("Orders/ByCompany")
            .Customize(x => x.WaitForNonStaleResults(ServerFixture.IndexingWait))
            .Where(x => x.Company == company)
            .SingleAsync();
        Assert.Equal((company, expected[company].Count), (one.Company, one.Count));
        Assert.Equal(expected[company].Total, one.Total, 6);
    }

    [Fact]
    public async Task ARawQueryReadsMapReduceRowsAsItsResultType()
    {
        using var store = await server.NewStoreAsync();
        var orders = await QueryServerTests.StoreCorpusAsync(store);
        await new Orders_ByCompany("CorpusOrders").ExecuteAsync(store);
        var expected = Model(orders);
        using var session = store.OpenAsyncSession();

        // Halfway between two totals of the model, so that no rounding decides a row.
        var totals = expected.Values.Select(r => r.Total).Order().ToList();
        var threshold = (totals[totals.Count / 2] + totals[(totals.Count / 2) + 1]) / 2;

        var rows = await session.Advanced.AsyncRawQuery<Orders_ByCompany.Result>("from index 'Orders/ByCompany' where Total > $t order by Total as double desc")
            .AddParameter("t", threshold)
            .WaitForNonStaleResults(ServerFixture.IndexingWait)
            .ToListAsync();

        Assert.Equal(expected.Values.Where(r => r.Total > threshold).OrderByDescending(r => r.Total).Select(r => r.Company), rows.Select(r => r.Company));
    }

    [Fact]
    public async Task ResultsFollowUpdatesAndDeletesOfTheOrders()
    {
        using var store = await server.NewStoreAsync();
        var orders = await QueryServerTests.StoreCorpusAsync(store);
        await new Orders_ByCompany("CorpusOrders").ExecuteAsync(store);
        var from = orders[0].Company;
        var to = orders.First(o => o.Company != from).Company;
        using (var write = store.OpenAsyncSession())
        {
            var moved = await write.LoadAsync<CorpusOrder>(orders[0].Id!);
            moved!.Company = to;
            write.Delete(orders[1].Id!);
            await write.SaveChangesAsync();
        }

        orders[0].Company = to;
        orders.RemoveAt(1);
        var expected = Model(orders);
        using var session = store.OpenAsyncSession();
        var rows = await session.Query<Orders_ByCompany.Result>("Orders/ByCompany")
            .Customize(x => x.WaitForNonStaleResults(ServerFixture.IndexingWait))
            .Where(x => x.Company == from || x.Company == to)
            .ToListAsync();

        Assert.Equal(
            expected.Values.Where(r => r.Company == from || r.Company == to).OrderBy(r => r.Company, StringComparer.Ordinal).Select(r => (r.Company, r.Count)),
            rows.OrderBy(r => r.Company, StringComparer.Ordinal).Select(r => (r.Company, r.Count)));
    }

    [Fact]
    public async Task TheReduceAndItsOutputAreSentReadBackAndComparedOnRedeployment()
    {
        using var store = await server.NewStoreAsync();
        var task = new Orders_ByCompany("CorpusOrders")
        {
            OutputReduceToCollection = "CompanyTotals",
            PatternForOutputReduceToCollectionReferences = "reports/orders/{Company}",
            PatternReferencesCollectionName = "CompanyTotalReferences",
        };

        var created = await task.ExecuteAsync(store);
        var again = await task.ExecuteAsync(store);
        var definition = Assert.Single(await store.Maintenance.GetIndexesAsync());
        var renamed = await new Orders_ByCompany("CorpusOrders")
        {
            OutputReduceToCollection = "companytotals",
            PatternForOutputReduceToCollectionReferences = "reports/orders/{Company}",
            PatternReferencesCollectionName = "CompanyTotalReferences",
        }.ExecuteAsync(store);
        var withoutOutput = await new Orders_ByCompany("CorpusOrders").ExecuteAsync(store);

        Assert.Equal((IndexDeploymentOutcome.Created, IndexDeploymentOutcome.Unchanged), (created.Outcome, again.Outcome));
        Assert.Equal(IndexType.JavaScriptMapReduce, definition.Type);
        Assert.Equal(task.Maps, definition.Maps);
        Assert.Equal(task.Reduce, definition.Reduce);
        Assert.Equal(
            ("CompanyTotals", "reports/orders/{Company}", "CompanyTotalReferences"),
            (definition.OutputReduceToCollection, definition.PatternForOutputReduceToCollectionReferences, definition.PatternReferencesCollectionName));

        // Collection names ignore case, as the server compares them; dropping the output changes the index.
        Assert.Equal(IndexDeploymentOutcome.Unchanged, renamed.Outcome);
        Assert.Equal(IndexDeploymentOutcome.Replaced, withoutOutput.Outcome);
    }

    [Fact]
    public async Task AnIndexThatWritesIntoACollectionItMapsIsRefused()
    {
        using var store = await server.NewStoreAsync();

        var error = await Assert.ThrowsAsync<IndexCompilationException>(() =>
            new Orders_ByCompany("CorpusOrders") { OutputReduceToCollection = "CorpusOrders" }.ExecuteAsync(store));

        Assert.Contains("OutputReduceToCollection", error.Message, StringComparison.Ordinal);
    }

    private static Dictionary<string, Orders_ByCompany.Result> Model(IEnumerable<CorpusOrder> orders) =>
        orders.GroupBy(o => o.Company).ToDictionary(g => g.Key, g => new Orders_ByCompany.Result
        {
            Company = g.Key,
            Count = g.Count(),
            Total = g.Sum(o => o.Lines.Sum(l => (double)l.PricePerUnit * l.Quantity)),
        });
}
