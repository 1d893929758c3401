using System.Collections.Concurrent;
using Jackdaw.Client.Tests.Infrastructure;
using Jackdaw.Client.Tests.Integration;

namespace Jackdaw.Client.Tests.Subscriptions;

/// <summary>store.Subscriptions and SubscriptionWorker against the real server.</summary>
public sealed class SubscriptionServerTests(ServerFixture server) : IClassFixture<ServerFixture>
{
    private static readonly TimeSpan Timeout = TimeSpan.FromSeconds(30);

    [Fact]
    public async Task SubscriptionsAreCreatedListedDisabledEnabledAndDeleted()
    {
        using var store = await server.NewStoreAsync();
        var adults = await store.Subscriptions.CreateAsync<User>(x => x.Age >= 18, new SubscriptionCreationOptions { Name = "Adults" });
        var all = await store.Subscriptions.CreateAsync(new SubscriptionCreationOptions { Query = "from Orders", ChangeVector = "LastDocument" });
        Assert.Equal("Adults", adults);
        Assert.False(string.IsNullOrEmpty(all));

        var list = await store.Subscriptions.GetSubscriptionsAsync();
        Assert.Equal(["Adults", all], list.Select(s => s.SubscriptionName));
        Assert.Equal("from 'Users' where Age >= 18", list[0].Query);
        Assert.Single(await store.Subscriptions.GetSubscriptionsAsync(1, 10));

        var state = await store.Subscriptions.GetSubscriptionStateAsync("adults");
        Assert.Equal("Adults", state.SubscriptionName);
        Assert.False(state.Disabled);
        Assert.Empty(state.Workers);
        Assert.True(state.CreatedAt > DateTime.UtcNow.AddMinutes(-5) && state.CreatedAt.Kind == DateTimeKind.Utc);

        await Assert.ThrowsAsync<SubscriptionAlreadyExistsException>(() => store.Subscriptions.CreateAsync(new SubscriptionCreationOptions { Name = "ADULTS", Query = "from Users" }));
        await Assert.ThrowsAsync<InvalidQueryException>(() => store.Subscriptions.CreateAsync(new SubscriptionCreationOptions { Query = "from Users order by Name" }));

        await store.Subscriptions.DisableAsync("Adults");
        Assert.True((await store.Subscriptions.GetSubscriptionStateAsync("Adults")).Disabled);
        await store.Subscriptions.EnableAsync("Adults");
        Assert.False((await store.Subscriptions.GetSubscriptionStateAsync("Adults")).Disabled);

        await store.Subscriptions.DeleteAsync("Adults");
        await Assert.ThrowsAsync<SubscriptionDoesNotExistException>(() => store.Subscriptions.GetSubscriptionStateAsync("Adults"));
        await Assert.ThrowsAsync<SubscriptionDoesNotExistException>(() => store.Subscriptions.DeleteAsync("Adults"));
        await Assert.ThrowsAsync<SubscriptionDoesNotExistException>(() => store.Subscriptions.DisableAsync("Adults"));
        Assert.Equal([all], (await store.Subscriptions.GetSubscriptionsAsync()).Select(s => s.SubscriptionName));
    }

    [Fact]
    public async Task AWorkerReceivesEveryMatchingDocumentAndItsAcknowledgementsMoveTheServersPosition()
    {
        using var store = await server.NewStoreAsync();
        await StoreUsersAsync(store, 30);
        var name = await store.Subscriptions.CreateAsync<User>(x => x.Age >= 10);

        var received = new ConcurrentDictionary<string, User>();
        var batchSizes = new ConcurrentQueue<int>();
        long lastAcknowledged = 0;
        await using var worker = store.Subscriptions.GetSubscriptionWorker<User>(new SubscriptionWorkerOptions(name) { MaxDocsPerBatch = 7 });
        worker.AfterAcknowledgment += batch =>
        {
            Interlocked.Exchange(ref lastAcknowledged, batch.LastEtag);
            return Task.CompletedTask;
        };
        var run = worker.Run(batch =>
        {
            batchSizes.Enqueue(batch.NumberOfItemsInBatch);
            foreach (var item in batch.Items)
            {
                Assert.Equal(item.Id, item.Result.Id);
                Assert.Equal(item.ChangeVector, item.RawMetadata.GetProperty("@change-vector").GetString());
                received[item.Id] = item.Result;
            }
        });

        await WaitUntilAsync(() => Task.FromResult(received.Count == 20), run);
        Assert.Equal(Enumerable.Range(10, 20).Select(i => $"users/{i}").Order(), received.Keys.Order());
        Assert.All(received.Values, u => Assert.Equal(int.Parse(u.Id!["users/".Length..]), u.Age));
        Assert.All(batchSizes, size => Assert.InRange(size, 1, 7));
        await WaitUntilAsync(async () => (await store.Subscriptions.GetSubscriptionStateAsync(name)).AckedEtag >= Interlocked.Read(ref lastAcknowledged) && Interlocked.Read(ref lastAcknowledged) > 0, run);
        var state = await store.Subscriptions.GetSubscriptionStateAsync(name);
        Assert.Equal(0, state.PendingDocuments);
        Assert.Single(state.Workers);
        Assert.Equal(SubscriptionOpeningStrategy.OpenIfFree, state.Workers[0].Strategy);

        // A document written later comes in a later batch.
        using (var session = store.OpenAsyncSession())
        {
            await session.StoreAsync(new User { Id = "users/100", Name = "Late", Age = 100 });
            await session.StoreAsync(new User { Id = "users/101", Name = "Child", Age = 1 });
            await session.SaveChangesAsync();
        }

        await WaitUntilAsync(() => Task.FromResult(received.ContainsKey("users/100")), run);
        Assert.False(received.ContainsKey("users/101"));
        await worker.DisposeAsync();
        await run.WaitAsync(Timeout);
    }

    [Fact]
    public async Task ABatchSessionHoldsTheDocumentsAndIncludesAndSavesAChange()
    {
        using var store = await server.NewStoreAsync();
        using (var session = store.OpenAsyncSession())
        {
            await session.StoreAsync(new User { Id = "users/1", Name = "Ann", Age = 40 });
            await session.StoreAsync(new Order { Id = "orders/1", Customer = "users/1", Total = 10m });
            await session.StoreAsync(new Order { Id = "orders/2", Customer = "users/1", Total = 20m });
            await session.SaveChangesAsync();
        }

        var name = await store.Subscriptions.CreateAsync(new SubscriptionCreationOptions { Query = "from Orders where Total < 100 include Customer" });
        var done = new TaskCompletionSource<(int Requests, string Customer)>(TaskCreationOptions.RunContinuationsAsynchronously);
        await using var worker = store.Subscriptions.GetSubscriptionWorker<Order>(name);
        var run = worker.Run(async batch =>
        {
            Assert.Equal(1, batch.NumberOfIncludes);
            using var session = batch.OpenAsyncSession();
            string customer = "";
            foreach (var item in batch.Items)
            {
                var order = await session.LoadAsync<Order>(item.Id);
                order!.Total += 1000m;
                customer = (await session.LoadAsync<User>(order.Customer))!.Name;
            }

            var requests = session.Advanced.NumberOfRequests;
            await session.SaveChangesAsync();
            done.TrySetResult((requests, customer));
        });

        var (requestsBeforeSave, customerName) = await done.Task.WaitAsync(Timeout);
        Assert.Equal(0, requestsBeforeSave);
        Assert.Equal("Ann", customerName);
        using (var session = store.OpenAsyncSession())
        {
            Assert.Equal(1010m, (await session.LoadAsync<Order>("orders/1"))!.Total);
            Assert.Equal(1020m, (await session.LoadAsync<Order>("orders/2"))!.Total);
        }

        Assert.False(run.IsFaulted, run.Exception?.ToString());
    }

    [Fact]
    public async Task AFunctionThatThrowsStopsTheWorkerAndTheBatchIsDeliveredAgainToTheNext()
    {
        using var store = await server.NewStoreAsync();
        await StoreUsersAsync(store, 5);
        var name = await store.Subscriptions.CreateAsync<User>();

        var firstSeen = new ConcurrentBag<string>();
        await using (var failing = store.Subscriptions.GetSubscriptionWorker<User>(name))
        {
            var run = failing.Run(batch =>
            {
                foreach (var item in batch.Items)
                {
                    firstSeen.Add(item.Id);
                }

                throw new InvalidOperationException("the mail server is down");
            });
            var error = await Assert.ThrowsAsync<SubscriberErrorException>(() => run.WaitAsync(Timeout));
            Assert.IsType<InvalidOperationException>(error.InnerException);
        }

        Assert.Equal(5, firstSeen.Count);
        Assert.Equal(0, (await store.Subscriptions.GetSubscriptionStateAsync(name)).AckedEtag);

        var again = new ConcurrentDictionary<string, bool>();
        await using var next = store.Subscriptions.GetSubscriptionWorker<User>(new SubscriptionWorkerOptions(name) { Strategy = SubscriptionOpeningStrategy.WaitForFree });
        var nextRun = next.Run(batch =>
        {
            foreach (var item in batch.Items)
            {
                again[item.Id] = true;
            }
        });
        await WaitUntilAsync(() => Task.FromResult(again.Count == 5), nextRun);
        Assert.Equal(firstSeen.Order(), again.Keys.Order());
    }

    [Fact]
    public async Task WithIgnoreSubscriberErrorsAFailedBatchIsAcknowledgedAndReported()
    {
        using var store = await server.NewStoreAsync();
        await StoreUsersAsync(store, 3);
        var name = await store.Subscriptions.CreateAsync<User>();
        var reported = new ConcurrentQueue<Exception>();
        var acknowledged = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        await using var worker = store.Subscriptions.GetSubscriptionWorker<User>(new SubscriptionWorkerOptions(name) { IgnoreSubscriberErrors = true });
        worker.OnUnexpectedSubscriptionError += reported.Enqueue;
        worker.AfterAcknowledgment += _ =>
        {
            acknowledged.TrySetResult();
            return Task.CompletedTask;
        };
        var run = worker.Run(_ => throw new FormatException("bad data"));

        await acknowledged.Task.WaitAsync(Timeout);
        Assert.IsType<FormatException>(Assert.Single(reported));
        Assert.True((await store.Subscriptions.GetSubscriptionStateAsync(name)).AckedEtag > 0);
        Assert.False(run.IsCompleted);
    }

    [Fact]
    public async Task ATakeOverClosesTheWorkerThatHeldTheSubscriptionWithSubscriptionClosedException()
    {
        using var store = await server.NewStoreAsync();
        var name = await store.Subscriptions.CreateAsync<User>();
        await using var first = store.Subscriptions.GetSubscriptionWorker<User>(name);
        var firstConnected = Connected(first);
        var firstRun = first.Run(_ => { });
        await firstConnected.WaitAsync(Timeout);

        await using var second = store.Subscriptions.GetSubscriptionWorker<User>(new SubscriptionWorkerOptions(name) { Strategy = SubscriptionOpeningStrategy.TakeOver });
        var secondConnected = Connected(second);
        var received = new TaskCompletionSource<string>(TaskCreationOptions.RunContinuationsAsynchronously);
        var secondRun = second.Run(batch => received.TrySetResult(batch.Items[0].Id));

        var closed = await Assert.ThrowsAsync<SubscriptionClosedException>(() => firstRun.WaitAsync(Timeout));
        Assert.Contains("taken over", closed.Message);
        await secondConnected.WaitAsync(Timeout);
        await StoreUsersAsync(store, 1);
        Assert.Equal("users/0", await received.Task.WaitAsync(Timeout));

        // An OpenIfFree worker now finds it held, and stops (RavenDB's behaviour).
        await using var third = store.Subscriptions.GetSubscriptionWorker<User>(name);
        await Assert.ThrowsAsync<SubscriptionInUseException>(() => third.Run(_ => { }).WaitAsync(Timeout));
        Assert.False(secondRun.IsCompleted);
    }

    [Fact]
    public async Task AWorkerReconnectsAfterItsConnectionIsDroppedAndGoesOn()
    {
        using var store = await server.NewStoreAsync();
        var name = await store.Subscriptions.CreateAsync<User>();
        var connections = 0;
        var retries = new ConcurrentQueue<Exception>();
        var received = new ConcurrentDictionary<string, bool>();
        await using var worker = store.Subscriptions.GetSubscriptionWorker<User>(new SubscriptionWorkerOptions(name) { TimeToWaitBeforeConnectionRetry = TimeSpan.FromMilliseconds(50) });
        worker.OnEstablishedSubscriptionConnection += () => Interlocked.Increment(ref connections);
        worker.OnSubscriptionConnectionRetry += retries.Enqueue;
        var run = worker.Run(batch =>
        {
            foreach (var item in batch.Items)
            {
                received[item.Id] = true;
            }
        });
        await WaitUntilAsync(() => Task.FromResult(Volatile.Read(ref connections) == 1), run);

        await store.Subscriptions.DropConnectionAsync(name);
        await WaitUntilAsync(() => Task.FromResult(Volatile.Read(ref connections) == 2), run);
        Assert.Contains("dropped", Assert.Single(retries).Message);

        await StoreUsersAsync(store, 3);
        await WaitUntilAsync(() => Task.FromResult(received.Count == 3), run);
    }

    [Fact]
    public async Task ConcurrentWorkersShareTheDocuments()
    {
        using var store = await server.NewStoreAsync();
        var name = await store.Subscriptions.CreateAsync<User>();
        var received = new ConcurrentDictionary<string, int>();
        var byWorker = new int[2];
        var workers = new List<SubscriptionWorker<User>>();
        var runs = new List<Task>();
        try
        {
            for (var w = 0; w < 2; w++)
            {
                var index = w;
                var worker = store.Subscriptions.GetSubscriptionWorker<User>(new SubscriptionWorkerOptions(name) { Strategy = SubscriptionOpeningStrategy.Concurrent, MaxDocsPerBatch = 5 });
                workers.Add(worker);
                var connected = Connected(worker);
                runs.Add(worker.Run(async batch =>
                {
                    foreach (var item in batch.Items)
                    {
                        received.AddOrUpdate(item.Id, 1, (_, n) => n + 1);
                    }

                    Interlocked.Add(ref byWorker[index], batch.NumberOfItemsInBatch);
                    await Task.Delay(20); // processing takes a while, so the other worker gets the next batch
                }));
                await connected.WaitAsync(Timeout);
            }

            Assert.Equal(2, (await store.Subscriptions.GetSubscriptionStateAsync(name)).Workers.Count);
            await StoreUsersAsync(store, 100);
            await WaitUntilAsync(() => Task.FromResult(received.Count == 100), runs[0]);
            Assert.All(byWorker, count => Assert.True(count > 0, $"each worker got documents: {byWorker[0]} and {byWorker[1]}"));
            Assert.All(received.Values, count => Assert.Equal(1, count));
        }
        finally
        {
            foreach (var worker in workers)
            {
                await worker.DisposeAsync();
            }
        }

        await Task.WhenAll(runs).WaitAsync(Timeout);
    }

    [Fact]
    public async Task AWorkerStopsWhenTheSubscriptionIsMissingDisabledOrDeleted()
    {
        using var store = await server.NewStoreAsync();
        await using (var missing = store.Subscriptions.GetSubscriptionWorker<User>("nothing-here"))
        {
            await Assert.ThrowsAsync<SubscriptionDoesNotExistException>(() => missing.Run(_ => { }).WaitAsync(Timeout));
        }

        var name = await store.Subscriptions.CreateAsync<User>();
        await store.Subscriptions.DisableAsync(name);
        await using (var refused = store.Subscriptions.GetSubscriptionWorker<User>(name))
        {
            await Assert.ThrowsAsync<SubscriptionClosedException>(() => refused.Run(_ => { }).WaitAsync(Timeout));
        }

        await store.Subscriptions.EnableAsync(name);
        await using var worker = store.Subscriptions.GetSubscriptionWorker<User>(name);
        var connected = Connected(worker);
        var run = worker.Run(_ => { });
        await connected.WaitAsync(Timeout);
        await store.Subscriptions.DeleteAsync(name);
        var closed = await Assert.ThrowsAsync<SubscriptionClosedException>(() => run.WaitAsync(Timeout));
        Assert.Contains("deleted", closed.Message);
    }

    [Fact]
    public async Task DisposingAWorkerEndsItsRunWithoutAnErrorAndFreesTheSubscription()
    {
        using var store = await server.NewStoreAsync();
        var name = await store.Subscriptions.CreateAsync<User>();
        var worker = store.Subscriptions.GetSubscriptionWorker<User>(name);
        var connected = Connected(worker);
        var run = worker.Run(_ => { });
        await connected.WaitAsync(Timeout);

        await worker.DisposeAsync();
        await run.WaitAsync(Timeout);
        Assert.True(run.IsCompletedSuccessfully);
        await WaitUntilAsync(async () => (await store.Subscriptions.GetSubscriptionStateAsync(name)).Workers.Count == 0, Task.Delay(-1));
        Action runAgain = () => worker.Run(_ => { });
        Assert.Throws<ObjectDisposedException>(runAgain);
    }

    private static Task Connected<T>(SubscriptionWorker<T> worker)
        where T : class
    {
        var connected = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        worker.OnEstablishedSubscriptionConnection += () => connected.TrySetResult();
        return connected.Task;
    }

    private static async Task StoreUsersAsync(DocumentStore store, int count)
    {
        using var session = store.OpenAsyncSession();
        for (var i = 0; i < count; i++)
        {
            await session.StoreAsync(new User { Id = $"users/{i}", Name = $"User {i}", Age = i });
        }

        await session.SaveChangesAsync();
    }

    /// <summary>Waits for a condition; fails at once with the worker's error if its run ends first.</summary>
    private static async Task WaitUntilAsync(Func<Task<bool>> condition, Task run)
    {
        var deadline = DateTime.UtcNow + Timeout;
        while (!await condition())
        {
            if (run.IsCompleted)
            {
                await run;
                Assert.Fail("The worker stopped before the condition held.");
            }

            Assert.True(DateTime.UtcNow < deadline, "The condition did not hold within " + Timeout);
            await Task.Delay(20);
        }
    }
}
