using System.Net;
using System.Text.Json;
using System.Threading.Channels;
using Jackdaw.Client.Tests.Infrastructure;

namespace Jackdaw.Client.Tests.Integration;

/// <summary>store.Changes() against the real server: what each observable gets, index changes, unsubscribing, reconnecting.</summary>
public sealed class ChangesServerTests(ServerFixture server) : IClassFixture<ServerFixture>
{
    private static readonly TimeSpan Timeout = TimeSpan.FromSeconds(30);

    /// <summary>Collects what an observable sends; <see cref="NextAsync"/> waits for the next value that matches.</summary>
    private sealed class Collector<T> : IObserver<T>
    {
        private readonly Channel<T> _values = Channel.CreateUnbounded<T>();

        public List<T> Seen { get; } = [];

        public bool Completed { get; private set; }

        public void OnNext(T value)
        {
            lock (Seen)
                Seen.Add(value);
            _values.Writer.TryWrite(value);
        }

        public void OnError(Exception error)
        {
        }

        public void OnCompleted() => Completed = true;

        public async Task<T> NextAsync(Func<T, bool>? match = null)
        {
            using var timeout = new CancellationTokenSource(Timeout);
            while (true)
            {
                var value = await _values.Reader.ReadAsync(timeout.Token);
                if (match is null || match(value))
                {
                    return value;
                }
            }
        }

        /// <summary>Values up to and including the first that matches <paramref name="last"/>.</summary>
        public async Task<List<T>> UntilAsync(Func<T, bool> last)
        {
            var values = new List<T>();
            while (true)
            {
                var value = await NextAsync();
                values.Add(value);
                if (last(value))
                {
                    return values;
                }
            }
        }
    }

    private static async Task StoreAsync(DocumentStore store, object entity, string id)
    {
        using var session = store.OpenAsyncSession();
        await session.StoreAsync(entity, id);
        await session.SaveChangesAsync();
    }

    private async Task<List<JsonElement>> ConnectionsAsync(string database)
    {
        using var client = new HttpClient();
        var json = JsonDocument.Parse(await client.GetStringAsync($"{server.Url}/databases/{database}/changes/debug"));
        return [.. json.RootElement.GetProperty("Connections").EnumerateArray().Select(c => c.Clone())];
    }

    private static async Task WaitUntilAsync(Func<Task<bool>> condition, string what)
    {
        var deadline = DateTime.UtcNow + Timeout;
        while (!await condition())
        {
            Assert.True(DateTime.UtcNow < deadline, "Timed out waiting until " + what);
            await Task.Delay(20);
        }
    }

    [Fact]
    public async Task ForDocumentGetsItsPutAndDeleteWithTheChangeVector()
    {
        using var store = await server.NewStoreAsync();
        var changes = store.Changes();
        Assert.Same(changes, store.Changes());
        await changes.EnsureConnectedNow();
        Assert.True(changes.Connected);
        var observable = changes.ForDocument("users/1");
        var collector = new Collector<DocumentChange>();
        using var subscription = observable.Subscribe(collector);
        await observable.EnsureSubscribedNow();

        await StoreAsync(store, new User { Name = "Other" }, "users/2");
        await StoreAsync(store, new User { Name = "Ada" }, "users/1");
        string? changeVector;
        using (var session = store.OpenAsyncSession())
        {
            changeVector = session.Advanced.GetChangeVectorFor((await session.LoadAsync<User>("users/1"))!);
        }
        var put = await collector.NextAsync();
        Assert.Equal((DocumentChangeTypes.Put, "users/1", "Users", changeVector), (put.Type, put.Id, put.CollectionName, put.ChangeVector));

        using (var session = store.OpenAsyncSession())
        {
            session.Delete("users/1");
            await session.SaveChangesAsync();
        }
        var delete = await collector.NextAsync();
        Assert.Equal((DocumentChangeTypes.Delete, "users/1"), (delete.Type, delete.Id));
        Assert.Equal(2, collector.Seen.Count);
    }

    [Fact]
    public async Task AttachmentObservablesGetPutsAndDeletesOfAttachmentsOnly()
    {
        using var store = await server.NewStoreAsync();
        var changes = store.Changes();
        var ofOne = changes.ForAttachmentsOfDocument("users/1");
        var ofAll = changes.ForAllAttachments();
        var one = new Collector<AttachmentChange>();
        var all = new Collector<AttachmentChange>();
        using var a = ofOne.Subscribe(one);
        using var b = ofAll.Subscribe(all);
        await Task.WhenAll(ofOne.EnsureSubscribedNow(), ofAll.EnsureSubscribedNow());

        await StoreAsync(store, new User { Name = "Ada" }, "users/1");
        await StoreAsync(store, new User { Name = "Bob" }, "users/2");
        using var http = new HttpClient { BaseAddress = new Uri(server.Url) };
        string Url(string id, string name) => $"/databases/{store.Database}/attachments?id={id}&name={name}";
        using (var put = await http.PutAsync(Url("users/2", "b.txt") + "&contentType=text/plain", new ByteArrayContent("bob"u8.ToArray())))
        {
            Assert.Equal(HttpStatusCode.Created, put.StatusCode);
        }
        using (var put = await http.PutAsync(Url("users/1", "a.txt") + "&contentType=text/plain", new ByteArrayContent("ada"u8.ToArray())))
        {
            Assert.Equal(HttpStatusCode.Created, put.StatusCode);
        }
        using (var delete = await http.DeleteAsync(Url("users/1", "a.txt")))
        {
            Assert.Equal(HttpStatusCode.NoContent, delete.StatusCode);
        }
        string? changeVector;
        using (var session = store.OpenAsyncSession())
        {
            changeVector = session.Advanced.GetChangeVectorFor((await session.LoadAsync<User>("users/1"))!);
        }

        var put1 = await one.NextAsync();
        Assert.Equal((DocumentChangeTypes.Put, "users/1", "a.txt", "Users"), (put1.Type, put1.DocumentId, put1.Name, put1.CollectionName));
        var delete1 = await one.NextAsync();
        Assert.Equal((DocumentChangeTypes.Delete, "users/1", "a.txt", changeVector), (delete1.Type, delete1.DocumentId, delete1.Name, delete1.ChangeVector));
        var seen = await all.UntilAsync(c => c.Type == DocumentChangeTypes.Delete);
        // Document puts are not attachment changes: only the three attachment changes, in commit order.
        Assert.Equal(["Put b.txt on users/2", "Put a.txt on users/1", "Delete a.txt on users/1"], seen.Select(c => $"{c.Type} {c.Name} on {c.DocumentId}"));
        Assert.Equal(2, one.Seen.Count);
    }

    [Fact]
    public async Task CollectionPrefixAndAllDocumentsObservablesEachGetTheirChanges()
    {
        using var store = await server.NewStoreAsync();
        var changes = store.Changes();
        var users = new Collector<DocumentChange>();
        var companies = new Collector<DocumentChange>();
        var prefixed = new Collector<DocumentChange>();
        var all = new Collector<DocumentChange>();
        var observables = new[] { changes.ForDocumentsInCollection<User>(), changes.ForDocumentsInCollection("companies"), changes.ForDocumentsStartingWith("users/1"), changes.ForAllDocuments() };
        using var a = observables[0].Subscribe(users);
        using var b = observables[1].Subscribe(companies);
        using var c = observables[2].Subscribe(prefixed);
        using var d = observables[3].Subscribe(all);
        await Task.WhenAll(observables.Select(o => o.EnsureSubscribedNow()));

        await StoreAsync(store, new User { Name = "One" }, "users/1");
        await StoreAsync(store, new Company { Name = "Acme" }, "companies/1");
        await StoreAsync(store, new User { Name = "Two" }, "users/2");
        await StoreAsync(store, new User { Name = "Ten" }, "users/10");
        await StoreAsync(store, new Company { Name = "Last" }, "companies/2");

        Assert.Equal(["users/1", "companies/1", "users/2", "users/10", "companies/2"], (await all.UntilAsync(x => x.Id == "companies/2")).Select(x => x.Id));
        Assert.Equal(["users/1", "users/2", "users/10"], (await users.UntilAsync(x => x.Id == "users/10")).Select(x => x.Id));
        Assert.Equal(["companies/1", "companies/2"], (await companies.UntilAsync(x => x.Id == "companies/2")).Select(x => x.Id));
        Assert.Equal(["users/1", "users/10"], (await prefixed.UntilAsync(x => x.Id == "users/10")).Select(x => x.Id));
    }

    [Fact]
    public async Task ForIndexGetsTheIndexAddedAndItsBatches()
    {
        using var store = await server.NewStoreAsync();
        var changes = store.Changes();
        var index = new Collector<IndexChange>();
        var all = new Collector<IndexChange>();
        var one = changes.ForIndex("Users/ByNameAndAge");
        var every = changes.ForAllIndexes();
        using var a = one.Subscribe(index);
        using var b = every.Subscribe(all);
        // Both watches in place on the server before the index exists (the second is its own command).
        await Task.WhenAll(one.EnsureSubscribedNow(), every.EnsureSubscribedNow());

        await new Users_ByNameAndAge().ExecuteAsync(store);
        Assert.Equal(IndexChangeTypes.IndexAdded, (await index.NextAsync()).Type);
        await StoreAsync(store, new User { Name = "Ada", Age = 36 }, "users/1");
        var batch = await index.NextAsync(x => x.Type == IndexChangeTypes.BatchCompleted);
        Assert.Equal("Users/ByNameAndAge", batch.Name);
        await all.NextAsync(x => x.Type == IndexChangeTypes.BatchCompleted);
        Assert.All(index.Seen, x => Assert.Equal("Users/ByNameAndAge", x.Name));
    }

    [Fact]
    public async Task ABulkInsertReportsItsProgressWhileItRunsWithGrowingCounts()
    {
        using var store = await server.NewStoreAsync();
        var seen = new List<BulkInsertProgress>();
        var sent = 0;
        await using (var bulk = store.BulkInsert())
        {
            bulk.OnProgress += (_, e) =>
            {
                lock (seen)
                    seen.Add(e.Progress);
            };
            // The server reports about once a second while the counts move: insert until two
            // reports came, however long that takes on this machine (with a cap).
            var deadline = DateTime.UtcNow + TimeSpan.FromMinutes(2);
            while (DateTime.UtcNow < deadline)
            {
                lock (seen)
                {
                    if (seen.Count >= 2)
                    {
                        break;
                    }
                }
                for (var i = 0; i < 1000; i++, sent++)
                {
                    await bulk.StoreAsync(new User { Name = $"user {sent}" }, $"users/{sent}");
                }
            }
        }

        List<BulkInsertProgress> reports;
        lock (seen)
            reports = [.. seen];
        Assert.True(reports.Count >= 2, $"{reports.Count} progress report(s) for {sent} documents");
        Assert.All(reports, p => Assert.InRange(p.Total, 0, p.DocumentsProcessed));
        Assert.All(reports, p => Assert.InRange(p.DocumentsProcessed, 1, sent));
        Assert.All(reports.Where(p => p.Total > 0), p => Assert.Matches(@"^users/\d+$", p.LastProcessedId));
        Assert.Equal(reports.Select(p => p.DocumentsProcessed).Order(), reports.Select(p => p.DocumentsProcessed));
        Assert.True(reports[^1].DocumentsProcessed > reports[0].DocumentsProcessed, "the counts grew");
        using var session = store.OpenAsyncSession();
        Assert.Equal($"user {sent - 1}", (await session.LoadAsync<User>($"users/{sent - 1}"))!.Name);
    }

    [Fact]
    public async Task ForAllOperationsGetsTheFinalStateOfABulkInsert()
    {
        using var store = await server.NewStoreAsync();
        var operations = store.Changes().ForAllOperations();
        var collector = new Collector<OperationStatusChange>();
        using var subscription = operations.Subscribe(collector);
        await operations.EnsureSubscribedNow();

        await using (var bulk = store.BulkInsert())
        {
            // A handler makes the insert an operation of the server.
            bulk.OnProgress += (_, _) => { };
            for (var i = 0; i < 10; i++)
            {
                await bulk.StoreAsync(new User { Name = $"user {i}" }, $"users/{i}");
            }
        }

        var completed = await collector.NextAsync(c => c.State.Status == OperationStatus.Completed);
        Assert.Null(completed.State.Progress);
        Assert.Equal(10, completed.State.Result!.Total);
        Assert.Equal("Processed 10 items.", completed.State.Result.Message);
        Assert.Null(completed.State.Result.ErrorType);
    }

    [Fact]
    public async Task TheLastObserverGoneTheServerStopsSendingAndDisposingCompletesTheObservers()
    {
        using var store = await server.NewStoreAsync();
        var changes = store.Changes();
        var first = new Collector<DocumentChange>();
        var second = new Collector<DocumentChange>();
        var observable = changes.ForDocument("users/1");
        var one = observable.Subscribe(first);
        using (observable.Subscribe(second))
        {
            await observable.EnsureSubscribedNow();
            one.Dispose();
            // One observer left: the server still sends.
            await StoreAsync(store, new User { Name = "Ada" }, "users/1");
            await second.NextAsync();
        }
        Assert.Empty(first.Seen);
        await WaitUntilAsync(async () => (await ConnectionsAsync(store.Database!)).Single().GetProperty("WatchDocuments").GetArrayLength() == 0, "the server no longer watches users/1");
        await Assert.ThrowsAsync<InvalidOperationException>(() => changes.ForDocument("users/1").EnsureSubscribedNow());

        var last = new Collector<DocumentChange>();
        var all = changes.ForAllDocuments();
        using (all.Subscribe(last))
        {
            await all.EnsureSubscribedNow();
            changes.Dispose();
            Assert.True(last.Completed);
        }
        await WaitUntilAsync(async () => (await ConnectionsAsync(store.Database!)).Count == 0, "the server closed the disposed connection");
        Assert.NotSame(changes, store.Changes());
    }

    [Fact]
    public async Task ADroppedConnectionReconnectsAndSubscribesAgain()
    {
        using var store = await server.NewStoreAsync();
        var changes = store.Changes();
        var statuses = Channel.CreateUnbounded<bool>();
        changes.ConnectionStatusChanged += (_, _) => statuses.Writer.TryWrite(changes.Connected);
        var errors = new List<Exception>();
        changes.OnError += e =>
        {
            lock (errors)
                errors.Add(e);
        };
        var collector = new Collector<DocumentChange>();
        var observable = changes.ForDocumentsInCollection<User>();
        using var subscription = observable.Subscribe(collector);
        await observable.EnsureSubscribedNow();
        using var timeout = new CancellationTokenSource(Timeout);
        async Task StatusAsync(bool connected)
        {
            while (await statuses.Reader.ReadAsync(timeout.Token) != connected)
            {
            }
        }

        // The server closes the connection (as on a restart or a TooSlow).
        var connection = (await ConnectionsAsync(store.Database!)).Single();
        using (var client = new HttpClient())
        using (var response = await client.DeleteAsync($"{server.Url}/databases/{store.Database}/changes?id={connection.GetProperty("Id").GetInt64()}"))
        {
            Assert.Equal(HttpStatusCode.NoContent, response.StatusCode);
        }
        await StatusAsync(connected: false);
        await StatusAsync(connected: true);
        await observable.EnsureSubscribedNow();
        var again = (await ConnectionsAsync(store.Database!)).Single();
        Assert.NotEqual(connection.GetProperty("Id").GetInt64(), again.GetProperty("Id").GetInt64());
        Assert.Equal("Users", again.GetProperty("WatchCollections")[0].GetString());

        await StoreAsync(store, new User { Name = "Ada" }, "users/1");
        Assert.Equal("users/1", (await collector.NextAsync()).Id);
        lock (errors)
            Assert.Contains(errors, e => e is ChangesException { ErrorCode: "Dropped" });
    }

    [Fact]
    public async Task AMissingDatabaseFailsEnsureConnectedNow()
    {
        using var store = new DocumentStore { Urls = [server.Url], Database = "no-such-database" }.Initialize();
        var changes = store.Changes();
        var observable = changes.ForAllDocuments();
        using var subscription = observable.Subscribe(new ActionObserver<DocumentChange>(_ => { }));
        await Assert.ThrowsAsync<DatabaseDoesNotExistException>(() => changes.EnsureConnectedNow());
        await Assert.ThrowsAsync<DatabaseDoesNotExistException>(() => observable.EnsureSubscribedNow());
        Assert.False(changes.Connected);
    }
}
