using Jackdaw.Client.Tests.Infrastructure;

namespace Jackdaw.Client.Tests.Integration;

/// <summary>Replacements, locks, priorities, disabling, stopping, performance and errors through <c>store.Maintenance</c> against the real server.</summary>
public sealed class IndexOperationsServerTests(ServerFixture server) : IClassFixture<ServerFixture>
{
    private const string OldTotalsMap = "map('CorpusOrders', o => ({ Company: o.Company }))";

    private static async Task WaitUntilAsync(Func<Task<bool>> condition, string what)
    {
        var deadline = DateTime.UtcNow.AddSeconds(60);
        while (!await condition())
        {
            if (DateTime.UtcNow > deadline)
            {
                Assert.Fail("Timed out waiting until " + what);
            }

            await Task.Delay(50);
        }
    }

    private static async Task<IndexStats?> StatsAsync(DocumentStore store, string name) =>
        (await store.Maintenance.GetIndexStatisticsAsync()).SingleOrDefault(s => s.Name == name);

    private static async Task<int> CountByCityAsync(DocumentStore store, string city, bool wait)
    {
        using var session = store.OpenAsyncSession();
        var query = session.Advanced.AsyncRawQuery<CorpusOrder>("from index 'Orders/Totals' where City = $city").AddParameter("city", city);
        if (wait)
        {
            query = query.WaitForNonStaleResults(ServerFixture.IndexingWait);
        }

        return (await query.ToListAsync()).Count;
    }

    private static async Task<int> CountByCompanyAsync(DocumentStore store, string company, bool wait)
    {
        using var session = store.OpenAsyncSession();
        var query = session.Advanced.AsyncRawQuery<CorpusOrder>("from index 'Orders/Totals' where Company = $company").AddParameter("company", company);
        if (wait)
        {
            query = query.WaitForNonStaleResults(ServerFixture.IndexingWait);
        }

        return (await query.ToListAsync()).Count;
    }

    [Fact]
    public async Task AChangedIndexDeployedFromCodeIsReportedReplacedBuildsBesideTheOldOneAndSwapsIn()
    {
        using var store = await server.NewStoreAsync();
        var orders = await QueryServerTests.StoreCorpusAsync(store);
        var city = orders[5].ShipTo.City;
        var company = orders[5].Company;
        var ofCompany = orders.Count(o => o.Company == company);
        await store.Maintenance.PutIndexesAsync(new IndexDefinition { Name = "Orders/Totals", Maps = [OldTotalsMap] });
        Assert.Equal(ofCompany, await CountByCompanyAsync(store, company, wait: true));

        // The old definition has no City: querying it is how a test tells which definition answers.
        await Assert.ThrowsAsync<InvalidQueryException>(() => CountByCityAsync(store, city, wait: false));

        // Stopped, the replacement waits beside the index, which keeps answering with the old definition.
        await store.Maintenance.StopIndexingAsync();
        var deployed = await IndexCreation.CreateIndexesAsync(typeof(Orders_Totals).Assembly, store);

        Assert.Equal(
            [
                new IndexDeployment("Orders/Totals", IndexDeploymentOutcome.Replaced),
                new IndexDeployment("Users/Search", IndexDeploymentOutcome.Created),
                new IndexDeployment("Users/ByNameAndAge", IndexDeploymentOutcome.Created),
            ],
            deployed);
        var replacement = await StatsAsync(store, "ReplacementOf/Orders/Totals");
        Assert.NotNull(replacement);
        Assert.Equal(("Orders/Totals", IndexRunningStatus.Paused), (replacement.ReplacementOf, replacement.Status));
        Assert.Equal((0L, (long)orders.Count), (replacement.Progress!.ProcessedDocuments, replacement.Progress.TotalDocuments));
        Assert.Null((await StatsAsync(store, "Orders/Totals"))!.ReplacementOf);
        Assert.Equal(ofCompany, await CountByCompanyAsync(store, company, wait: false));
        await Assert.ThrowsAsync<InvalidQueryException>(() => CountByCityAsync(store, city, wait: false));

        // Deploying the same code again while it builds changes nothing more.
        Assert.Equal(IndexDeploymentOutcome.Replaced, (await new Orders_Totals().ExecuteAsync(store)).Outcome);

        await store.Maintenance.StartIndexingAsync();
        await WaitUntilAsync(async () => await StatsAsync(store, "ReplacementOf/Orders/Totals") is null, "the replacement swapped in");

        Assert.Equal(new Orders_Totals().Maps, Assert.Single(await store.Maintenance.GetIndexesAsync(), d => d.Name == "Orders/Totals").Maps);
        Assert.Equal(orders.Count(o => o.ShipTo.City == city), await CountByCityAsync(store, city, wait: true));
        Assert.Equal(IndexDeploymentOutcome.Unchanged, (await new Orders_Totals().ExecuteAsync(store)).Outcome);
    }

    [Fact]
    public async Task ReplaceIndexSwapsAReplacementInBeforeItHasCaughtUp()
    {
        using var store = await server.NewStoreAsync();
        await QueryServerTests.StoreCorpusAsync(store);
        await store.Maintenance.PutIndexesAsync(new IndexDefinition { Name = "Orders/Totals", Maps = [OldTotalsMap] });
        await store.Maintenance.StopIndexingAsync();
        await new Orders_Totals().ExecuteAsync(store);

        await store.Maintenance.ReplaceIndexAsync("Orders/Totals");

        Assert.Equal(["Orders/Totals"], (await store.Maintenance.GetIndexStatisticsAsync()).Select(s => s.Name));
        Assert.Equal(new Orders_Totals().Maps, Assert.Single(await store.Maintenance.GetIndexesAsync()).Maps);
        await Assert.ThrowsAsync<IndexDoesNotExistException>(() => store.Maintenance.ReplaceIndexAsync("Orders/Totals"));
        await store.Maintenance.StartIndexingAsync();
    }

    [Fact]
    public async Task ALockedIgnoreIndexKeepsItsDefinitionAndALockedErrorOneRefusesAChange()
    {
        using var store = await server.NewStoreAsync();
        await store.Maintenance.PutIndexesAsync(
            new IndexDefinition { Name = "Orders/Totals", Maps = [OldTotalsMap] },
            new IndexDefinition { Name = "Users/Search", Maps = ["map('Users', u => ({ Name: u.Name, Age: u.Age }))"] });

        await store.Maintenance.SetIndexLockAsync(IndexLockMode.LockedIgnore, "Orders/Totals");
        var ignored = await new Orders_Totals().ExecuteAsync(store);

        Assert.Equal(IndexDeploymentOutcome.Ignored, ignored.Outcome);
        Assert.Equal([OldTotalsMap], Assert.Single(await store.Maintenance.GetIndexesAsync(), d => d.Name == "Orders/Totals").Maps);
        Assert.Null(await StatsAsync(store, "ReplacementOf/Orders/Totals"));
        Assert.Equal(IndexLockMode.LockedIgnore, (await StatsAsync(store, "Orders/Totals"))!.LockMode);

        await store.Maintenance.SetIndexLockAsync(IndexLockMode.LockedError, "Orders/Totals", "Users/Search");
        var error = await Assert.ThrowsAsync<IndexLockedException>(() => IndexCreation.CreateIndexesAsync(typeof(Orders_Totals).Assembly, store));

        Assert.Contains("Orders/Totals", error.Message, StringComparison.Ordinal);
        // Nothing of the refused deployment was applied, not even the new index beside it.
        Assert.Equal(["Orders/Totals", "Users/Search"], (await store.Maintenance.GetIndexesAsync()).Select(d => d.Name).Order());
        // The definition it has is no change, so a locked index takes it.
        await store.Maintenance.PutIndexesAsync(new IndexDefinition { Name = "Orders/Totals", Maps = ["  " + OldTotalsMap] });

        await store.Maintenance.SetIndexLockAsync(IndexLockMode.Unlock, "Orders/Totals", "Users/Search");
        var replaced = await IndexCreation.CreateIndexesAsync(typeof(Orders_Totals).Assembly, store);

        Assert.Equal(
            [IndexDeploymentOutcome.Replaced, IndexDeploymentOutcome.Replaced, IndexDeploymentOutcome.Created],
            replaced.Select(d => d.Outcome));
    }

    [Fact]
    public async Task ADisabledIndexStopsIndexingUntilEnabled()
    {
        using var store = await server.NewStoreAsync();
        await new Users_ByNameAndAge().ExecuteAsync(store);
        await QueryServerTests.StoreAsync(store, new User { Id = "users/1", Name = "Ann", Age = 30 });

        await store.Maintenance.DisableIndexAsync("Users/ByNameAndAge");
        var disabled = (await StatsAsync(store, "Users/ByNameAndAge"))!;
        await QueryServerTests.StoreAsync(store, new User { Id = "users/2", Name = "Bob", Age = 40 });
        await store.Maintenance.EnableIndexAsync("Users/ByNameAndAge");
        var enabled = (await StatsAsync(store, "Users/ByNameAndAge"))!;

        Assert.Equal((IndexState.Disabled, IndexRunningStatus.Disabled), (disabled.State, disabled.Status));
        Assert.Equal((IndexState.Normal, IndexRunningStatus.Running), (enabled.State, enabled.Status));
        using var session = store.OpenAsyncSession();
        var users = await session.Query<User, Users_ByNameAndAge>().Customize(x => x.WaitForNonStaleResults(TimeSpan.FromSeconds(30))).Where(u => u.Age >= 30).ToListAsync();
        Assert.Equal(["users/1", "users/2"], users.Select(u => u.Id).Order());
        await Assert.ThrowsAsync<IndexDoesNotExistException>(() => store.Maintenance.DisableIndexAsync("Nope"));
    }

    [Fact]
    public async Task StoppedIndexingPausesEveryIndexUntilStarted()
    {
        using var store = await server.NewStoreAsync();
        await IndexCreation.CreateIndexesAsync(typeof(Orders_Totals).Assembly, store);

        await store.Maintenance.StopIndexingAsync();
        var stopped = await store.Maintenance.GetIndexStatisticsAsync();
        await QueryServerTests.StoreAsync(store, new User { Id = "users/1", Name = "Ann", Age = 30 });
        var staleWhileStopped = (await StatsAsync(store, "Users/ByNameAndAge"))!.IsStale;
        await store.Maintenance.StartIndexingAsync();

        Assert.Equal(3, stopped.Length);
        Assert.All(stopped, s => Assert.Equal(IndexRunningStatus.Paused, s.Status));
        Assert.True(staleWhileStopped);
        Assert.All(await store.Maintenance.GetIndexStatisticsAsync(), s => Assert.Equal(IndexRunningStatus.Running, s.Status));
        using var session = store.OpenAsyncSession();
        var users = await session.Query<User, Users_ByNameAndAge>().Customize(x => x.WaitForNonStaleResults(TimeSpan.FromSeconds(30))).Where(u => u.Age == 30).ToListAsync();
        Assert.Equal(["users/1"], users.Select(u => u.Id));
    }

    [Fact]
    public async Task PrioritiesAreSetPerIndexAndReported()
    {
        using var store = await server.NewStoreAsync();
        await IndexCreation.CreateIndexesAsync(typeof(Orders_Totals).Assembly, store);

        await store.Maintenance.SetIndexPriorityAsync(IndexPriority.High, "Orders/Totals", "Users/Search");
        await store.Maintenance.SetIndexPriorityAsync(IndexPriority.Low, "Users/ByNameAndAge");

        var priorities = (await store.Maintenance.GetIndexStatisticsAsync()).ToDictionary(s => s.Name, s => s.Priority);
        Assert.Equal(IndexPriority.High, priorities["Orders/Totals"]);
        Assert.Equal(IndexPriority.High, priorities["Users/Search"]);
        Assert.Equal(IndexPriority.Low, priorities["Users/ByNameAndAge"]);
        await Assert.ThrowsAsync<IndexDoesNotExistException>(() => store.Maintenance.SetIndexPriorityAsync(IndexPriority.Low, "Nope"));
    }

    [Fact]
    public async Task PerformanceStatisticsCountEveryDocumentIndexedAndTimeTheSteps()
    {
        using var store = await server.NewStoreAsync();
        var orders = await QueryServerTests.StoreCorpusAsync(store);
        await IndexCreation.CreateIndexesAsync(typeof(Orders_Totals).Assembly, store);
        Assert.Equal(0, await CountByCityAsync(store, "Nowhere", wait: true));
        // The waiting query returns once the last batch is searchable; the loop records that batch
        // in the performance history just after (Refresh, then Publish): wait for it.
        IndexPerformanceStats[] performance = [];
        await WaitUntilAsync(async () =>
        {
            performance = await store.Maintenance.GetIndexPerformanceAsync("Orders/Totals");
            return performance.Length != 1 || performance[0].Performance.Sum(b => b.InputCount) >= orders.Count;
        }, "the last batch of Orders/Totals is in its performance history");

        var all = await store.Maintenance.GetIndexPerformanceAsync();

        var totals = Assert.Single(performance);
        Assert.Equal("Orders/Totals", totals.Name);
        Assert.Equal(orders.Count, totals.Performance.Sum(b => b.InputCount));
        Assert.Equal(orders.Count, totals.Performance.Sum(b => b.OutputCount));
        Assert.All(totals.Performance, b => Assert.True(b.Completed >= b.Started));
        var busiest = totals.Performance.MaxBy(b => b.InputCount)!;
        Assert.True(busiest.DocumentsSize.SizeInBytes > 0);
        Assert.Equal("Indexing", busiest.Details.Name);
        Assert.Contains(busiest.Details.Flatten(), o => o.Name == "Map/CorpusOrders");
        Assert.Equal(["Orders/Totals", "Users/ByNameAndAge", "Users/Search"], all.Select(p => p.Name).Order());
        await Assert.ThrowsAsync<IndexDoesNotExistException>(() => store.Maintenance.GetIndexPerformanceAsync("Nope"));
    }

    [Fact]
    public async Task ErrorsOfOneIndexAreAskedForByName()
    {
        using var store = await server.NewStoreAsync();
        await QueryServerTests.StoreAsync(store, new User { Id = "users/1", Name = "Ann", Address = new Address { City = "Oslo" } }, new User { Id = "users/2", Name = "Bob" });
        await store.Maintenance.PutIndexesAsync(
            new IndexDefinition { Name = "Users/ByCity", Maps = ["map('Users', u => ({ City: u.Address.City }))"] },
            new IndexDefinition { Name = "Users/ByName", Maps = ["map('Users', u => ({ Name: u.Name }))"] });
        await WaitUntilAsync(async () => (await store.Maintenance.GetIndexStatisticsAsync()).All(s => !s.IsStale), "both indexes caught up");

        var errors = await store.Maintenance.GetIndexErrorsAsync("Users/ByCity");
        var byName = await store.Maintenance.GetIndexErrorsAsync("Users/ByName");

        var error = Assert.Single(Assert.Single(errors).Errors);
        Assert.Equal(("users/2", "Map"), (error.Document, error.Action));
        Assert.Contains("City", error.Error, StringComparison.Ordinal);
        Assert.Empty(Assert.Single(byName).Errors);
        await Assert.ThrowsAsync<IndexDoesNotExistException>(() => store.Maintenance.GetIndexErrorsAsync("Nope"));
    }

    [Fact]
    public async Task TestingAnIndexRunsTheQueryOverTheFirstDocumentsAndStoresNothing()
    {
        using var store = await server.NewStoreAsync();
        await QueryServerTests.StoreAsync(
            store,
            new User { Id = "users/1", Name = "Ann", Age = 31, Address = new Address { City = "Oslo" } },
            new User { Id = "users/2", Name = "Bob", Age = 25 },
            new User { Id = "users/3", Name = "Cid", Age = 40, Address = new Address { City = "Bergen" } },
            new User { Id = "users/4", Name = "Dan", Age = 50, Address = new Address { City = "Oslo" } });
        var definition = new IndexDefinition { Name = "Users/Try", Maps = ["map('Users', u => ({ Name: u.Name, Age: u.Age, City: u.Address.City }))"] };

        var result = await store.Maintenance.TestIndexAsync<User>(
            definition,
            "from index 'Users/Try' where Age >= $min",
            new Dictionary<string, object?> { ["min"] = 30 },
            maxDocuments: 3);

        Assert.Equal(("Users/Try", 3L), (result.IndexName, result.DocumentsProcessed));
        Assert.Equal(["users/1", "users/3"], result.QueryResults.Select(u => u.Id).Order());
        Assert.Equal(2, result.TotalResults);
        Assert.Equal("Ann", result.QueryResults.Single(u => u.Id == "users/1").Name);
        // The document the map failed on has an error instead of entries.
        Assert.Equal(["users/1", "users/3"], result.MapResults.Select(m => m.Document).Order());
        Assert.Contains("City", Assert.Single(result.MapResults.Single(m => m.Document == "users/1").Entries).Keys);
        Assert.Equal("users/2", Assert.Single(result.IndexErrors).Document);
        Assert.Empty(await store.Maintenance.GetIndexesAsync());
    }

    [Fact]
    public async Task TestingAnIndexThatDoesNotCompileOrAQueryOffTheIndexThrows()
    {
        using var store = await server.NewStoreAsync();

        await Assert.ThrowsAsync<IndexCompilationException>(() =>
            store.Maintenance.TestIndexAsync(new IndexDefinition { Name = "Users/Broken", Maps = ["map('Users', u => ({ Name: u.Name )"] }));
        await Assert.ThrowsAsync<InvalidQueryException>(() =>
            store.Maintenance.TestIndexAsync(new IndexDefinition { Name = "Users/Try", Maps = ["map('Users', u => ({ Name: u.Name }))"] }, "from Users"));
        Assert.Empty(await store.Maintenance.GetIndexesAsync());
    }

    [Fact]
    public async Task TheCleanupAdvisorFindsCoveredMergeableAndUnusedIndexes()
    {
        using var store = await server.NewStoreAsync();
        await QueryServerTests.StoreAsync(store, new User { Id = "users/1", Name = "Ann", Age = 31 });
        await store.Maintenance.PutIndexesAsync(
            new IndexDefinition { Name = "Users/ByName", Maps = ["map('Users', u => ({ Name: u.Name }))"] },
            new IndexDefinition { Name = "Users/ByAge", Maps = ["map('Users', u => ({ Age: u.Age }))"] });
        using (var session = store.OpenAsyncSession())
        {
            // A dynamic query makes an auto-index on Name, which the static Users/ByName covers.
            Assert.Single(await session.Query<User>().Customize(x => x.WaitForNonStaleResults()).Where(u => u.Name == "Ann").ToListAsync());
        }

        var advice = await store.Maintenance.GetIndexCleanupAsync();
        var unused = await store.Maintenance.GetIndexCleanupAsync(unusedFor: TimeSpan.Zero);

        var covered = Assert.Single(advice, a => a.Type == IndexCleanupType.Covered);
        Assert.StartsWith("Auto/Users/By", covered.Indexes[0], StringComparison.Ordinal);
        Assert.Equal("Users/ByName", covered.Indexes[1]);
        Assert.False(string.IsNullOrEmpty(covered.Reason));
        var mergeable = Assert.Single(advice, a => a.Type == IndexCleanupType.Mergeable);
        Assert.Equal(["Users/ByAge", "Users/ByName"], mergeable.Indexes);
        Assert.NotNull(mergeable.MergedDefinition);
        Assert.DoesNotContain(advice, a => a.Type == IndexCleanupType.Unused);
        Assert.Contains(unused, a => a.Type == IndexCleanupType.Unused && a.Indexes.SequenceEqual(["Users/ByAge"]));

        // The merged definition is one the server takes as it is.
        await store.Maintenance.PutIndexesAsync(mergeable.MergedDefinition!);
        Assert.Contains(await store.Maintenance.GetIndexesAsync(), d => d.Name == mergeable.MergedDefinition!.Name);
    }

    [Fact]
    public async Task ErrorsOfSeveralIndexesAreAskedForInOneRequest()
    {
        using var store = await server.NewStoreAsync();
        await store.Maintenance.PutIndexesAsync(
            new IndexDefinition { Name = "A", Maps = ["map('Users', u => ({ Name: u.Name }))"] },
            new IndexDefinition { Name = "B", Maps = ["map('Users', u => ({ Age: u.Age }))"] },
            new IndexDefinition { Name = "C", Maps = ["map('Users', u => ({ Tags: u.Tags }))"] });

        var errors = await store.Maintenance.GetIndexErrorsAsync("A", "C");

        Assert.Equal(["A", "C"], errors.Select(e => e.Name));
    }
}
