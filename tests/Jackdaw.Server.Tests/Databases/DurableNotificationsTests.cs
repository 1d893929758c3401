using System.Collections.Concurrent;
using Jackdaw.Server.Databases;
using Jackdaw.Server.Documents;
using Jackdaw.Server.Documents.Commands;
using Jackdaw.Server.Tests.Infrastructure;
using Jackdaw.Storage.Blittable;
using Microsoft.Extensions.Logging.Abstractions;

namespace Jackdaw.Server.Tests.Databases;

public sealed class DurableNotificationsTests : IAsyncLifetime
{
    private readonly TempFolder _folder = new();
    private DocumentDatabase _database = null!;

    public Task InitializeAsync()
    {
        _database = DocumentDatabase.Open("notify", _folder.Path, NullLoggerFactory.Instance, new DocumentDatabaseOptions { TombstoneCleanupInterval = Timeout.InfiniteTimeSpan });
        return Task.CompletedTask;
    }

    public async Task DisposeAsync()
    {
        await _database.DisposeAsync();
        _folder.Dispose();
    }

    private async Task<PutResult> PutAsync(string id, string? collection = "Users")
    {
        using var context = new JsonOperationContext();
        var command = new PutDocumentCommand(new DocumentToPut(id, context.Parse("{\"N\":1}"u8, BlittableMode.Disk), collection, null), context);
        await _database.Merger.EnqueueAsync(command);
        return command.Result;
    }

    [Fact]
    public async Task ACommitIsPublishedOnlyOnceReadersCanSeeIt()
    {
        var seen = new ConcurrentQueue<(long Etag, long ReaderEtag, long DatabaseEtag, bool Visible)>();
        using var subscription = _database.Notifications.Subscribe(commit =>
        {
            using var reader = _database.BeginRead();
            var visible = commit.Changes.All(c => reader.TryGet(c.Id, out _));
            seen.Enqueue((commit.LastEtag, reader.LastEtag, _database.LastEtag, visible));
        });

        for (var i = 0; i < 20; i++)
        {
            await PutAsync($"users/{i}");
        }

        Assert.NotEmpty(seen);
        foreach (var (etag, readerEtag, databaseEtag, visible) in seen)
        {
            Assert.True(readerEtag >= etag, $"published etag {etag} while a new reader saw {readerEtag}");
            Assert.True(databaseEtag >= etag);
            Assert.True(visible);
        }
    }

    [Fact]
    public async Task LastEtagIsTheDurableEtagAndAnsweredWritesAreInIt()
    {
        Assert.Equal(0, _database.LastEtag);
        var result = await PutAsync("users/1");
        // The request is answered after its commit is published.
        Assert.Equal(result.Etag, _database.LastEtag);
        using var reader = _database.BeginRead();
        Assert.Equal(result.Etag, reader.LastEtag);
    }

    [Fact]
    public async Task NoNotificationIsLostOrReorderedUnder64ConcurrentWriters()
    {
        var commits = new ConcurrentQueue<DurableCommit>();
        using var subscription = _database.Notifications.Subscribe(commits.Enqueue);
        const int writers = 64, each = 40;
        var expected = new ConcurrentDictionary<string, long>();
        await Task.WhenAll(Enumerable.Range(0, writers).Select(w => Task.Run(async () =>
        {
            for (var i = 0; i < each; i++)
            {
                var id = $"w{w}/{i}";
                var result = await PutAsync(id, i % 3 == 0 ? null : $"C{w % 4}");
                expected[id] = result.Etag;
                if (i % 10 == 9)
                {
                    using var context = new JsonOperationContext();
                    await _database.Merger.EnqueueAsync(new DeleteDocumentCommand(id, null));
                }
            }
        })));

        var list = commits.ToList();
        // Commits in strictly increasing etag order, and within each its changes too.
        var all = list.SelectMany(c => c.Changes).ToList();
        Assert.Equal(all.Select(c => c.Etag).Order(), all.Select(c => c.Etag));
        Assert.Equal(all.Count, all.Select(c => c.Etag).Distinct().Count());
        Assert.Equal(list.Select(c => c.LastEtag).Order(), list.Select(c => c.LastEtag));
        Assert.All(list, c => Assert.Equal(c.Changes[^1].Etag, c.LastEtag));
        // Every acknowledged put and delete was published exactly once, and nothing else was.
        var puts = all.Where(c => c.Kind == DocumentChangeKind.Put).ToList();
        Assert.Equal(writers * each, puts.Count);
        Assert.All(puts, p => Assert.Equal(expected[p.Id], p.Etag));
        Assert.Equal(writers * (each / 10), all.Count(c => c.Kind == DocumentChangeKind.Delete));
        Assert.Equal(_database.LastEtag, list[^1].LastEtag);
        Assert.Equal(all.Count, _database.LastEtag);
    }

    [Fact]
    public async Task ChangesNameTheDocumentItsCollectionAndWhatHappened()
    {
        var commits = new ConcurrentQueue<DurableCommit>();
        using var subscription = _database.Notifications.Subscribe(commits.Enqueue);
        await PutAsync("Users/Ada", "Users");
        await PutAsync("loose", null);
        await _database.Merger.EnqueueAsync(new DeleteDocumentCommand("users/ada", null));

        var changes = commits.SelectMany(c => c.Changes).ToList();
        // Each change carries its version's (or its deletion's) change vector.
        Assert.All(changes, c => Assert.Equal(ChangeVectors.Format("A", c.Etag, _database.DatabaseId), c.ChangeVector));
        changes = changes.Select(c => c with { ChangeVector = null }).ToList();
        Assert.Equal(
            [
                new DocumentChange(1, "Users/Ada", "Users", DocumentChangeKind.Put),
                new DocumentChange(2, "loose", null, DocumentChangeKind.Put),
                new DocumentChange(3, "Users/Ada", "Users", DocumentChangeKind.Delete),
            ],
            changes);
    }

    [Fact]
    public async Task ATransactionThatChangedNothingPublishesNothing()
    {
        await PutAsync("users/1");
        var commits = new ConcurrentQueue<DurableCommit>();
        using var subscription = _database.Notifications.Subscribe(commits.Enqueue);
        var published = _database.Notifications.Published;
        var delete = new DeleteDocumentCommand("users/absent", null);
        await _database.Merger.EnqueueAsync(delete);
        Assert.False(delete.Deleted);
        Assert.Empty(commits);
        Assert.Equal(published, _database.Notifications.Published);
    }

    [Fact]
    public async Task WaitingForAnEtagCompletesWhenItIsDurable()
    {
        var first = await PutAsync("users/1");
        // Passed etags complete at once.
        Assert.True(_database.Notifications.WaitForEtagAsync(first.Etag).IsCompletedSuccessfully);

        var waiting = _database.Notifications.WaitForEtagAsync(first.Etag + 3);
        Assert.False(waiting.IsCompleted);
        await PutAsync("users/2");
        await PutAsync("users/3");
        Assert.False(waiting.IsCompleted);
        var third = PutAsync("users/4");
        await waiting.WaitAsync(TimeSpan.FromSeconds(30));
        Assert.True(_database.LastEtag >= first.Etag + 3);
        await third;
    }

    [Fact]
    public async Task WaitingCanBeCanceled()
    {
        using var cancel = new CancellationTokenSource();
        var waiting = _database.Notifications.WaitForEtagAsync(1_000, cancel.Token);
        await PutAsync("users/1");
        Assert.False(waiting.IsCompleted);
        cancel.Cancel();
        await Assert.ThrowsAnyAsync<OperationCanceledException>(() => waiting);
    }

    [Fact]
    public async Task AFailingSubscriberDoesNotStopTheOthersOrTheWriter()
    {
        var seen = new ConcurrentQueue<long>();
        using var failing = _database.Notifications.Subscribe(_ => throw new InvalidOperationException("subscriber bug"));
        using var working = _database.Notifications.Subscribe(c => seen.Enqueue(c.LastEtag));
        await PutAsync("users/1");
        await PutAsync("users/2");
        Assert.Equal([1L, 2L], seen.ToArray());
    }

    [Fact]
    public async Task ADisposedSubscriptionIsNotCalledAgain()
    {
        var seen = new ConcurrentQueue<long>();
        var subscription = _database.Notifications.Subscribe(c => seen.Enqueue(c.LastEtag));
        await PutAsync("users/1");
        subscription.Dispose();
        await PutAsync("users/2");
        Assert.Equal([1L], seen.ToArray());
    }

    [Fact]
    public async Task ACommitWhoseJournalWriteFailsIsNeverPublished()
    {
        using var folder = new TempFolder();
        var io = new Jackdaw.Storage.Engine.FaultInjectingStorageIo();
        await using var database = DocumentDatabase.Open("faulty", folder.Path, NullLoggerFactory.Instance, new DocumentDatabaseOptions { StorageIo = io, TombstoneCleanupInterval = Timeout.InfiniteTimeSpan });
        var commits = new ConcurrentQueue<DurableCommit>();
        using var subscription = database.Notifications.Subscribe(commits.Enqueue);
        using var context = new JsonOperationContext();
        PutDocumentCommand Put(string id) => new(new DocumentToPut(id, context.Parse("{\"N\":1}"u8, BlittableMode.Disk), "Users", null), context);

        await database.EnqueueAsync(Put("users/1"));
        var waiting = database.Notifications.WaitForEtagAsync(2);
        io.DiskFull = true;
        await Assert.ThrowsAsync<Jackdaw.Storage.Engine.DiskFullException>(() => database.EnqueueAsync(Put("users/2")));

        Assert.Equal([1L], commits.Select(c => c.LastEtag).ToArray());
        Assert.Equal(1, database.LastEtag);
        Assert.False(waiting.IsCompleted);
        using var reader = database.BeginRead();
        Assert.Equal(1, reader.LastEtag);
        Assert.False(reader.TryGet("users/2", out _));
    }

    [Fact]
    public async Task LastEtagSurvivesAReopen()
    {
        await PutAsync("users/1");
        var last = await PutAsync("users/2");
        await _database.DisposeAsync();
        _database = DocumentDatabase.Open("notify", _folder.Path, NullLoggerFactory.Instance, new DocumentDatabaseOptions { TombstoneCleanupInterval = Timeout.InfiniteTimeSpan });
        Assert.Equal(last.Etag, _database.LastEtag);
        Assert.Equal(last.Etag + 1, (await PutAsync("users/3")).Etag);
    }
}
