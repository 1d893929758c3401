using System.Text;
using Jackdaw.Server.Documents;
using Jackdaw.Server.Documents.Commands;
using Jackdaw.Server.Replication;
using Jackdaw.Server.Tests.Databases;
using Jackdaw.Server.Tests.Infrastructure;
using Jackdaw.Storage.Blittable;
using static Jackdaw.Server.Tests.Databases.DatabaseTestKit;

namespace Jackdaw.Server.Tests.Replication;

/// <summary>Revision tombstones (removed revisions' change vectors), through the merger, without HTTP.</summary>
public sealed class RevisionTombstonesTests : IDisposable
{
    private readonly TempFolder _folder = new();

    public void Dispose() => _folder.Dispose();

    private Jackdaw.Server.Databases.DocumentDatabase OpenReplicating()
    {
        var database = Open(_folder.Path);
        database.RegisterTrees("Replication", ReplicationPositions.TreeName, ReplicationPositions.RevisionsTreeName);
        return database;
    }

    private static async Task ConfigureAsync(Jackdaw.Server.Databases.DocumentDatabase database, string json) =>
        await database.EnqueueAsync(new ConfigureRevisionsCommand(RevisionsConfiguration.Parse(Encoding.UTF8.GetBytes(json))));

    private static List<string> ChangeVectorsOf(Jackdaw.Server.Databases.DocumentDatabase database, string id)
    {
        using var reader = database.BeginRead();
        var result = new List<string>();
        foreach (var key in reader.GetRevisionKeysFor(id, 0, int.MaxValue))
        {
            Assert.True(reader.TryGetRevisionByKey(key, out var revision));
            result.Add(revision.ChangeVector);
        }
        return result;
    }

    private static ReplicatedRevision Revision(JsonOperationContext context, long etag, string changeVector, int v) =>
        new(etag, "users/1", "Users", changeVector, DateTime.UtcNow.Ticks, DocumentFlags.HasRevisions | DocumentFlags.Revision,
            context.Parse(Encoding.UTF8.GetBytes($$$"""{"V":{{{v}}},"@metadata":{"@collection":"Users"}}"""), BlittableMode.Disk).ToArray());

    [Fact]
    public async Task ThePolicyLeavesATombstoneOfEachRevisionItRemovesAndTheFeedCarriesThem()
    {
        await using var database = OpenReplicating();
        await ConfigureAsync(database, """{"Default":{"Disabled":false,"MinimumRevisionsToKeep":2}}""");
        var written = new List<string>();
        for (var v = 1; v <= 5; v++)
        {
            written.Add((await PutAsync(database, "users/1", "Users", v)).ChangeVector);
        }

        Assert.Equal([written[4], written[3]], ChangeVectorsOf(database, "users/1"));
        using var reader = database.BeginRead();
        var batch = ReplicationFeed.Read(reader, 0, 0, new HashSet<string>(), false, 1024, 4 << 20, null, out _);
        Assert.Equal(written[3..], batch.Revisions.Select(r => r.ChangeVector));
        Assert.Equal(written[..3], batch.RevisionTombstones.Select(t => t.ChangeVector));
        Assert.Equal(reader.LastRevisionEtag, batch.LastRevisionEtag);
        Assert.All(written[..3], cv => Assert.True(reader.HasRevisionTombstone(cv)));

        // Cut at two items: the batch's revision position stops where the first of its lists stopped.
        var small = ReplicationFeed.Read(reader, 0, 0, new HashSet<string>(), false, 2, 4 << 20, null, out _);
        Assert.True(small.RevisionTombstones.All(t => t.Etag <= small.LastRevisionEtag));
        Assert.True(small.Revisions.All(r => r.Etag <= small.LastRevisionEtag));
        Assert.True(small.LastRevisionEtag < reader.LastRevisionEtag);
    }

    [Fact]
    public async Task AReplicatedTombstoneRemovesItsRevisionAndARevisionWithATombstoneIsNeverStoredAgain()
    {
        await using var database = OpenReplicating();
        using var context = new JsonOperationContext();
        var first = Revision(context, 1, "B:1-SourceB", 1);
        await database.Merger.EnqueueAsync(new ApplyReplicationBatchCommand("SourceB", new ReplicationBatch(0, [], 1, [first]), ConflictPolicy.ResolveToLatest, context));
        Assert.Equal(["B:1-SourceB"], ChangeVectorsOf(database, "users/1"));

        var removal = new ReplicationBatch(0, [], 2, [], revisionTombstones: [new RevisionTombstone(2, DateTime.UtcNow.Ticks, "B:1-SourceB")]);
        var apply = new ApplyReplicationBatchCommand("SourceB", ReplicationBatch.Deserialize(removal.Serialize()), ConflictPolicy.ResolveToLatest, context);
        await database.Merger.EnqueueAsync(apply);
        Assert.Equal(1, apply.Applied);
        Assert.Empty(ChangeVectorsOf(database, "users/1"));
        using (var reader = database.BeginRead())
        {
            Assert.Equal(0, reader.GetRevisionsCountFor("users/1"));
            Assert.True(reader.HasRevisionTombstone("B:1-SourceB"));
            // Recorded here under a revision etag of this node: it goes on in this node's feed.
            Assert.Equal(1, reader.RevisionTombstoneCount);
        }

        // Another node that had not removed it yet sends it: not stored; the same removal again changes nothing.
        var late = new ApplyReplicationBatchCommand("SourceC", new ReplicationBatch(0, [], 7, [first with { Etag = 7 }]), ConflictPolicy.ResolveToLatest, context);
        await database.Merger.EnqueueAsync(late);
        Assert.Equal((0, 1), (late.Applied, late.AlreadyMerged));
        var again = new ApplyReplicationBatchCommand("SourceC", new ReplicationBatch(0, [], 8, [], revisionTombstones: [new RevisionTombstone(8, 0, "B:1-SourceB")]), ConflictPolicy.ResolveToLatest, context);
        await database.Merger.EnqueueAsync(again);
        Assert.Equal((0, 1), (again.Applied, again.AlreadyMerged));
        Assert.Empty(ChangeVectorsOf(database, "users/1"));
    }

    [Fact]
    public async Task AReplicatedRevisionIsSubjectToThisNodesPolicy()
    {
        await using var database = OpenReplicating();
        await ConfigureAsync(database, """{"Default":{"Disabled":false,"MinimumRevisionsToKeep":2}}""");
        using var context = new JsonOperationContext();
        for (var i = 1; i <= 4; i++)
        {
            await database.Merger.EnqueueAsync(new ApplyReplicationBatchCommand("SourceB",
                new ReplicationBatch(0, [], i, [Revision(context, i, $"B:{i}-SourceB", i)]), ConflictPolicy.ResolveToLatest, context));
        }
        Assert.Equal(["B:4-SourceB", "B:3-SourceB"], ChangeVectorsOf(database, "users/1"));
        using var reader = database.BeginRead();
        Assert.True(reader.HasRevisionTombstone("B:1-SourceB"));
        Assert.True(reader.HasRevisionTombstone("B:2-SourceB"));
    }

    [Fact]
    public void ABatchCarriesRevisionTombstonesAsVersion3AndIsVersion2WithoutThem()
    {
        var revision = new ReplicatedRevision(5, "users/1", "Users", "A:7-X", 42, DocumentFlags.HasRevisions | DocumentFlags.Revision, [1, 2, 3]);
        var without = new ReplicationBatch(9, [], 6, [revision]);
        Assert.Equal(2, without.Serialize()[0]);
        Assert.Empty(ReplicationBatch.Deserialize(without.Serialize()).RevisionTombstones);

        var tombstone = new RevisionTombstone(6, 44, "A:3-X");
        var with = new ReplicationBatch(9, [], 6, [revision], revisionTombstones: [tombstone]);
        var bytes = with.Serialize();
        Assert.Equal(3, bytes[0]);
        var read = ReplicationBatch.Deserialize(bytes);
        Assert.Equal([tombstone], read.RevisionTombstones);
        Assert.Equal("A:7-X", read.Revisions[0].ChangeVector);
        for (var length = 0; length < bytes.Length; length++)
        {
            Assert.Throws<InvalidDataException>(() => ReplicationBatch.Deserialize(bytes.AsMemory(0, length)));
        }
    }

    [Fact]
    public async Task RevisionTombstonesGoAtTheCleanUpUpToWhatTheirConsumersPassed()
    {
        await using var database = OpenReplicating();
        await ConfigureAsync(database, """{"Default":{"Disabled":false,"MinimumRevisionsToKeep":1}}""");
        for (var v = 1; v <= 4; v++)
        {
            await PutAsync(database, "users/1", "Users", v);
        }
        List<RevisionTombstone> tombstones;
        using (var reader = database.BeginRead())
        {
            tombstones = reader.GetRevisionTombstonesAfter(0, int.MaxValue);
        }
        Assert.Equal(3, tombstones.Count);

        var consumer = new Holder { Position = tombstones[0].Etag };
        using (database.Tombstones.Register(consumer))
        {
            await database.Tombstones.CleanAsync();
            using (var reader = database.BeginRead())
            {
                Assert.Equal(tombstones[1..], reader.GetRevisionTombstonesAfter(0, int.MaxValue));
                Assert.False(reader.HasRevisionTombstone(tombstones[0].ChangeVector));
            }
        }
        await database.Tombstones.CleanAsync();
        using (var reader = database.BeginRead())
        {
            Assert.Equal(0, reader.RevisionTombstoneCount);
        }
        // The revision the policy kept is not touched by the clean-up.
        Assert.Single(ChangeVectorsOf(database, "users/1"));
    }

    private sealed class Holder : Jackdaw.Server.Databases.ITombstoneConsumer, Jackdaw.Server.Databases.IRevisionTombstoneConsumer
    {
        public long Position { get; init; }

        public string Name => "Test";

        public string? HoldReason => null;

        public bool Consumes(string lowerCollection) => false;

        public long GetLastProcessedTombstoneEtag(string lowerCollection) => long.MaxValue;

        public long GetLastProcessedRevisionTombstoneEtag() => Position;
    }
}
