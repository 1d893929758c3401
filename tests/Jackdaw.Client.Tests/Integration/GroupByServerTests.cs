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

    [Fact]
    public async Task FilteredSortedAndPagedGroupsEqualLinqToObjectsOverTheCorpus()
    {
        using var store = await server.NewStoreAsync();
        var orders = await QueryServerTests.StoreCorpusAsync(store);
        using var session = store.OpenAsyncSession();

        var top = await session.Query<CorpusOrder>()
            .Customize(x => x.WaitForNonStaleResults(ServerFixture.IndexingWait))
            .GroupBy(x => x.Company)
            .Select(g => new { g.Key, Count = g.Count(), Total = g.Sum(x => x.Freight) })
            .Where(r => r.Count > 1)
            .OrderByDescending(r => r.Total).ThenBy(r => r.Key)
            .Skip(1).Take(3)
            .ToListAsync();
        var expectedTop = orders.GroupBy(x => x.Company)
            .Select(g => new { g.Key, Count = g.Count(), Total = g.Sum(x => x.Freight) })
            .Where(r => r.Count > 1)
            .OrderByDescending(r => r.Total).ThenBy(r => r.Key, StringComparer.Ordinal)
            .Skip(1).Take(3)
            .ToList();
        Assert.NotEmpty(expectedTop);
        Assert.Equal(expectedTop, top);

        // A Where before GroupBy on a group-by field, and a single value sorted as a number.
        var company = expectedTop[0].Key;
        var counts = await session.Query<CorpusOrder>()
            .Customize(x => x.WaitForNonStaleResults(ServerFixture.IndexingWait))
            .Where(x => x.Company != company)
            .GroupBy(x => new { x.Company, x.Employee })
            .Select(g => g.Count())
            .Where(v => v >= 1)
            .OrderByDescending(v => v)
            .ToListAsync();
        var expectedCounts = orders.Where(x => x.Company != company)
            .GroupBy(x => (x.Company, x.Employee))
            .Select(g => g.Count())
            .OrderByDescending(v => v)
            .ToList();
        Assert.Equal(expectedCounts, counts);
    }
}
