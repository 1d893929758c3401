using System.Buffers;
using System.Text;
using System.Text.Json;
using Jackdaw.Server.Databases;
using Jackdaw.Server.Documents;
using Jackdaw.Server.Documents.Commands;
using Jackdaw.Server.Tests.Infrastructure;
using Jackdaw.Storage.Blittable;
using static Jackdaw.Server.Tests.Databases.DatabaseTestKit;

namespace Jackdaw.Server.Tests.Documents;

/// <summary>The revisions of the documents' storage, through the merger, without HTTP.</summary>
public sealed class RevisionsStorageTests : IDisposable
{
    private readonly TempFolder _folder = new();
    private readonly ManualClock _clock = new();

    public void Dispose() => _folder.Dispose();

    /// <summary>A revision as the tests compare them: its change vector, its <c>V</c>, whether it is a delete.</summary>
    private readonly record struct Seen(string ChangeVector, long? V, bool Delete, RevisionOrigin Origin);

    private DocumentDatabase OpenDatabase() => Open(_folder.Path, NoTimer() with { Clock = _clock });

    private static async Task ConfigureAsync(DocumentDatabase database, string json) =>
        await database.EnqueueAsync(new ConfigureRevisionsCommand(RevisionsConfiguration.Parse(Encoding.UTF8.GetBytes(json))));

    private static List<Seen> RevisionsOf(DocumentDatabase database, string id, int start = 0, int pageSize = int.MaxValue)
    {
        using var reader = database.BeginRead();
        var result = new List<Seen>();
        foreach (var key in reader.GetRevisionKeysFor(id, start, pageSize))
        {
            Assert.True(reader.TryGetRevisionByKey(key, out var revision));
            long? v = null;
            if (!revision.Document.IsEmpty)
            {
                var json = new ArrayBufferWriter<byte>();
                BlittableJsonWriter.WriteTo(revision.Document, json);
                v = JsonDocument.Parse(json.WrittenMemory).RootElement.GetProperty("V").GetInt64();
            }
            result.Add(new Seen(revision.ChangeVector, v, revision.IsDeleteRevision, revision.Origin));
        }
        return result;
    }

    private static long CountOf(DocumentDatabase database, string id)
    {
        using var reader = database.BeginRead();
        return reader.GetRevisionsCountFor(id);
    }

    private static string? FlagsOf(DocumentDatabase database, string id)
    {
        using var reader = database.BeginRead();
        Assert.True(reader.TryGet(id, out var record));
        var json = new ArrayBufferWriter<byte>();
        BlittableJsonWriter.WriteTo(record.Document, json);
        return JsonDocument.Parse(json.WrittenMemory).RootElement.GetProperty("@metadata").TryGetProperty("@flags", out var flags) ? flags.GetString() : null;
    }

    [Fact]
    public async Task EveryPutOfAConfiguredCollectionStoresItsVersionAndAnEarlierVersionFirst()
    {
        await using var database = OpenDatabase();
        var before = await PutAsync(database, "users/1", "Users", v: 1);
        await PutAsync(database, "orders/1", "Orders", v: 1);
        await ConfigureAsync(database, """{"Collections":{"Users":{"Disabled":false}}}""");
        Assert.Empty(RevisionsOf(database, "users/1"));
        Assert.Null(FlagsOf(database, "users/1"));

        var second = await PutAsync(database, "users/1", "Users", v: 2);
        var third = await PutAsync(database, "USERS/1", null, v: 3);
        await PutAsync(database, "orders/1", "Orders", v: 2);

        // Newest first; the newest is the document itself, the oldest the version from before the configuration.
        Assert.Equal(
            [new Seen(third.ChangeVector, 3, false, RevisionOrigin.Put), new Seen(second.ChangeVector, 2, false, RevisionOrigin.Put), new Seen(before.ChangeVector, 1, false, RevisionOrigin.PreviousVersion)],
            RevisionsOf(database, "users/1"));
        Assert.Equal(3, CountOf(database, "Users/1"));
        Assert.Equal("HasRevisions", FlagsOf(database, "users/1"));
        Assert.Empty(RevisionsOf(database, "orders/1"));
        Assert.Null(FlagsOf(database, "orders/1"));

        var created = await PutAsync(database, "users/2", "Users", v: 1);
        Assert.Equal([new Seen(created.ChangeVector, 1, false, RevisionOrigin.Created)], RevisionsOf(database, "users/2"));
    }

    [Fact]
    public async Task APolicyByCountKeepsTheNewestAndRemovesAtMostTheLimitPerPut()
    {
        await using var database = OpenDatabase();
        await ConfigureAsync(database, """{"Default":{"MinimumRevisionsToKeep":3}}""");
        var puts = new List<PutResult>();
        for (var v = 1; v <= 6; v++)
        {
            puts.Add(await PutAsync(database, "items/1", "Items", v));
        }
        Assert.Equal(puts.AsEnumerable().Reverse().Take(3).Select(p => p.ChangeVector), RevisionsOf(database, "items/1").Select(r => r.ChangeVector));
        Assert.Equal(3, CountOf(database, "items/1"));

        // Raised then lowered with a cap on removals: the excess goes two per put.
        await ConfigureAsync(database, """{"Default":{"MinimumRevisionsToKeep":100}}""");
        for (var v = 7; v <= 12; v++)
        {
            await PutAsync(database, "items/1", "Items", v);
        }
        Assert.Equal(9, CountOf(database, "items/1"));
        await ConfigureAsync(database, """{"Default":{"MinimumRevisionsToKeep":2,"MaximumRevisionsToDeleteUponDocumentUpdate":2}}""");
        await PutAsync(database, "items/1", "Items", 13);
        Assert.Equal(8, CountOf(database, "items/1"));
        await PutAsync(database, "items/1", "Items", 14);
        Assert.Equal(7, CountOf(database, "items/1"));
        Assert.Equal([14L, 13, 12, 11, 10, 9, 8], RevisionsOf(database, "items/1").Select(r => r.V!.Value));

        // The by-etag and by-change-vector indexes lose what the policy removed.
        using var reader = database.BeginRead();
        Assert.Equal(7, reader.RevisionCount);
        Assert.Null(reader.GetRevisionKey(puts[0].ChangeVector));
    }

    [Fact]
    public async Task APolicyByAgeRemovesOnlyRevisionsOlderThanTheAgeAndKeepsTheMinimumCount()
    {
        await using var database = OpenDatabase();
        await ConfigureAsync(database, """{"Default":{"MinimumRevisionAgeToKeep":"1.00:00:00"}}""");
        for (var v = 1; v <= 4; v++)
        {
            await PutAsync(database, "notes/1", "Notes", v);
        }
        Assert.Equal(4, CountOf(database, "notes/1"));

        // Two days on: every earlier revision is older than a day; the new one is not.
        _clock.Advance(TimeSpan.FromDays(2));
        await PutAsync(database, "notes/1", "Notes", 5);
        Assert.Equal([5L], RevisionsOf(database, "notes/1").Select(r => r.V!.Value));

        // With a count too, a revision goes only when it is both beyond the count and old enough.
        await ConfigureAsync(database, """{"Default":{"MinimumRevisionAgeToKeep":"1.00:00:00","MinimumRevisionsToKeep":3}}""");
        for (var v = 6; v <= 9; v++)
        {
            await PutAsync(database, "notes/1", "Notes", v);
        }
        Assert.Equal(5, CountOf(database, "notes/1"));
        _clock.Advance(TimeSpan.FromDays(2));
        await PutAsync(database, "notes/1", "Notes", 10);
        Assert.Equal([10L, 9, 8], RevisionsOf(database, "notes/1").Select(r => r.V!.Value));
    }

    [Fact]
    public async Task AnAgeBeyondTheStartOfTimeKeepsEveryRevision()
    {
        await using var database = OpenDatabase();
        await ConfigureAsync(database, $$$"""{"Default":{"MinimumRevisionAgeToKeep":"{{{TimeSpan.MaxValue:c}}}","MinimumRevisionsToKeep":1}}""");
        for (var v = 1; v <= 3; v++)
        {
            await PutAsync(database, "notes/1", "Notes", v);
        }
        _clock.Advance(TimeSpan.FromDays(3650));
        await PutAsync(database, "notes/1", "Notes", 4);
        Assert.Equal([4L, 3, 2, 1], RevisionsOf(database, "notes/1").Select(r => r.V!.Value));
    }

    [Fact]
    public async Task ADeleteStoresADeleteRevisionAndPutsTheDocumentInTheBinUntilItComesBack()
    {
        await using var database = OpenDatabase();
        await ConfigureAsync(database, """{"Default":{},"Collections":{"Temp":{"PurgeOnDelete":true}}}""");
        await PutAsync(database, "users/1", "Users", 1);
        await PutAsync(database, "temp/1", "Temp", 1);
        await PutAsync(database, "temp/1", "Temp", 2);
        Assert.Equal(2, CountOf(database, "temp/1"));

        Assert.True(await DeleteAsync(database, "users/1"));
        Assert.True(await DeleteAsync(database, "temp/1"));
        Assert.Empty(RevisionsOf(database, "temp/1"));
        var revisions = RevisionsOf(database, "users/1");
        Assert.Equal(2, revisions.Count);
        Assert.True(revisions[0].Delete);
        Assert.Null(revisions[0].V);
        using (var reader = database.BeginRead())
        {
            var bin = reader.GetRevisionsBinKeys(0, 10);
            Assert.Single(bin);
            Assert.True(reader.TryGetRevisionByKey(bin[0], out var entry));
            Assert.Equal("users/1", entry.Id);
            Assert.True(entry.IsDeleteRevision);
            Assert.Equal(1, reader.RevisionCount - 1);
        }

        await PutAsync(database, "users/1", "Users", 3);
        Assert.Equal(3, CountOf(database, "users/1"));
        Assert.Equal("HasRevisions", FlagsOf(database, "users/1"));
        using (var reader = database.BeginRead())
        {
            Assert.Empty(reader.GetRevisionsBinKeys(0, 10));
        }
    }

    [Fact]
    public async Task RevisionsAndTheConfigurationSurviveARestart()
    {
        string changeVector;
        await using (var database = OpenDatabase())
        {
            await ConfigureAsync(database, """{"Default":{"MinimumRevisionsToKeep":2}}""");
            await PutAsync(database, "users/1", "Users", 1);
            changeVector = (await PutAsync(database, "users/1", "Users", 2)).ChangeVector;
        }
        await using (var database = OpenDatabase())
        {
            Assert.Equal(2, database.RevisionsConfiguration.Default!.MinimumRevisionsToKeep);
            Assert.Equal([2L, 1], RevisionsOf(database, "users/1").Select(r => r.V!.Value));
            await PutAsync(database, "users/1", "Users", 3);
            Assert.Equal([3L, 2], RevisionsOf(database, "users/1").Select(r => r.V!.Value));
            using var reader = database.BeginRead();
            Assert.NotNull(reader.GetRevisionKey(changeVector));
            // Three revisions, and the tombstone of the first (removed by the policy) takes one too.
            Assert.Equal(4, reader.LastRevisionEtag);
        }
    }

    [Fact]
    public async Task ForcedRevisionsNeedNoConfigurationAndAreNotRepeatedForTheSameVersion()
    {
        await using var database = OpenDatabase();
        await PutAsync(database, "users/1", "Users", 1);
        using var context = new JsonOperationContext();

        var first = new BatchCommand([new BatchOperation("users/1", null, null) { ForceRevision = true }], context);
        await database.EnqueueAsync(first);
        Assert.True(first.Results[0].ForcedRevision!.Value.RevisionCreated);
        Assert.Equal("HasRevisions", FlagsOf(database, "users/1"));
        Assert.Equal([new Seen(first.Results[0].ForcedRevision!.Value.ChangeVector, 1, false, RevisionOrigin.Forced)], RevisionsOf(database, "users/1"));

        var again = new BatchCommand([new BatchOperation("users/1", null, null) { ForceRevision = true }], context);
        await database.EnqueueAsync(again);
        Assert.False(again.Results[0].ForcedRevision!.Value.RevisionCreated);
        Assert.Single(RevisionsOf(database, "users/1"));

        // A put without configuration stores no revision, but the document keeps its flag.
        await PutAsync(database, "users/1", "Users", 2);
        Assert.Single(RevisionsOf(database, "users/1"));
        Assert.Equal("HasRevisions", FlagsOf(database, "users/1"));
        var third = new BatchCommand([new BatchOperation("users/1", null, null) { ForceRevision = true }], context);
        await database.EnqueueAsync(third);
        Assert.True(third.Results[0].ForcedRevision!.Value.RevisionCreated);
        Assert.Equal([2L, 1], RevisionsOf(database, "users/1").Select(r => r.V!.Value));

        // Deleted: its revisions go to the bin, though nothing is configured.
        Assert.True(await DeleteAsync(database, "users/1"));
        using var reader = database.BeginRead();
        Assert.Single(reader.GetRevisionsBinKeys(0, 10));
    }

    [Fact]
    public async Task ADocumentWithTenThousandRevisionsIsReadInPagesAndTrimmedByWhatEachPutRemoves()
    {
        await using var database = OpenDatabase();
        await ConfigureAsync(database, """{"Default":{}}""");
        using (var context = new JsonOperationContext())
        {
            // 100 puts of the same document per batch: 100 merged transactions.
            for (var batch = 0; batch < 100; batch++)
            {
                var operations = new List<BatchOperation>();
                for (var i = 1; i <= 100; i++)
                {
                    var v = batch * 100 + i;
                    var document = context.Parse(Encoding.UTF8.GetBytes($$"""{"V":{{v}}}"""), BlittableMode.Disk);
                    operations.Add(new BatchOperation("big/1", new DocumentToPut("big/1", document, "Big", null), null));
                }
                await database.EnqueueAsync(new BatchCommand(operations, context));
                context.Reset();
            }
        }
        Assert.Equal(10_000, CountOf(database, "big/1"));
        Assert.Equal([10_000L, 9_999, 9_998], RevisionsOf(database, "big/1", 0, 3).Select(r => r.V!.Value));
        Assert.Equal([5_000L, 4_999], RevisionsOf(database, "big/1", 5_000, 2).Select(r => r.V!.Value));
        Assert.Equal([1L], RevisionsOf(database, "big/1", 9_999, 25).Select(r => r.V!.Value));

        // Keep 5, at most 10 removed per put: each put removes exactly 10 of the oldest, reading 11.
        await ConfigureAsync(database, """{"Default":{"MinimumRevisionsToKeep":5,"MaximumRevisionsToDeleteUponDocumentUpdate":10}}""");
        for (var i = 1; i <= 20; i++)
        {
            await PutAsync(database, "big/1", "Big", 10_000 + i);
            Assert.Equal(10_000 + i - 10 * i, CountOf(database, "big/1"));
        }
        var oldest = RevisionsOf(database, "big/1", 9_819, 1).Single();
        Assert.Equal(201, oldest.V);
    }

    [Fact]
    public async Task ABodyCannotClaimRevisionsAndArtificialDocumentsAreNotRevisioned()
    {
        await using var database = OpenDatabase();
        using var context = new JsonOperationContext();
        async Task PutBodyAsync(string id, string json)
        {
            var document = context.Parse(Encoding.UTF8.GetBytes(json), BlittableMode.Disk);
            await database.EnqueueAsync(new PutDocumentCommand(new DocumentToPut(id, document, "Items", null), context));
        }

        await PutBodyAsync("items/1", """{"@metadata":{"@collection":"Items","@flags":"HasRevisions, Revision, FromIndex"}}""");
        Assert.Equal("FromIndex", FlagsOf(database, "items/1"));
        await ConfigureAsync(database, """{"Default":{}}""");
        await PutBodyAsync("items/2", """{"@metadata":{"@collection":"Items","@flags":"Artificial, FromIndex"}}""");
        Assert.Equal("Artificial, FromIndex", FlagsOf(database, "items/2"));
        Assert.Empty(RevisionsOf(database, "items/2"));
        await PutBodyAsync("items/1", """{"@metadata":{"@collection":"Items","@flags":"FromIndex"}}""");
        Assert.Equal("HasRevisions, FromIndex", FlagsOf(database, "items/1"));
        Assert.Equal(2, CountOf(database, "items/1"));
    }

    /// <summary>A clock the tests move: revisions' age is measured with it.</summary>
    private static long VOf(DocumentDatabase database, string id)
    {
        using var reader = database.BeginRead();
        Assert.True(reader.TryGet(id, out var record));
        var json = new ArrayBufferWriter<byte>();
        BlittableJsonWriter.WriteTo(record.Document, json);
        return JsonDocument.Parse(json.WrittenMemory).RootElement.GetProperty("V").GetInt64();
    }

    /// <summary>
    /// Revision timestamps do not grow with revision etags: the first put after revisions are
    /// switched on stores the document's old version with its old time. A scan newest etag first
    /// that stopped at the first revision older than the window missed orders/1 here.
    /// </summary>
    [Fact]
    public async Task RevertToTimeFindsEveryDocumentChangedAfterTheTimeWhateverTheOrderOfOldVersions()
    {
        await using var database = OpenDatabase();
        _clock.Advance(TimeSpan.FromDays(-365));
        await PutAsync(database, "orders/1", "Orders", 1);
        await PutAsync(database, "orders/2", "Orders", 1);
        _clock.Advance(TimeSpan.FromDays(365));
        await ConfigureAsync(database, """{"Default":{}}""");
        var time = _clock.GetUtcNow().UtcDateTime;
        _clock.Advance(TimeSpan.FromHours(1));
        await PutAsync(database, "orders/1", "Orders", 2);
        _clock.Advance(TimeSpan.FromMinutes(5));
        await PutAsync(database, "orders/2", "Orders", 2);

        var operation = RevertRevisionsOperation.Start(database, time, RevertRevisionsOperation.DefaultWindow, null, e => new OperationFailure(e.GetType().Name, e.Message, 500));
        await Poll.UntilAsync(() => Task.FromResult(operation.Status != Jackdaw.Server.Databases.OperationStatus.InProgress), TimeSpan.FromSeconds(30), "the revert to end");

        Assert.Equal(Jackdaw.Server.Databases.OperationStatus.Completed, operation.Status);
        Assert.Equal(1, VOf(database, "orders/1"));
        Assert.Equal(1, VOf(database, "orders/2"));
    }

    /// <summary>
    /// A long id's range is its first bytes then its SHA-256; a hash starting with the separator
    /// made a short id equal to those first bytes see the long id's revisions as its own.
    /// </summary>
    [Fact]
    public async Task AShortIdNeverSharesTheRangeOfAHashedLongId()
    {
        // 983 bytes in 492 characters (ids are at most 512 characters, keys 1,024 bytes).
        var shortId = new string('\u00e9', 491) + "a";
        Assert.Equal(RevisionKeys.MaxIdPrefix - 32, Encoding.UTF8.GetByteCount(shortId));
        var longId = Enumerable.Range(0, 10_000)
            .Select(n => shortId + new string('\u00e9', 16) + n.ToString(System.Globalization.CultureInfo.InvariantCulture))
            .First(id => System.Security.Cryptography.SHA256.HashData(Encoding.UTF8.GetBytes(id))[0] == RevisionKeys.Separator);
        Assert.True(Encoding.UTF8.GetByteCount(longId) > RevisionKeys.MaxIdPrefix);

        var shortRange = new byte[RevisionKeys.MaxKeySize];
        var longRange = new byte[RevisionKeys.MaxKeySize];
        var shortLength = RevisionKeys.WriteRange(shortRange, Encoding.UTF8.GetBytes(shortId));
        var longLength = RevisionKeys.WriteRange(longRange, Encoding.UTF8.GetBytes(longId));
        Assert.False(longRange.AsSpan(0, longLength).StartsWith(shortRange.AsSpan(0, shortLength)));

        await using var database = OpenDatabase();
        await ConfigureAsync(database, """{"Default":{"MinimumRevisionsToKeep":2}}""");
        for (var v = 1; v <= 2; v++)
        {
            await PutAsync(database, longId, "Things", 10 + v);
            await PutAsync(database, shortId, "Things", v);
        }
        // A third put applies the policy to the short id's range only.
        await PutAsync(database, shortId, "Things", 3);
        Assert.Equal([3L, 2], RevisionsOf(database, shortId).Select(r => r.V!.Value));
        Assert.Equal([12L, 11], RevisionsOf(database, longId).Select(r => r.V!.Value));
    }

    private sealed class ManualClock : TimeProvider
    {
        private TimeSpan _offset = TimeSpan.Zero;

        public void Advance(TimeSpan by) => _offset += by;

        public override DateTimeOffset GetUtcNow() => DateTimeOffset.UtcNow + _offset;
    }
}
