using Jackdaw.Client.Tests.Infrastructure;

namespace Jackdaw.Client.Tests.Integration;

/// <summary>
/// Lazy operations against the real server: loads and queries recorded in a session and sent in one
/// <c>multi_get</c>, their results joining the session as ordinary loads and queries do.
/// </summary>
public sealed class LazyServerTests(ServerFixture server) : IClassFixture<ServerFixture>
{
    private async Task<DocumentStore> StoreWithUsersAsync(int count = 5)
    {
        var store = await server.NewStoreAsync();
        var users = Enumerable.Range(1, count).Select(i => (object)new User { Id = $"users/{i}", Name = $"user {i}", Age = 20 + i });
        await QueryServerTests.StoreAsync(store, [.. users]);
        return store;
    }

    [Fact]
    public async Task LazyLoadsQueriesAndCountsGoInOneRequestAndJoinTheSession()
    {
        using var store = await StoreWithUsersAsync();
        using var session = store.OpenAsyncSession();

        var one = session.Advanced.Lazily.LoadAsync<User>("users/1");
        var several = session.Advanced.Lazily.LoadAsync<User>(["users/2", "users/3", "users/404"]);
        var older = session.Query<User>().Where(u => u.Age > 23).OrderBy(u => u.Age).LazilyAsync();
        var count = session.Query<User>().CountLazilyAsync();
        var countOfSome = session.Query<User>().Skip(1).Take(2).CountLazilyAsync();
        Assert.False(one.IsValueCreated);
        Assert.Equal(0, session.Advanced.NumberOfRequests);

        await session.Advanced.Eagerly.ExecuteAllPendingLazyOperationsAsync();
        Assert.Equal(1, session.Advanced.NumberOfRequests);

        var user1 = await one.Value;
        Assert.Equal("user 1", user1!.Name);
        var loaded = await several.Value;
        Assert.Equal(22, loaded["users/2"]!.Age);
        Assert.Null(loaded["USERS/404"]);
        Assert.Equal(["user 4", "user 5"], (await older.Value).Select(u => u.Name));
        Assert.Equal(5, await count.Value);
        Assert.Equal(2, await countOfSome.Value);
        Assert.Equal(1, session.Advanced.NumberOfRequests);

        // As loaded and queried documents: the same instances, known misses, no further request.
        Assert.Same(user1, await session.LoadAsync<User>("users/1"));
        Assert.Same((await older.Value).First(), await session.LoadAsync<User>("users/4"));
        Assert.Null(await session.LoadAsync<User>("users/404"));
        Assert.Equal(1, session.Advanced.NumberOfRequests);

        user1.Name = "changed lazily";
        await session.SaveChangesAsync();
        using var check = store.OpenAsyncSession();
        Assert.Equal("changed lazily", (await check.LoadAsync<User>("users/1"))!.Name);
    }

    [Fact]
    public async Task AwaitingOneLazyValueRunsEveryPendingOperation()
    {
        using var store = await StoreWithUsersAsync(3);
        using var session = store.OpenAsyncSession();

        var second = session.Advanced.Lazily.LoadAsync<User>("users/2");
        var third = session.Advanced.Lazily.LoadAsync<User>("users/3");
        Assert.Equal("user 3", (await third.Value)!.Name);
        Assert.Equal(1, session.Advanced.NumberOfRequests);
        Assert.False(second.IsValueCreated);
        Assert.Equal("user 2", (await second.Value)!.Name);
        Assert.Equal(1, session.Advanced.NumberOfRequests);

        // Nothing pending: no request.
        await session.Advanced.Eagerly.ExecuteAllPendingLazyOperationsAsync();
        Assert.Equal(1, session.Advanced.NumberOfRequests);
    }

    [Fact]
    public async Task WhatTheSessionHoldsIsAnsweredWithoutTheServer()
    {
        using var store = await StoreWithUsersAsync(3);
        using var session = store.OpenAsyncSession();
        var user1 = await session.LoadAsync<User>("users/1");
        Assert.Null(await session.LoadAsync<User>("users/404"));
        Assert.Equal(2, session.Advanced.NumberOfRequests);

        var again = session.Advanced.Lazily.LoadAsync<User>("users/1");
        var missing = session.Advanced.Lazily.LoadAsync<User>(["users/404", "users/1"]);
        Assert.Same(user1, await again.Value);
        Assert.Null((await missing.Value)["users/404"]);
        Assert.Equal(2, session.Advanced.NumberOfRequests);

        // An id loaded between the lazy call and the batch is not asked again: only users/3 is.
        var mixed = session.Advanced.Lazily.LoadAsync<User>(["users/2", "users/3"]);
        var user2 = await session.LoadAsync<User>("users/2");
        var values = await mixed.Value;
        Assert.Same(user2, values["users/2"]);
        Assert.Equal("user 3", values["users/3"]!.Name);
        Assert.Equal(4, session.Advanced.NumberOfRequests);
    }

    [Fact]
    public async Task AFailingOperationFailsAloneAndExecuteAllThrowsItsError()
    {
        using var store = await StoreWithUsersAsync(2);
        using var session = store.OpenAsyncSession();

        var user = session.Advanced.Lazily.LoadAsync<User>("users/1");
        var broken = session.Advanced.AsyncRawQuery<User>("from Users where").LazilyAsync();
        var noIndex = session.Query<User>("NoSuchIndex").LazilyAsync();
        var count = session.Advanced.AsyncRawQuery<User>("from Users").CountLazilyAsync();

        await Assert.ThrowsAsync<InvalidQueryException>(() => session.Advanced.Eagerly.ExecuteAllPendingLazyOperationsAsync());
        Assert.Equal(1, session.Advanced.NumberOfRequests);
        Assert.Equal("user 1", (await user.Value)!.Name);
        await Assert.ThrowsAsync<InvalidQueryException>(() => broken.Value);
        await Assert.ThrowsAsync<IndexDoesNotExistException>(() => noIndex.Value);
        Assert.Equal(2, await count.Value);
    }

    [Fact]
    public async Task AnOperationThatCannotReadItsAnswerFailsAloneAndTheNextItemsAreRead()
    {
        using var store = await StoreWithUsersAsync(2);
        await QueryServerTests.StoreAsync(store, new Company { Id = "companies/1", Name = "Acme" });

        using (var session = store.OpenAsyncSession())
        {
            // companies/1 is stored as a Company: read as a User it fails in the middle of the answer.
            var wrongType = session.Advanced.Lazily.LoadAsync<User>(["companies/1", "users/1"]);
            var after = session.Query<User>().Where(u => u.Age > 21).LazilyAsync();
            var last = session.Advanced.Lazily.LoadAsync<Company>("companies/1");
            await Assert.ThrowsAsync<InvalidOperationException>(() => session.Advanced.Eagerly.ExecuteAllPendingLazyOperationsAsync());

            await Assert.ThrowsAsync<InvalidOperationException>(() => wrongType.Value);
            Assert.Equal(["user 2"], (await after.Value).Select(u => u.Name));
            Assert.Equal("Acme", (await last.Value)!.Name);
            Assert.Equal(1, session.Advanced.NumberOfRequests);
        }

        using (var session = store.OpenAsyncSession())
        {
            // Held by the session as another type: that operation fails, the others have their values.
            var company = await session.LoadAsync<Company>("companies/1");
            var heldAsAnother = session.Advanced.Lazily.LoadAsync<User>(["companies/1", "users/2"]);
            var user = session.Advanced.Lazily.LoadAsync<User>("users/1");
            await Assert.ThrowsAsync<InvalidOperationException>(() => session.Advanced.Eagerly.ExecuteAllPendingLazyOperationsAsync());
            await Assert.ThrowsAsync<InvalidOperationException>(() => heldAsAnother.Value);
            Assert.Equal("user 1", (await user.Value)!.Name);
            Assert.Same(company, await session.LoadAsync<Company>("companies/1"));
        }
    }

    [Fact]
    public async Task AMissingDatabaseFailsEveryPendingOperation()
    {
        using var store = await server.NewStoreAsync();
        using var session = store.OpenAsyncSession("no-such-database");

        var first = session.Advanced.Lazily.LoadAsync<User>("users/1");
        var second = session.Query<User>().LazilyAsync();
        await Assert.ThrowsAsync<DatabaseDoesNotExistException>(() => session.Advanced.Eagerly.ExecuteAllPendingLazyOperationsAsync());
        await Assert.ThrowsAsync<DatabaseDoesNotExistException>(() => first.Value);
        await Assert.ThrowsAsync<DatabaseDoesNotExistException>(() => second.Value);
        Assert.Equal(1, session.Advanced.NumberOfRequests);
    }

    [Fact]
    public async Task ALazyQueryKeepsItsIncludesAndFillsItsStatistics()
    {
        using var store = await server.NewStoreAsync();
        await QueryServerTests.StoreAsync(
            store,
            new Company { Id = "companies/1", Name = "Acme" },
            new Order { Id = "orders/1", Customer = "companies/1", Total = 10 },
            new Order { Id = "orders/2", Customer = "companies/1", Total = 20 });
        using var session = store.OpenAsyncSession();

        var orders = session.Query<Order>().Statistics(out var stats).Include(o => o.Customer).Where(o => o.Total > 15).LazilyAsync();
        var raw = session.Advanced.AsyncRawQuery<Order>("from Orders where Total < $max").AddParameter("max", 15).Statistics(out var rawStats).LazilyAsync();
        await session.Advanced.Eagerly.ExecuteAllPendingLazyOperationsAsync();

        Assert.Equal(["orders/2"], (await orders.Value).Select(o => o.Id));
        Assert.Equal(["orders/1"], (await raw.Value).Select(o => o.Id));
        Assert.Equal(1, stats.TotalResults);
        Assert.Equal(1, rawStats.TotalResults);
        Assert.Equal("Acme", (await session.LoadAsync<Company>("companies/1"))!.Name);
        Assert.Equal(1, session.Advanced.NumberOfRequests);
    }

    [Fact]
    public async Task IdsThatNeedEscapingAreLoadedLazily()
    {
        using var store = await server.NewStoreAsync();
        await QueryServerTests.StoreAsync(store, new User { Id = "users/ä b&c?d", Name = "odd" }, new User { Id = "users/+1", Name = "plus" });
        using var session = store.OpenAsyncSession();

        var odd = session.Advanced.Lazily.LoadAsync<User>("users/ä b&c?d");
        var both = session.Advanced.Lazily.LoadAsync<User>(["users/+1", "users/ä b&c?d"]);
        Assert.Equal("odd", (await odd.Value)!.Name);
        Assert.Equal("plus", (await both.Value)["users/+1"]!.Name);
        Assert.Equal(1, session.Advanced.NumberOfRequests);
    }
}
