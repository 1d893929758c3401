using System.Collections.Concurrent;
using Jackdaw.Server.Databases;
using Jackdaw.Server.Tests.Infrastructure;
using static Jackdaw.Server.Tests.Databases.DatabaseTestKit;

namespace Jackdaw.Server.Tests.Databases;

public class TombstoneCleanupTests
{
    private const string Disabled = "disabled by the user";

    /// <summary>A consumer whose positions the test sets; null collections means it reads every collection.</summary>
    private sealed class TestConsumer(string name, params string[] collections) : ITombstoneConsumer
    {
        public string Name => name;

        /// <summary>The position for collections without one of their own in <see cref="Positions"/>.</summary>
        public long Position { get; set; }

        public Dictionary<string, long> Positions { get; } = new(StringComparer.Ordinal);

        public string? HoldReason { get; set; }

        /// <summary>Every collection name the cleaner asked about.</summary>
        public ConcurrentQueue<string> Asked { get; } = new();

        public bool Consumes(string lowerCollection)
        {
            Asked.Enqueue(lowerCollection);
            return collections.Length == 0 || collections.Contains(lowerCollection, StringComparer.Ordinal);
        }

        public long GetLastProcessedTombstoneEtag(string lowerCollection)
        {
            Asked.Enqueue(lowerCollection);
            Assert.True(Consumes(lowerCollection), $"{name} was asked its position in '{lowerCollection}', which it does not read");
            return Positions.TryGetValue(lowerCollection, out var position) ? position : Position;
        }
    }

    /// <summary>
    /// Nine documents in three collections (one of them written as "USERS"), all deleted in an
    /// interleaved order. Tombstones: users 10, 13, 15, 18; orders 11, 14, 17; no collection 12, 16.
    /// Plus one live document (etag 19).
    /// </summary>
    private static async Task<List<FeedTombstone>> DeleteNineDocumentsAsync(DocumentDatabase database)
    {
        await PutAsync(database, "users/1", "Users");
        await PutAsync(database, "users/2", "Users");
        await PutAsync(database, "users/3", "Users");
        await PutAsync(database, "users/4", "USERS");
        await PutAsync(database, "orders/1", "Orders");
        await PutAsync(database, "orders/2", "Orders");
        await PutAsync(database, "orders/3", "Orders");
        await PutAsync(database, "notes/1", null);
        await PutAsync(database, "notes/2", null);
        foreach (var id in new[] { "users/1", "orders/1", "notes/1", "users/2", "orders/2", "users/3", "notes/2", "orders/3", "users/4" })
        {
            Assert.True(await DeleteAsync(database, id));
        }
        await PutAsync(database, "users/5", "Users", v: 5);
        Assert.Equal(19, database.LastEtag);
        var all = ReadAllTombstones(database);
        Assert.Equal([10L, 11, 12, 13, 14, 15, 16, 17, 18], all.Select(t => t.Etag));
        return all;
    }

    private static long[] RemainingEtags(DocumentDatabase database) => ReadAllTombstones(database).Select(t => t.Etag).ToArray();

    private static TombstoneCollectionState StateOf(DocumentDatabase database, string collection) =>
        Assert.Single(database.Tombstones.GetState(), s => s.Collection == collection);

    [Fact]
    public async Task CleanRemovesExactlyTheTombstonesAtOrBelowTheSlowestConsumerOfEachCollection()
    {
        using var folder = new TempFolder();
        await using var database = Open(folder.Path);
        await DeleteNineDocumentsAsync(database);

        var everything = new TestConsumer("Index 'Everything'") { Position = 15 };
        var users = new TestConsumer("Index 'Users'", "users") { Position = 13 };
        using var everythingRegistration = database.Tombstones.Register(everything);
        using var usersRegistration = database.Tombstones.Register(users);

        var state = database.Tombstones.GetState();
        Assert.Equal(["", "orders", "users"], state.Select(s => s.Collection).Order(StringComparer.Ordinal));
        Assert.Equal(new TombstoneCollectionState("users", 10, 13, "Index 'Users'", null), StateOf(database, "users"));
        Assert.Equal(new TombstoneCollectionState("orders", 11, 15, "Index 'Everything'", null), StateOf(database, "orders"));
        Assert.Equal(new TombstoneCollectionState("", 12, 15, "Index 'Everything'", null), StateOf(database, ""));

        var removed = await database.Tombstones.CleanAsync();

        // users <= 13 (10, 13), orders <= 15 (11, 14), no collection <= 15 (12).
        Assert.Equal(5, removed);
        Assert.Equal(5, database.Tombstones.Removed);
        Assert.Equal([15L, 16, 17, 18], RemainingEtags(database));
        using (var reader = database.BeginRead())
        {
            Assert.Equal([15L, 18], ReadTombstones(reader, "Users", 0).Select(t => t.Etag));
            Assert.Equal([17L], ReadTombstones(reader, "orders", 0).Select(t => t.Etag));
            Assert.Equal([16L], ReadTombstones(reader, "", 0).Select(t => t.Etag));
            Assert.Equal(4, reader.TombstoneCount);
        }
        // Removing tombstones takes no etag and leaves the documents alone.
        Assert.Equal(19, database.LastEtag);
        Assert.Equal([new FeedDocument(19, "users/5", "Users", 5)], ReadAllDocuments(database));
        // The cleaner asks about collections by their lowercased names, "" for none.
        Assert.All(everything.Asked.Concat(users.Asked), c => Assert.Contains(c, new[] { "", "orders", "users" }));

        // Nothing more may go until a consumer moves; then exactly what it passed goes.
        Assert.Equal(0, await database.Tombstones.CleanAsync());
        users.Position = 18;
        Assert.Equal(1, await database.Tombstones.CleanAsync());
        Assert.Equal([16L, 17, 18], RemainingEtags(database));
    }

    [Fact]
    public async Task AConsumerOfOneCollectionDoesNotHoldTheOthers()
    {
        using var folder = new TempFolder();
        await using var database = Open(folder.Path);
        await DeleteNineDocumentsAsync(database);
        var users = new TestConsumer("Index 'Users'", "users") { Position = 0 };
        using var registration = database.Tombstones.Register(users);

        Assert.Equal(new TombstoneCollectionState("users", 10, 0, "Index 'Users'", null), StateOf(database, "users"));
        Assert.Equal(new TombstoneCollectionState("orders", 11, 19, null, null), StateOf(database, "orders"));
        Assert.Equal(new TombstoneCollectionState("", 12, 19, null, null), StateOf(database, ""));

        Assert.Equal(5, await database.Tombstones.CleanAsync());
        Assert.Equal([10L, 13, 15, 18], RemainingEtags(database));
        Assert.Equal(new TombstoneCollectionState("users", 10, 0, "Index 'Users'", null), Assert.Single(database.Tombstones.GetState()));
    }

    [Fact]
    public async Task ADisabledConsumerHoldsItsTombstonesAndTheStateNamesItAndWhyUntilItIsRemoved()
    {
        using var folder = new TempFolder();
        await using var database = Open(folder.Path);
        await DeleteNineDocumentsAsync(database);
        var everything = new TestConsumer("Index 'Everything'") { Position = 100 };
        var users = new TestConsumer("Index 'Users'", "users") { Position = 18 };
        var disabled = new TestConsumer("Index 'Old'") { Position = 11, HoldReason = Disabled };
        using var everythingRegistration = database.Tombstones.Register(everything);
        using var usersRegistration = database.Tombstones.Register(users);
        var disabledRegistration = database.Tombstones.Register(disabled);

        var state = database.Tombstones.GetState();
        Assert.Equal(3, state.Count);
        Assert.All(state, s =>
        {
            Assert.Equal("Index 'Old'", s.HeldBy);
            Assert.Equal(Disabled, s.HoldReason);
            Assert.Equal(11, s.CleanableUpToEtag);
        });

        Assert.Equal(2, await database.Tombstones.CleanAsync());
        Assert.Equal([12L, 13, 14, 15, 16, 17, 18], RemainingEtags(database));
        // Still held: running again removes nothing, and the state still says who and why.
        Assert.Equal(0, await database.Tombstones.CleanAsync());
        Assert.Equal(new TombstoneCollectionState("orders", 14, 11, "Index 'Old'", Disabled), StateOf(database, "orders"));

        // The disabled consumer is deleted for good: its tombstones go.
        disabledRegistration.Dispose();
        disabledRegistration.Dispose();
        var usersState = StateOf(database, "users");
        Assert.Equal("Index 'Users'", usersState.HeldBy);
        Assert.Null(usersState.HoldReason);
        Assert.Equal(18, usersState.CleanableUpToEtag);
        Assert.Equal(7, await database.Tombstones.CleanAsync());
        Assert.Empty(RemainingEtags(database));
        Assert.Empty(database.Tombstones.GetState());
        Assert.Equal(9, database.Tombstones.Removed);
    }

    [Fact]
    public async Task WithNoConsumersEveryTombstoneGoesInBatchesAndStaysGoneAfterAReopen()
    {
        using var folder = new TempFolder();
        await using (var database = Open(folder.Path, NoTimer(cleanupBatch: 2)))
        {
            await DeleteNineDocumentsAsync(database);
            Assert.All(database.Tombstones.GetState(), s =>
            {
                Assert.Null(s.HeldBy);
                Assert.Null(s.HoldReason);
                Assert.Equal(19, s.CleanableUpToEtag);
            });
            var transactions = database.Merger.Transactions;

            Assert.Equal(9, await database.Tombstones.CleanAsync());

            // Batches of at most 2: at least five transactions.
            Assert.True(database.Merger.Transactions - transactions >= 5, $"{database.Merger.Transactions - transactions} clean-up transactions");
            Assert.Empty(RemainingEtags(database));
            Assert.Empty(database.Tombstones.GetState());
            Assert.Equal(0, await database.Tombstones.CleanAsync());
            Assert.Equal(19, database.LastEtag);
        }

        await using (var database = Open(folder.Path))
        {
            using var reader = database.BeginRead();
            Assert.Equal(0, reader.TombstoneCount);
            Assert.Empty(reader.GetTombstoneCollections());
            Assert.Equal(19, reader.LastEtag);
            Assert.Equal([new FeedDocument(19, "users/5", "Users", 5)], ReadDocuments(reader, null, 0));
        }
    }

    [Fact]
    public async Task CleanableUpToEtagNeverExceedsTheDurableEtag()
    {
        using var folder = new TempFolder();
        await using var database = Open(folder.Path);
        await DeleteNineDocumentsAsync(database);
        var ahead = new TestConsumer("Index 'Ahead'") { Position = long.MaxValue };
        var users = new TestConsumer("Index 'Users'", "users") { Position = 1000 };
        using var aheadRegistration = database.Tombstones.Register(ahead);
        using var usersRegistration = database.Tombstones.Register(users);

        for (var round = 0; round < 3; round++)
        {
            var state = database.Tombstones.GetState();
            Assert.NotEmpty(state);
            Assert.All(state, s =>
            {
                Assert.True(s.CleanableUpToEtag <= database.LastEtag, $"{s.Collection}: {s.CleanableUpToEtag} > {database.LastEtag}");
                Assert.Equal(database.LastEtag, s.CleanableUpToEtag);
            });
            await PutAsync(database, $"users/x{round}", "Users");
            Assert.True(await DeleteAsync(database, $"users/x{round}"));
        }

        // Every tombstone is durable and passed: all go, and none of a later write.
        Assert.Equal(12, await database.Tombstones.CleanAsync());
        Assert.Empty(RemainingEtags(database));
    }
    [Fact]
    public async Task CleaningADisposedDatabaseFailsInsteadOfWaitingForever()
    {
        using var folder = new TempFolder();
        var database = Open(folder.Path);
        await PutAsync(database, "users/1", "Users");
        await DeleteAsync(database, "users/1");
        await database.DisposeAsync();

        // A request (say an admin "clean now") racing an unload: it must be answered, not hang.
        var clean = database.Tombstones.CleanAsync();
        var error = await Record.ExceptionAsync(() => clean.WaitAsync(TimeSpan.FromSeconds(10)));
        Assert.False(error is TimeoutException, "CleanAsync on a disposed database did not complete within 10 s");
        // It fails (the database is closed); which closed-database error it is is not the point here.
        Assert.NotNull(error);
    }
}
