using Jackdaw.Server.Documents.Commands;
using Jackdaw.Server.Tests.Infrastructure;
using Jackdaw.Storage.Blittable;
using static Jackdaw.Server.Tests.Databases.DatabaseTestKit;

namespace Jackdaw.Server.Tests.Databases;

public class FeedTests
{
    private static readonly string?[] CollectionNames = ["Users", "Orders", "Companies", null];

    /// <summary>The in-memory model: the live documents (keyed case-insensitively) and every delete, in etag order.</summary>
    private sealed class Model
    {
        public Dictionary<string, FeedDocument> Live { get; } = new(StringComparer.OrdinalIgnoreCase);

        public List<FeedTombstone> Tombstones { get; } = [];

        public long LastEtag { get; set; }

        public List<FeedDocument> DocumentsFrom(string? collection, long afterEtag, int take) =>
            Live.Values
                .Where(d => collection is null || (d.Collection is not null && string.Equals(d.Collection, collection, StringComparison.OrdinalIgnoreCase)))
                .Where(d => d.Etag > afterEtag)
                .OrderBy(d => d.Etag)
                .Take(take)
                .ToList();

        public List<FeedTombstone> TombstonesFrom(string? collection, long afterEtag, int take) =>
            Tombstones
                .Where(t => collection is null
                    || (collection.Length == 0 ? t.Collection is null : t.Collection is not null && string.Equals(t.Collection, collection, StringComparison.OrdinalIgnoreCase)))
                .Where(t => t.Etag > afterEtag)
                .OrderBy(t => t.Etag)
                .Take(take)
                .ToList();
    }

    private static string RandomCasing(Random random, string value) =>
        random.Next(3) switch
        {
            0 => value.ToLowerInvariant(),
            1 => value.ToUpperInvariant(),
            _ => value,
        };

    private static int RandomTake(Random random) =>
        random.Next(6) switch
        {
            0 => 0,
            1 => 1,
            2 => random.Next(2, 6),
            3 => random.Next(6, 40),
            _ => int.MaxValue,
        };

    [Theory]
    [InlineData(8692)]
    [InlineData(1)]
    [InlineData(20261125)]
    public async Task FeedsMatchAModelOfRandomPutsDeletesAndRecreatesInEtagOrder(int seed)
    {
        using var folder = new TempFolder();
        await using var database = Open(folder.Path);
        var random = new Random(seed);
        var model = new Model();
        // The collection an id is created in (random casing per write); it may change only after a delete.
        var collectionOf = new Dictionary<int, string?>();
        var operations = 0;
        var transactions = 0;

        while (operations < 500)
        {
            using var context = new JsonOperationContext();
            var batch = new List<BatchOperation>();
            var expected = new List<(long? PutEtag, bool Deleted)>();
            var size = random.Next(1, 12);
            for (var i = 0; i < size; i++, operations++)
            {
                var n = random.Next(30);
                var id = RandomCasing(random, $"Items/{n}");
                if (random.Next(3) == 0)
                {
                    batch.Add(new BatchOperation(id, null, null));
                    if (model.Live.Remove(id, out var deleted))
                    {
                        model.LastEtag++;
                        model.Tombstones.Add(new FeedTombstone(model.LastEtag, deleted.Id, deleted.Collection));
                        collectionOf.Remove(n);
                        expected.Add((null, true));
                    }
                    else
                    {
                        expected.Add((null, false));
                    }
                }
                else
                {
                    if (!collectionOf.TryGetValue(n, out var baseCollection))
                    {
                        baseCollection = CollectionNames[random.Next(CollectionNames.Length)];
                        collectionOf[n] = baseCollection;
                    }
                    var collection = baseCollection is null ? null : RandomCasing(random, baseCollection);
                    var document = context.Parse(System.Text.Encoding.UTF8.GetBytes($$"""{"V":{{operations}}}"""), BlittableMode.Disk);
                    batch.Add(new BatchOperation(id, new DocumentToPut(id, document, collection, null), null));
                    model.LastEtag++;
                    var storedId = model.Live.TryGetValue(id, out var existing) ? existing.Id : id;
                    model.Live[id] = new FeedDocument(model.LastEtag, storedId, collection, operations);
                    expected.Add((model.LastEtag, false));
                }
            }

            var command = new BatchCommand(batch, context);
            await database.Merger.EnqueueAsync(command);
            transactions++;
            for (var i = 0; i < expected.Count; i++)
            {
                Assert.Equal(expected[i].PutEtag, command.Results[i].Put?.Etag);
                Assert.Equal(expected[i].Deleted, command.Results[i].Deleted);
            }
            Assert.Equal(model.LastEtag, database.LastEtag);
            CheckFeeds(database, model, random);
        }

        Assert.True(transactions >= 50, $"only {transactions} transactions");
        // The scenario of RavenDB PR #8692 happened: an id deleted, created again and deleted again.
        Assert.Contains(model.Tombstones.GroupBy(t => t.Id, StringComparer.OrdinalIgnoreCase), g => g.Count() >= 2);
        Assert.Contains(model.Tombstones, t => t.Collection is null);
        Assert.Contains(model.Live.Values, d => d.Collection is null);
    }

    private static void CheckFeeds(Jackdaw.Server.Databases.DocumentDatabase database, Model model, Random random)
    {
        using var reader = database.BeginRead();
        Assert.Equal(model.LastEtag, reader.LastEtag);
        Assert.Equal(model.Live.Count, reader.DocumentCount);
        Assert.Equal(model.Tombstones.Count, reader.TombstoneCount);

        // Everything, from the start.
        Assert.Equal(model.DocumentsFrom(null, 0, int.MaxValue), ReadDocuments(reader, null, 0));
        Assert.Equal(model.TombstonesFrom(null, 0, int.MaxValue), ReadTombstones(reader, null, 0));

        string?[] documentCollections = [null, "users", "USERS", "Orders", "oRDERS", "companies", "Companies", "Unknown"];
        string?[] tombstoneCollections = [null, "", "users", "Users", "ORDERS", "companies", "CoMpAnIeS", "Unknown"];
        for (var q = 0; q < 12; q++)
        {
            var afterEtag = (long)random.Next(0, (int)model.LastEtag + 3);
            var take = RandomTake(random);
            var collection = documentCollections[random.Next(documentCollections.Length)];
            Assert.Equal(model.DocumentsFrom(collection, afterEtag, take), ReadDocuments(reader, collection, afterEtag, take));

            afterEtag = random.Next(0, (int)model.LastEtag + 3);
            take = RandomTake(random);
            collection = tombstoneCollections[random.Next(tombstoneCollections.Length)];
            Assert.Equal(model.TombstonesFrom(collection, afterEtag, take), ReadTombstones(reader, collection, afterEtag, take));
        }
    }

    [Fact]
    public async Task DeletingCreatingAgainAndDeletingAgainKeepsBothTombstones()
    {
        using var folder = new TempFolder();
        await using var database = Open(folder.Path);
        Assert.Equal(1, (await PutAsync(database, "users/1", "Users", v: 1)).Etag);
        Assert.True(await DeleteAsync(database, "users/1"));
        Assert.Equal(3, (await PutAsync(database, "USERS/1", "Users", v: 3)).Etag);

        using (var reader = database.BeginRead())
        {
            // Created again: the document is live and the first delete is still in the feed.
            Assert.Equal([new FeedDocument(3, "USERS/1", "Users", 3)], ReadDocuments(reader, "users", 0));
            Assert.Equal([new FeedTombstone(2, "users/1", "Users")], ReadTombstones(reader, "users", 0));
            Assert.Equal([new FeedTombstone(2, "users/1", "Users")], ReadTombstones(reader, null, 0));
        }

        Assert.True(await DeleteAsync(database, "Users/1"));
        using (var reader = database.BeginRead())
        {
            Assert.Empty(ReadDocuments(reader, "users", 0));
            Assert.Empty(ReadDocuments(reader, null, 0));
            FeedTombstone[] both = [new(2, "users/1", "Users"), new(4, "USERS/1", "Users")];
            Assert.Equal(both, ReadTombstones(reader, "Users", 0));
            Assert.Equal(both, ReadTombstones(reader, null, 0));
            Assert.Equal([both[1]], ReadTombstones(reader, "users", 2));
            Assert.Equal([both[0]], ReadTombstones(reader, "users", 0, take: 1));
            Assert.Equal(2, reader.TombstoneCount);
        }
    }

    [Fact]
    public async Task TombstonesOfDocumentsWithoutACollectionAreUnderTheEmptyCollection()
    {
        using var folder = new TempFolder();
        await using var database = Open(folder.Path);
        await PutAsync(database, "notes/1", null);
        await PutAsync(database, "users/1", "Users");
        await DeleteAsync(database, "notes/1");
        await DeleteAsync(database, "users/1");

        using var reader = database.BeginRead();
        Assert.Equal([new FeedTombstone(3, "notes/1", null)], ReadTombstones(reader, "", 0));
        Assert.Equal([new FeedTombstone(4, "users/1", "Users")], ReadTombstones(reader, "users", 0));
        Assert.Equal([new FeedTombstone(3, "notes/1", null), new FeedTombstone(4, "users/1", "Users")], ReadTombstones(reader, null, 0));
        Assert.Equal([("", 3L), ("users", 4L)], reader.GetTombstoneCollections().OrderBy(c => c.LowerCollection, StringComparer.Ordinal));
    }

    [Fact]
    public async Task TakeZeroAndAnUnknownCollectionGiveNothing()
    {
        using var folder = new TempFolder();
        await using var database = Open(folder.Path);
        await PutAsync(database, "users/1", "Users");
        await PutAsync(database, "users/2", "Users");
        await PutAsync(database, "notes/1", null);
        await DeleteAsync(database, "users/2");
        await DeleteAsync(database, "notes/1");

        using var reader = database.BeginRead();
        Assert.Empty(ReadDocuments(reader, null, 0, take: 0));
        Assert.Empty(ReadDocuments(reader, "users", 0, take: 0));
        Assert.Empty(ReadTombstones(reader, null, 0, take: 0));
        Assert.Empty(ReadTombstones(reader, "users", 0, take: 0));
        Assert.Empty(ReadTombstones(reader, "", 0, take: 0));
        Assert.Empty(ReadDocuments(reader, "Orders", 0));
        Assert.Empty(ReadTombstones(reader, "Orders", 0));
        // A collection whose name is a prefix of another's is not that collection.
        Assert.Empty(ReadDocuments(reader, "User", 0));
        Assert.Empty(ReadTombstones(reader, "User", 0));
        Assert.Empty(ReadTombstones(reader, "Usersx", 0));
        // Documents without a collection are not the empty collection's documents.
        Assert.Empty(ReadDocuments(reader, "", 0));
        // Past the end.
        Assert.Empty(ReadDocuments(reader, null, 5));
        Assert.Empty(ReadTombstones(reader, null, 5));
    }

    [Fact]
    public async Task AFeedReadInASnapshotDoesNotSeeLaterWrites()
    {
        using var folder = new TempFolder();
        await using var database = Open(folder.Path);
        await PutAsync(database, "users/1", "Users", v: 1);
        await PutAsync(database, "users/2", "Users", v: 2);
        await DeleteAsync(database, "users/2");

        using var before = database.BeginRead();
        await PutAsync(database, "users/1", "Users", v: 4);
        await PutAsync(database, "users/3", "Users", v: 5);
        await PutAsync(database, "users/2", "Users", v: 6);
        await DeleteAsync(database, "users/3");

        Assert.Equal(3, before.LastEtag);
        Assert.Equal([new FeedDocument(1, "users/1", "Users", 1)], ReadDocuments(before, "users", 0));
        Assert.Equal([new FeedDocument(1, "users/1", "Users", 1)], ReadDocuments(before, null, 0));
        Assert.Equal([new FeedTombstone(3, "users/2", "Users")], ReadTombstones(before, "users", 0));
        Assert.Equal([new FeedTombstone(3, "users/2", "Users")], ReadTombstones(before, null, 0));

        using var after = database.BeginRead();
        FeedDocument[] documents = [new(4, "users/1", "Users", 4), new(6, "users/2", "Users", 6)];
        Assert.Equal(documents, ReadDocuments(after, "users", 0));
        Assert.Equal(documents, ReadDocuments(after, null, 0));
        Assert.Equal([new FeedTombstone(3, "users/2", "Users"), new FeedTombstone(7, "users/3", "Users")], ReadTombstones(after, "users", 0));
    }
    [Theory]
    [InlineData(-1L)]
    [InlineData(-2L)]
    [InlineData(long.MinValue)]
    public async Task ANegativeAfterEtagReadsFromTheStartOrIsRefusedButNeverReadsAsEmpty(long afterEtag)
    {
        using var folder = new TempFolder();
        await using var database = Open(folder.Path);
        await PutAsync(database, "users/1", "Users", v: 1);
        await PutAsync(database, "users/2", "Users", v: 2);
        await DeleteAsync(database, "users/2");

        using var reader = database.BeginRead();
        List<FeedDocument> documents;
        List<FeedTombstone> tombstones;
        try
        {
            documents = ReadDocuments(reader, null, afterEtag);
            tombstones = ReadTombstones(reader, "users", afterEtag);
        }
        catch (ArgumentOutOfRangeException)
        {
            return;
        }
        // Etags start at 1: everything is after a negative etag, as it is after 0.
        Assert.Equal(ReadDocuments(reader, null, 0), documents);
        Assert.Equal(ReadTombstones(reader, "users", 0), tombstones);
    }

    [Fact]
    public async Task ADocumentPutIntoAnotherCollectionLeavesATombstoneInTheOldOneOrIsRefused()
    {
        using var folder = new TempFolder();
        await using var database = Open(folder.Path);
        await PutAsync(database, "things/1", "Users", v: 1);
        try
        {
            await PutAsync(database, "things/1", "Orders", v: 2);
        }
        catch (Exception e) when (e is not Xunit.Sdk.XunitException)
        {
            // Refused (as RavenDB does): the document stays where it was.
            Assert.Equal([new FeedDocument(1, "things/1", "Users", 1)], ReadAllDocuments(database));
            return;
        }

        // Moved: a reader of the Users feeds (an index on Users) must learn that it left, and a
        // reader of everything sees the delete before the new version.
        using var reader = database.BeginRead();
        var moved = Assert.Single(ReadDocuments(reader, "orders", 0));
        Assert.Equal(("things/1", "Orders", 2), (moved.Id, moved.Collection, moved.V));
        Assert.Empty(ReadDocuments(reader, "users", 0));
        var left = Assert.Single(ReadTombstones(reader, "users", 0));
        Assert.Equal("things/1", left.Id);
        Assert.True(left.Etag < moved.Etag, $"tombstone {left.Etag} must come before the new version {moved.Etag}");
        Assert.Equal(moved.Etag, reader.LastEtag);
    }
}
