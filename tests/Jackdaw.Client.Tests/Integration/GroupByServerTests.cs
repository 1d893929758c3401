namespace Jackdaw.Client.Tests.Integration;

/// <summary>LINQ GroupBy against the real server: the totals equal LINQ to objects over the same corpus orders.</summary>
public sealed class GroupByServerTests(ServerFixture server) : IClassFixture<ServerFixture>
{
    [Fact]
    public async Task GroupByTotalsEqualLinqToObjectsOverTheCorpus()
    {
        using var store = await server.NewStoreAsync();
        var orders = await QueryServerTests.StoreCorpusAsync(store);
        using var session = store.OpenAsyncSession();

        var totals = await session.Query<CorpusOrder>()
            .Customize(x => x.WaitForNonStaleResults(ServerFixture.IndexingWait))
            .GroupBy(x => x.Company)
            .Select(g => new { g.Key, Count = g.Count(), Total = g.Sum(x => x.Freight) })
            .ToListAsync();
        var expected = orders.GroupBy(x => x.Company).ToDictionary(g => g.Key, g => (Count: g.Count(), Total: g.Sum(x => x.Freight)));
        Assert.Equal(expected.Count, totals.Count);
        Assert.All(totals, t => Assert.Equal(expected[t.Key], (t.Count, t.Total)));

        var pairs = await session.Query<CorpusOrder>()
            .Customize(x => x.WaitForNonStaleResults(ServerFixture.IndexingWait))
            .GroupBy(x => new { x.Company, x.Employee })
            .Select(g => new { g.Key.Company, g.Key.Employee, Orders = g.LongCount() })
            .ToListAsync();
        var expectedPairs = orders.GroupBy(x => (x.Company, x.Employee)).ToDictionary(g => g.Key, g => g.LongCount());
        Assert.Equal(expectedPairs.Count, pairs.Count);
        Assert.All(pairs, p => Assert.Equal(expectedPairs[(p.Company, p.Employee)], p.Orders));
    }
}
