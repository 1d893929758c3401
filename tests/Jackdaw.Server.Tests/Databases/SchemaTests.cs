using System.Buffers.Binary;
using System.Text;
using Jackdaw.Server.Databases;
using Jackdaw.Server.Documents;
using Jackdaw.Server.Documents.Commands;
using Jackdaw.Server.Tests.Infrastructure;
using Jackdaw.Storage.Blittable;
using Jackdaw.Storage.Engine;
using static Jackdaw.Server.Tests.Databases.DatabaseTestKit;

namespace Jackdaw.Server.Tests.Databases;

public class SchemaTests
{
    private const string PositionsTree = "Test.Positions";

    private static StorageEnvironment OpenEngine(string folder) =>
        StorageEnvironment.Open(new StorageEnvironmentOptions { Path = Path.Combine(folder, "Storage") });

    private static int? ReadSchemaVersion(string folder)
    {
        using var environment = OpenEngine(folder);
        using var read = environment.BeginRead();
        var meta = read.OpenTree("Meta");
        Assert.NotNull(meta);
        return meta.TryGet("schema-version"u8, out var value) ? BinaryPrimitives.ReadInt32LittleEndian(value) : null;
    }

    private static byte[] EtagKey(long etag)
    {
        var key = new byte[8];
        BinaryPrimitives.WriteInt64BigEndian(key, etag);
        return key;
    }

    private static byte[] CollectionEtagKey(string lowerCollection, long etag)
    {
        var name = Encoding.UTF8.GetBytes(lowerCollection);
        var key = new byte[1 + name.Length + 8];
        key[0] = (byte)name.Length;
        name.CopyTo(key, 1);
        BinaryPrimitives.WriteInt64BigEndian(key.AsSpan(1 + name.Length), etag);
        return key;
    }

    /// <summary>A schema-1 tombstone: [ticks: 8 LE][id length: 2][collection length: 2][id][collection].</summary>
    private static byte[] Version1Tombstone(string id, string? collection)
    {
        var idBytes = Encoding.UTF8.GetBytes(id);
        var collectionBytes = collection is null ? [] : Encoding.UTF8.GetBytes(collection);
        var value = new byte[12 + idBytes.Length + collectionBytes.Length];
        BinaryPrimitives.WriteInt64LittleEndian(value, new DateTime(2026, 1, 2, 3, 4, 5, DateTimeKind.Utc).Ticks);
        BinaryPrimitives.WriteUInt16LittleEndian(value.AsSpan(8), (ushort)idBytes.Length);
        BinaryPrimitives.WriteUInt16LittleEndian(value.AsSpan(10), (ushort)collectionBytes.Length);
        idBytes.CopyTo(value, 12);
        collectionBytes.CopyTo(value, 12 + idBytes.Length);
        return value;
    }

    [Fact]
    public async Task ReopeningADatabaseKeepsItsIdLastEtagDocumentsAndTombstones()
    {
        using var folder = new TempFolder();
        string databaseId;
        List<FeedDocument> documents;
        List<FeedTombstone> tombstones;
        await using (var database = Open(folder.Path))
        {
            databaseId = database.DatabaseId;
            await PutAsync(database, "users/1", "Users", v: 1);
            await PutAsync(database, "users/2", "Users", v: 2);
            await PutAsync(database, "notes/1", null, v: 3);
            await DeleteAsync(database, "users/2");
            await PutAsync(database, "users/2", "Users", v: 5);
            await DeleteAsync(database, "notes/1");
            Assert.Equal(6, database.LastEtag);
            documents = ReadAllDocuments(database);
            tombstones = ReadAllTombstones(database);
        }
        Assert.Equal(DocumentsStorage.SchemaVersion, ReadSchemaVersion(folder.Path));

        await using (var database = Open(folder.Path))
        {
            Assert.Equal(databaseId, database.DatabaseId);
            Assert.Equal(6, database.LastEtag);
            Assert.Equal([new FeedDocument(1, "users/1", "Users", 1), new FeedDocument(5, "users/2", "Users", 5)], documents);
            Assert.Equal(documents, ReadAllDocuments(database));
            Assert.Equal([new FeedTombstone(4, "users/2", "Users"), new FeedTombstone(6, "notes/1", null)], tombstones);
            Assert.Equal(tombstones, ReadAllTombstones(database));
            using (var reader = database.BeginRead())
            {
                Assert.Equal([tombstones[0]], ReadTombstones(reader, "users", 0));
                Assert.Equal([tombstones[1]], ReadTombstones(reader, "", 0));
            }

            // Etags go on from where they were, stamped with the same database id.
            var next = await PutAsync(database, "users/3", "Users");
            Assert.Equal(7, next.Etag);
            Assert.EndsWith(databaseId, next.ChangeVector, StringComparison.Ordinal);
        }
    }

    [Fact]
    public async Task AVersion1DatabaseIsMigratedToVersion2WithItsTombstonesIndexedByCollection()
    {
        using var folder = new TempFolder();
        const string databaseId = "MigratedDatabaseId0001";

        // Schema version 1, as DocumentDatabase and DocumentsTransaction wrote it before 905b0eb..d886144:
        // no schema-version, tombstones in Tombstones (etag -> record) and TombstonesById (id -> etag).
        using (var environment = OpenEngine(folder.Path))
        {
            using var context = new JsonOperationContext();
            var document = context.Parse("""{"V":6,"@metadata":{"@collection":"Users","@id":"users/3","@change-vector":"A:6-MigratedDatabaseId0001"}}"""u8, BlittableMode.Disk);
            using var write = environment.BeginWrite();
            foreach (var name in new[] { "Docs", "DocsByEtag", "Collections", "CollectionCounts", "Tombstones", "TombstonesById", "Identities", "Meta" })
            {
                write.CreateTree(name);
            }
            var meta = write.CreateTree("Meta");
            meta.Put("database-id"u8, Encoding.UTF8.GetBytes(databaseId));
            var lastEtag = new byte[8];
            BinaryPrimitives.WriteInt64LittleEndian(lastEtag, 6);
            meta.Put("last-etag"u8, lastEtag);

            var tombstones = write.CreateTree("Tombstones");
            var byId = write.CreateTree("TombstonesById");
            foreach (var (etag, id, collection) in new (long, string, string?)[] { (2, "users/1", "Users"), (3, "Orders/1", "Orders"), (4, "notes/1", null), (5, "users/2", "USERS") })
            {
                tombstones.Put(EtagKey(etag), Version1Tombstone(id, collection));
                byId.Put(Encoding.UTF8.GetBytes(id.ToLowerInvariant()), EtagKey(etag));
            }

            // One live document, users/3 in Users at etag 6.
            var idBytes = "users/3"u8.ToArray();
            var collectionBytes = "Users"u8.ToArray();
            var record = new byte[DocumentRecord.SizeOf(idBytes.Length, collectionBytes.Length, document.Length)];
            DocumentRecord.Write(record, 6, DateTime.UtcNow.Ticks, idBytes, collectionBytes, document.Span);
            write.CreateTree("Docs").Put("users/3"u8, record);
            write.CreateTree("DocsByEtag").Put(EtagKey(6), "users/3"u8);
            write.CreateTree("Collections").Put(CollectionEtagKey("users", 6), "users/3"u8);
            var count = new byte[8 + collectionBytes.Length];
            BinaryPrimitives.WriteInt64LittleEndian(count, 1);
            collectionBytes.CopyTo(count, 8);
            write.CreateTree("CollectionCounts").Put("users"u8, count);
            write.Commit();
        }
        Assert.Null(ReadSchemaVersion(folder.Path));

        await using (var database = Open(folder.Path))
        {
            Assert.Equal(databaseId, database.DatabaseId);
            Assert.Equal(6, database.LastEtag);
            using var reader = database.BeginRead();
            Assert.Equal([new FeedTombstone(2, "users/1", "Users"), new FeedTombstone(5, "users/2", "USERS")], ReadTombstones(reader, "Users", 0));
            Assert.Equal([new FeedTombstone(3, "Orders/1", "Orders")], ReadTombstones(reader, "orders", 0));
            Assert.Equal([new FeedTombstone(4, "notes/1", null)], ReadTombstones(reader, "", 0));
            Assert.Equal([2L, 3, 4, 5], ReadTombstones(reader, null, 0).Select(t => t.Etag));
            Assert.Equal([("", 4L), ("orders", 3L), ("users", 2L)], reader.GetTombstoneCollections().OrderBy(c => c.LowerCollection, StringComparer.Ordinal));
            Assert.Equal([new FeedDocument(6, "users/3", "Users", 6)], ReadDocuments(reader, "users", 0));
        }

        Assert.Equal(DocumentsStorage.SchemaVersion, ReadSchemaVersion(folder.Path));
        using (var environment = OpenEngine(folder.Path))
        {
            using var read = environment.BeginRead();
            Assert.Null(read.OpenTree("TombstonesById"));
            Assert.Equal(4, read.OpenTree("TombstonesByCollection")?.Count);
        }

        // The migrated database works as a version-2 one: the index by collection is what clean-up uses.
        await using (var database = Open(folder.Path))
        {
            Assert.True(await DeleteAsync(database, "users/3"));
            using (var reader = database.BeginRead())
            {
                Assert.Equal([2L, 5, 7], ReadTombstones(reader, "users", 0).Select(t => t.Etag));
            }
            Assert.Equal(5, await database.Tombstones.CleanAsync());
            Assert.Empty(ReadAllTombstones(database));
        }
    }

    [Fact]
    public async Task AVersion2DatabaseIsMigratedToTheCurrentVersionAndTakesAttachments()
    {
        using var folder = new TempFolder();
        await using (var database = Open(folder.Path))
            await PutAsync(database, "users/1", "Users", v: 1);
        using (var environment = OpenEngine(folder.Path))
        {
            // What version 2 wrote: no attachment trees, no last-stream-id.
            using var write = environment.BeginWrite();
            foreach (var tree in new[] { "Attachments", "AttachmentContents", "AttachmentChunks", "AttachmentStaging" })
            {
                write.DeleteTree(tree);
            }
            var version = new byte[4];
            BinaryPrimitives.WriteInt32LittleEndian(version, 2);
            write.CreateTree("Meta").Put("schema-version"u8, version);
            write.Commit();
        }
        Assert.Equal(2, ReadSchemaVersion(folder.Path));

        await using (var database = Open(folder.Path))
        {
            Assert.Equal([new FeedDocument(1, "users/1", "Users", 1)], ReadAllDocuments(database));
            var command = new PutAttachmentCommand("users/1", "a.txt", "text/plain", AttachmentSource.FromBytes("hello"u8.ToArray()), null, new JsonOperationContext());
            await database.EnqueueAsync(command);
            Assert.Equal("users/1", command.Result.DocumentId);
        }
        Assert.Equal(DocumentsStorage.SchemaVersion, ReadSchemaVersion(folder.Path));
    }

    /// <summary>The change vector of the newest tombstone of <paramref name="id"/>, as a write transaction finds it by id; null when none.</summary>
    private static async Task<string?> TombstoneAsync(DocumentDatabase database, string id)
    {
        var probe = new TombstoneProbe(id);
        await database.Merger.EnqueueAsync(probe);
        return probe.ChangeVector;
    }

    private sealed class TombstoneProbe(string id) : IMergedCommand<DatabaseTransaction>
    {
        public string? ChangeVector { get; private set; }

        public void Execute(DatabaseTransaction transaction) =>
            ChangeVector = transaction.TryGetTombstone(id, out var changeVector, out _) ? changeVector : null;
    }

    [Fact]
    public async Task AVersion4DatabaseIsMigratedWithEachDeletedIdPointingAtItsNewestTombstone()
    {
        using var folder = new TempFolder();
        string firstDelete;
        string lastDelete;
        await using (var database = Open(folder.Path))
        {
            // users/1 deleted twice (its second tombstone is the newest), Users/2 once, users/3 kept.
            await PutAsync(database, "users/1", "Users", v: 1);
            await DeleteAsync(database, "users/1");
            firstDelete = (await TombstoneAsync(database, "users/1"))!;
            await PutAsync(database, "users/1", "Users", v: 2);
            await DeleteAsync(database, "users/1");
            await PutAsync(database, "Users/2", "Users", v: 3);
            await DeleteAsync(database, "Users/2");
            await PutAsync(database, "users/3", "Users", v: 4);
            lastDelete = (await TombstoneAsync(database, "users/1"))!;
            Assert.NotEqual(firstDelete, lastDelete);
        }
        using (var environment = OpenEngine(folder.Path))
        {
            // What version 4 wrote: no index of tombstones by id.
            using var write = environment.BeginWrite();
            write.DeleteTree("TombstoneIds");
            var version = new byte[4];
            BinaryPrimitives.WriteInt32LittleEndian(version, 4);
            write.CreateTree("Meta").Put("schema-version"u8, version);
            write.Commit();
        }
        Assert.Equal(4, ReadSchemaVersion(folder.Path));

        await using (var database = Open(folder.Path))
        {
            Assert.Equal(lastDelete, await TombstoneAsync(database, "users/1"));
            // Ids are case-insensitive: found under any casing.
            Assert.NotNull(await TombstoneAsync(database, "USERS/2"));
            Assert.Null(await TombstoneAsync(database, "users/3"));
        }
        Assert.Equal(DocumentsStorage.SchemaVersion, ReadSchemaVersion(folder.Path));
    }

    [Fact]
    public async Task AVersion3DatabasesRevisionsHoldNoAttachmentReferencesAfterTheMigration()
    {
        using var folder = new TempFolder();
        var content = "hello"u8.ToArray();
        string changeVector;
        await using (var database = Open(folder.Path))
        {
            await database.EnqueueAsync(new ConfigureRevisionsCommand(RevisionsConfiguration.Parse("""{"Default":{"Disabled":false}}"""u8)));
            await PutAsync(database, "users/1", "Users", v: 1);
            var put = new PutAttachmentCommand("users/1", "a.txt", "text/plain", AttachmentSource.FromBytes(content), null, new JsonOperationContext());
            await database.EnqueueAsync(put);
            changeVector = put.Result.DocumentChangeVector;
        }
        using (var environment = OpenEngine(folder.Path))
        {
            // What version 3 wrote: revisions without the references flag, contents counting entries only.
            using var write = environment.BeginWrite();
            var revisions = write.CreateTree("Revisions");
            var records = new List<(byte[] Key, byte[] Value)>();
            using (var iterator = revisions.Iterate())
            {
                Assert.True(iterator.SeekFirst());
                do
                {
                    records.Add((iterator.Key.ToArray(), iterator.Value.ToArray()));
                }
                while (iterator.MoveNext());
            }
            foreach (var (key, value) in records)
            {
                value[21] = 0;
                revisions.Put(key, value);
            }
            var contents = write.CreateTree("AttachmentContents");
            var hash = System.Security.Cryptography.SHA256.HashData(content);
            Assert.True(contents.TryGet(hash, out var stored));
            var entry = stored.ToArray();
            Assert.Equal(2, BinaryPrimitives.ReadInt64LittleEndian(entry.AsSpan(16)));
            BinaryPrimitives.WriteInt64LittleEndian(entry.AsSpan(16), 1);
            contents.Put(hash, entry);
            var version = new byte[4];
            BinaryPrimitives.WriteInt32LittleEndian(version, 3);
            write.CreateTree("Meta").Put("schema-version"u8, version);
            write.Commit();
        }

        await using (var database = Open(folder.Path))
        {
            // The revision lists the attachment but holds nothing: a revert of it leaves out the content
            // the document's delete released, and purging it releases nothing.
            Assert.True(await DeleteAsync(database, "users/1"));
            await database.EnqueueAsync(new RevertToRevisionsCommand([new("users/1", changeVector)], new JsonOperationContext()));
            await database.EnqueueAsync(new ConfigureRevisionsCommand(RevisionsConfiguration.Parse("""{"Default":{"Disabled":false,"PurgeOnDelete":true}}"""u8)));
            Assert.True(await DeleteAsync(database, "users/1"));
            await database.Attachments.CleanAsync();
            using var reader = database.BeginRead();
            Assert.Equal(new AttachmentStorageStats(0, 0, 0, 0), reader.GetAttachmentStorageStats());
            Assert.Equal(0, reader.RevisionCount);
        }
        Assert.Equal(DocumentsStorage.SchemaVersion, ReadSchemaVersion(folder.Path));
    }

    [Fact]
    public async Task ADatabaseOfANewerSchemaVersionFailsToOpenNamingBothVersions()
    {
        using var folder = new TempFolder();
        await using (var database = Open(folder.Path))
            await PutAsync(database, "users/1", "Users");
        using (var environment = OpenEngine(folder.Path))
        {
            using var write = environment.BeginWrite();
            var version = new byte[4];
            BinaryPrimitives.WriteInt32LittleEndian(version, DocumentsStorage.SchemaVersion + 1);
            write.CreateTree("Meta").Put("schema-version"u8, version);
            write.Commit();
        }

        var error = Assert.Throws<InvalidDataException>(() => Open(folder.Path));
        Assert.Contains($"version {DocumentsStorage.SchemaVersion + 1}", error.Message, StringComparison.Ordinal);
        Assert.Contains($"up to {DocumentsStorage.SchemaVersion}", error.Message, StringComparison.Ordinal);

        // The failed open released the storage and changed nothing.
        Assert.Equal(DocumentsStorage.SchemaVersion + 1, ReadSchemaVersion(folder.Path));
        Assert.Throws<InvalidDataException>(() => Open(folder.Path));
    }

    /// <summary>A feature's write: a position in its own tree, no document touched.</summary>
    private sealed class WritePositionCommand(string tree, string key, long position) : IMergedCommand<DatabaseTransaction>
    {
        public void Execute(DatabaseTransaction transaction)
        {
            var value = new byte[8];
            BinaryPrimitives.WriteInt64LittleEndian(value, position);
            transaction.GetTree(tree).Put(Encoding.UTF8.GetBytes(key), value);
        }
    }

    private static long? ReadPosition(DocumentDatabase database, string key)
    {
        using var reader = database.BeginRead();
        var tree = reader.GetTree(PositionsTree);
        if (tree is null)
        {
            return null;
        }
        return tree.TryGet(Encoding.UTF8.GetBytes(key), out var value) ? BinaryPrimitives.ReadInt64LittleEndian(value) : null;
    }

    [Fact]
    public async Task ARegisteredTreeIsWrittenByACommandAndReadBackAfterTheWriteAndAfterAReopen()
    {
        using var folder = new TempFolder();
        await using (var database = Open(folder.Path))
        {
            database.RegisterTrees("Test feature", PositionsTree);
            using (var reader = database.BeginRead())
            {
                Assert.Null(reader.GetTree(PositionsTree));
            }

            await PutAsync(database, "users/1", "Users");
            await database.Merger.EnqueueAsync(new WritePositionCommand(PositionsTree, "Orders/Totals", 42));
            Assert.Equal(42, ReadPosition(database, "Orders/Totals"));
            // A write to a feature's tree takes no etag.
            Assert.Equal(1, database.LastEtag);

            await database.Merger.EnqueueAsync(new WritePositionCommand(PositionsTree, "Orders/Totals", 43));
            Assert.Equal(43, ReadPosition(database, "Orders/Totals"));
        }

        await using (var database = Open(folder.Path))
        {
            database.RegisterTrees("Test feature", PositionsTree);
            Assert.Equal(43, ReadPosition(database, "Orders/Totals"));
            Assert.Null(ReadPosition(database, "Other"));
            Assert.Equal(1, database.LastEtag);
        }
    }

    [Fact]
    public async Task DocumentTreesUnregisteredTreesAndTreesOfAnotherOwnerAreRefused()
    {
        using var folder = new TempFolder();
        await using var database = Open(folder.Path);

        foreach (var name in DocumentsStorage.TreeNames)
        {
            Assert.Throws<InvalidOperationException>(() => database.RegisterTrees("Test feature", name));
        }
        Assert.Contains("TombstonesById", DocumentsStorage.TreeNames);
        Assert.Throws<InvalidOperationException>(() => database.RegisterTrees("Test feature", "Docs"));

        // Not registered: neither a write nor a read may open it, and the failed write changes nothing.
        var error = await Assert.ThrowsAsync<InvalidOperationException>(() => database.Merger.EnqueueAsync(new WritePositionCommand("Test.Unregistered", "a", 1)));
        Assert.Contains("Test.Unregistered", error.Message, StringComparison.Ordinal);
        await Assert.ThrowsAsync<InvalidOperationException>(() => database.Merger.EnqueueAsync(new WritePositionCommand("Docs", "a", 1)));
        using (var reader = database.BeginRead())
        {
            Assert.Throws<InvalidOperationException>(() => reader.GetTree("Test.Unregistered"));
            Assert.Throws<InvalidOperationException>(() => reader.GetTree("Docs"));
        }

        // One owner per name; registering again by the same owner is harmless.
        database.RegisterTrees("Subscriptions", PositionsTree);
        database.RegisterTrees("Subscriptions", PositionsTree);
        var taken = Assert.Throws<InvalidOperationException>(() => database.RegisterTrees("Indexes", PositionsTree));
        Assert.Contains("Subscriptions", taken.Message, StringComparison.Ordinal);
        await database.Merger.EnqueueAsync(new WritePositionCommand(PositionsTree, "a", 7));
        Assert.Equal(7, ReadPosition(database, "a"));
        Assert.Equal(0, database.LastEtag);
        Assert.Empty(ReadAllDocuments(database));
    }
}
