using System.Security.Cryptography;
using System.Text;
using Jackdaw.Server.Documents;
using Jackdaw.Server.Replication;
using Jackdaw.Server.Tests.Databases;
using Jackdaw.Server.Tests.Infrastructure;
using Jackdaw.Storage.Blittable;

namespace Jackdaw.Server.Tests.Replication;

public class ReplicatedAttachmentsApplyTests
{
    [Fact]
    public async Task ADocumentListingAContentNeitherCarriedNorStoredRefusesTheBatchAndIsStoredOnceTheBatchCarriesIt()
    {
        using var folder = new TempFolder();
        await using var database = DatabaseTestKit.Open(folder.Path);
        database.RegisterTrees("Replication", ReplicationPositions.TreeName, ReplicationPositions.RevisionsTreeName);
        using var context = new JsonOperationContext();
        var document = context.Parse(Encoding.UTF8.GetBytes("""{"Name":"Ann","@metadata":{"@collection":"Users"}}"""), BlittableMode.Disk).ToArray();
        var bytes = "abc"u8.ToArray();
        var hash = Convert.ToBase64String(SHA256.HashData(bytes));
        var item = new ReplicationItem(1, false, "users/1", "Users", "B:1-SourceB", DateTime.UtcNow.Ticks, document, [new AttachmentInfo("a.txt", hash, "text/plain", 3)]);

        await Assert.ThrowsAsync<MissingAttachmentsException>(() =>
            database.Merger.EnqueueAsync(new ApplyReplicationBatchCommand("SourceB", new ReplicationBatch(1, [item]), ConflictPolicy.ResolveToLatest, context)));
        using (var reader = database.BeginRead())
        {
            Assert.False(reader.TryGet("users/1", out _));
        }

        var contents = new Dictionary<string, AttachmentSource> { [hash] = AttachmentSource.FromBytes(bytes) };
        var batch = new ReplicationBatch(1, [item], contents: [new ReplicatedContent(SHA256.HashData(bytes), 3)]);
        await database.Merger.EnqueueAsync(new ApplyReplicationBatchCommand("SourceB", batch, ConflictPolicy.ResolveToLatest, context, contents));
        using (var reader = database.BeginRead())
        {
            Assert.True(reader.TryGet("users/1", out var record));
            Assert.Equal("B:1-SourceB", record.ChangeVectorOr(reader.DatabaseId));
            var listed = Assert.Single(AttachmentsMetadata.Read(record.Document));
            Assert.Equal(("a.txt", hash, "text/plain", 3L), (listed.Name, listed.Hash, listed.ContentType, listed.Size));
            Assert.Equal(1, reader.GetAttachmentContent(hash)!.Value.References);
            using var stream = reader.OpenAttachment("users/1", "a.txt")!;
            var read = new byte[3];
            stream.ReadExactly(read);
            Assert.Equal(bytes, read);
        }
    }

    [Fact]
    public void ABatchKeepsItsAttachmentsRevisionsAndContentsThroughItsWireFormat()
    {
        var hash = SHA256.HashData("abc"u8);
        var item = new ReplicationItem(7, false, "users/1", "Users", "A:7-X", 42, [1, 2, 3], [new AttachmentInfo("a.txt", Convert.ToBase64String(hash), "text/plain", 3)]);
        var tombstone = new ReplicationItem(8, true, "users/2", null, "A:8-X", 43, []);
        var revision = new ReplicatedRevision(5, "users/1", "Users", "A:7-X", 42, DocumentFlags.HasRevisions | DocumentFlags.Revision, [1, 2, 3]);
        var batch = new ReplicationBatch(9, [item, tombstone], 6, [revision], [new ReplicatedContent(hash, 3)], carriesAllContents: true);

        var read = ReplicationBatch.Deserialize(batch.Serialize());

        Assert.Equal(9, read.LastEtag);
        Assert.Equal(6, read.LastRevisionEtag);
        Assert.True(read.CarriesAllContents);
        Assert.Equal(item.Attachments, read.Items[0].Attachments);
        Assert.Null(read.Items[1].Attachments);
        Assert.Equal(revision with { Document = [] }, read.Revisions[0] with { Document = [] });
        Assert.Equal(revision.Document, read.Revisions[0].Document);
        Assert.Equal(hash, read.Contents[0].Hash);
        Assert.Equal(3, read.Contents[0].Size);
        // Every truncated prefix is refused as bad data, never read past its end.
        var bytes = batch.Serialize();
        for (var length = 0; length < bytes.Length; length++)
        {
            Assert.Throws<InvalidDataException>(() => ReplicationBatch.Deserialize(bytes.AsMemory(0, length)));
        }
    }
}
