using System.Buffers;
using System.Security.Cryptography;
using System.Text;
using System.Text.Json;
using Jackdaw.Server.Databases;
using Jackdaw.Server.Documents;
using Jackdaw.Server.Documents.Commands;
using Jackdaw.Server.Errors;
using Jackdaw.Server.Tests.Infrastructure;
using Jackdaw.Storage.Blittable;
using static Jackdaw.Server.Tests.Databases.DatabaseTestKit;

namespace Jackdaw.Server.Tests.Documents;

/// <summary>The attachment trees through the documents' transactions, without HTTP: contents, reference counts, staging and clean-up.</summary>
public sealed class AttachmentStorageTests : IDisposable
{
    private const int ChunkSize = 8 * 8192 - 32;
    private readonly TempFolder _folder = new();

    public void Dispose() => _folder.Dispose();

    private static byte[] Bytes(int length, int seed)
    {
        var bytes = new byte[length];
        new Random(seed).NextBytes(bytes);
        return bytes;
    }

    private sealed class Run(Func<DatabaseTransaction, JsonOperationContext, object?> action) : IMergedCommand<DatabaseTransaction>
    {
        private readonly JsonOperationContext _context = new();

        public object? Result { get; private set; }

        public void Execute(DatabaseTransaction transaction) => Result = action(transaction, _context);
    }

    private static async Task<T> WriteAsync<T>(DocumentDatabase database, Func<DatabaseTransaction, JsonOperationContext, T> action)
    {
        var command = new Run((t, c) => action(t, c));
        await database.EnqueueAsync(command);
        return (T)command.Result!;
    }

    private static Task<AttachmentPutResult> PutAttachmentAsync(DocumentDatabase database, string id, string name, byte[] content, string contentType = "application/octet-stream") =>
        WriteAsync(database, (t, c) => t.PutAttachment(id, name, contentType, AttachmentSource.FromBytes(content), null, c));

    private static byte[] ReadAll(DocumentDatabase database, string id, string name)
    {
        using var reader = database.BeginRead();
        using var stream = reader.OpenAttachment(id, name);
        Assert.NotNull(stream);
        var copy = new MemoryStream();
        stream.CopyTo(copy, 7919);
        return copy.ToArray();
    }

    private static JsonElement Metadata(DocumentDatabase database, string id)
    {
        using var reader = database.BeginRead();
        Assert.True(reader.TryGet(id, out var record));
        var json = new ArrayBufferWriter<byte>();
        BlittableJsonWriter.WriteTo(record.Document, json);
        return JsonDocument.Parse(json.WrittenMemory).RootElement.GetProperty("@metadata").Clone();
    }

    private static AttachmentStorageStats Stats(DocumentDatabase database)
    {
        using var reader = database.BeginRead();
        return reader.GetAttachmentStorageStats();
    }

    private static long References(DocumentDatabase database, byte[] content)
    {
        using var reader = database.BeginRead();
        return reader.GetAttachmentContent(Convert.ToBase64String(SHA256.HashData(content)))?.References ?? 0;
    }

    [Theory]
    [InlineData(0)]
    [InlineData(1)]
    [InlineData(ChunkSize)]
    [InlineData(ChunkSize + 1)]
    [InlineData(300_000)]
    public async Task AnAttachmentRoundTripsItsBytesAndIsListedInTheDocumentsMetadata(int length)
    {
        await using var database = Open(_folder.Path);
        var before = await PutAsync(database, "users/1", "Users");
        var content = Bytes(length, length);
        var result = await PutAttachmentAsync(database, "USERS/1", "photo.png", content, "image/png");

        Assert.Equal("users/1", result.DocumentId);
        Assert.Equal(Convert.ToBase64String(SHA256.HashData(content)), result.Hash);
        Assert.Equal(44, result.Hash.Length);
        Assert.Equal(length, result.Size);
        Assert.Equal(result.ChangeVector, result.DocumentChangeVector);
        Assert.NotEqual(before.ChangeVector, result.DocumentChangeVector);
        Assert.Equal(content, ReadAll(database, "users/1", "PHOTO.png"));

        var metadata = Metadata(database, "users/1");
        Assert.Equal("HasAttachments", metadata.GetProperty("@flags").GetString());
        Assert.Equal(result.DocumentChangeVector, metadata.GetProperty("@change-vector").GetString());
        var listed = Assert.Single(metadata.GetProperty("@attachments").EnumerateArray());
        Assert.Equal("photo.png", listed.GetProperty("Name").GetString());
        Assert.Equal(result.Hash, listed.GetProperty("Hash").GetString());
        Assert.Equal("image/png", listed.GetProperty("ContentType").GetString());
        Assert.Equal(length, listed.GetProperty("Size").GetInt64());
        Assert.Equal((length + ChunkSize - 1) / ChunkSize, Stats(database).Chunks);

        using var reader = database.BeginRead();
        using var stream = reader.OpenAttachment("users/1", "photo.png")!;
        Assert.Equal(length, stream.Length);
        if (length > 10)
        {
            stream.Seek(-10, SeekOrigin.End);
            var tail = new byte[20];
            Assert.Equal(10, stream.Read(tail));
            Assert.Equal(content[^10..], tail[..10]);
        }
    }

    [Fact]
    public async Task TheSameBytesOnManyDocumentsAreStoredOnceAndCounted()
    {
        await using var database = Open(_folder.Path);
        var content = Bytes(100_000, 7);
        for (var i = 0; i < 100; i++)
        {
            await PutAsync(database, $"docs/{i}", "Docs");
            await PutAttachmentAsync(database, $"docs/{i}", "same.bin", content);
        }
        var stats = Stats(database);
        Assert.Equal(100, stats.Attachments);
        Assert.Equal(1, stats.Contents);
        Assert.Equal(2, stats.Chunks);
        Assert.Equal(100, References(database, content));

        for (var i = 0; i < 99; i++)
        {
            Assert.True(await DeleteAsync(database, $"docs/{i}"));
        }
        Assert.Equal(1, References(database, content));
        Assert.Equal(content, ReadAll(database, "docs/99", "same.bin"));

        Assert.True(await DeleteAsync(database, "docs/99"));
        await database.Attachments.CleanAsync();
        Assert.Equal(new AttachmentStorageStats(0, 0, 0, 0), Stats(database));
    }

    [Fact]
    public async Task ReplacingAndDeletingAnAttachmentReleasesTheOldContent()
    {
        await using var database = Open(_folder.Path);
        await PutAsync(database, "users/1", "Users");
        var first = Bytes(200_000, 1);
        var second = Bytes(10, 2);
        await PutAttachmentAsync(database, "users/1", "a", first);
        await PutAttachmentAsync(database, "users/1", "A", second);
        await database.Attachments.CleanAsync();
        Assert.Equal(new AttachmentStorageStats(1, 1, 1, 0), Stats(database));
        Assert.Equal(second, ReadAll(database, "users/1", "a"));
        using (var reader = database.BeginRead())
        {
            Assert.Equal("A", Assert.Single(reader.GetAttachments("users/1")).Name);
        }

        Assert.True(await WriteAsync(database, (t, c) => t.DeleteAttachment("users/1", "a", null, c)));
        Assert.False(await WriteAsync(database, (t, c) => t.DeleteAttachment("users/1", "a", null, c)));
        await database.Attachments.CleanAsync();
        Assert.Equal(new AttachmentStorageStats(0, 0, 0, 0), Stats(database));
        var metadata = Metadata(database, "users/1");
        Assert.False(metadata.TryGetProperty("@attachments", out _));
        Assert.False(metadata.TryGetProperty("@flags", out _));
    }

    [Fact]
    public async Task MoveKeepsTheContentsCountAndCopyAddsOne()
    {
        await using var database = Open(_folder.Path);
        await PutAsync(database, "a/1", "A");
        await PutAsync(database, "b/1", "B");
        var content = Bytes(1000, 3);
        await PutAttachmentAsync(database, "a/1", "x", content);

        var moved = await WriteAsync(database, (t, c) => t.MoveAttachment("a/1", "x", "b/1", "y", null, c));
        Assert.Equal("b/1", moved.DocumentId);
        Assert.Equal("y", moved.Name);
        Assert.Equal(1, References(database, content));
        using (var reader = database.BeginRead())
        {
            Assert.Empty(reader.GetAttachments("a/1"));
            Assert.Equal("y", Assert.Single(reader.GetAttachments("b/1")).Name);
        }
        Assert.False(Metadata(database, "a/1").TryGetProperty("@attachments", out _));

        await WriteAsync(database, (t, c) => t.CopyAttachment("b/1", "y", "a/1", "z", null, c));
        Assert.Equal(2, References(database, content));
        Assert.Equal(content, ReadAll(database, "a/1", "z"));
        Assert.Equal(content, ReadAll(database, "b/1", "y"));

        await Assert.ThrowsAsync<AttachmentDoesNotExistException>(() => WriteAsync(database, (t, c) => t.CopyAttachment("b/1", "nope", "a/1", "z", null, c)));
        await Assert.ThrowsAsync<DocumentDoesNotExistException>(() => WriteAsync(database, (t, c) => t.MoveAttachment("b/1", "y", "c/1", "z", null, c)));
        Assert.Equal(2, References(database, content));
    }

    [Fact]
    public async Task BadNamesAndMissingDocumentsAreRefusedAndStoreNothing()
    {
        await using var database = Open(_folder.Path);
        await PutAsync(database, "users/1", "Users");
        var missing = await Assert.ThrowsAsync<DocumentDoesNotExistException>(() => PutAttachmentAsync(database, "users/2", "a", [1]));
        Assert.Contains("users/2", missing.Message, StringComparison.Ordinal);
        await Assert.ThrowsAsync<BadRequestException>(() => PutAttachmentAsync(database, "users/1", "", [1]));
        await Assert.ThrowsAsync<BadRequestException>(() => PutAttachmentAsync(database, "users/1", "a\nb", [1]));
        await Assert.ThrowsAsync<BadRequestException>(() => PutAttachmentAsync(database, "users/1", new string('n', 1100), [1]));
        Assert.Equal(new AttachmentStorageStats(0, 0, 0, 0), Stats(database));
    }

    [Fact]
    public async Task ABodyNeverDecidesTheAttachmentsListOrTheServersFlags()
    {
        await using var database = Open(_folder.Path);
        using var context = new JsonOperationContext();
        const string forged = """{"V":1,"@metadata":{"@attachments":[{"Name":"fake","Hash":"x","ContentType":"","Size":1}],"@flags":"HasAttachments, Artificial"}}""";
        await WriteAsync(database, (t, c) => t.Put("users/1", c.Parse(Encoding.UTF8.GetBytes(forged), BlittableMode.Disk).Span.ToArray(), "Users", null, c));
        var metadata = Metadata(database, "users/1");
        Assert.False(metadata.TryGetProperty("@attachments", out _));
        Assert.Equal("Artificial", metadata.GetProperty("@flags").GetString());

        await PutAttachmentAsync(database, "users/1", "real", [1, 2, 3]);
        await WriteAsync(database, (t, c) => t.Put("users/1", c.Parse(Encoding.UTF8.GetBytes(forged), BlittableMode.Disk).Span.ToArray(), "Users", null, c));
        metadata = Metadata(database, "users/1");
        Assert.Equal("real", Assert.Single(metadata.GetProperty("@attachments").EnumerateArray()).GetProperty("Name").GetString());
        Assert.Equal("HasAttachments, Artificial", metadata.GetProperty("@flags").GetString());
    }

    [Fact]
    public async Task AStagedStreamLinkedToAContentAlreadyStoredBecomesAnOrphan()
    {
        await using var database = Open(_folder.Path);
        await PutAsync(database, "a/1", null);
        await PutAsync(database, "b/1", null);
        var content = Bytes(20 * ChunkSize + 5, 9);
        await PutAttachmentAsync(database, "a/1", "f", content);

        var source = await AttachmentUpload.ReadAsync(database, new MemoryStream(Bytes(20 * ChunkSize + 5, 9)), long.MaxValue, "test", default);
        Assert.True(source.IsStaged);
        Assert.Equal(1, Stats(database).StagedStreams);
        await WriteAsync(database, (t, c) => t.PutAttachment("b/1", "f", null, source, null, c));
        await database.Attachments.CleanAsync();
        Assert.Equal(new AttachmentStorageStats(2, 1, 21, 0), Stats(database));
        Assert.Equal(2, References(database, content));
    }

    [Fact]
    public async Task ALargeUploadIsStagedInStepsThenLinked()
    {
        await using var database = Open(_folder.Path);
        await PutAsync(database, "a/1", null);
        var content = Bytes(2 * DocumentsTransaction.StagingStepBytes + 12345, 11);
        var transactions = database.Merger.Transactions;
        var source = await AttachmentUpload.ReadAsync(database, new MemoryStream(content), long.MaxValue, "test", default);
        Assert.True(source.IsStaged);
        Assert.True(database.Merger.Transactions - transactions >= 3, "each step is a transaction of its own");
        Assert.Equal(1, Stats(database).StagedStreams);
        await WriteAsync(database, (t, c) => t.PutAttachment("a/1", "big", "x/y", source, null, c));
        Assert.Equal(0, Stats(database).StagedStreams);
        Assert.Equal(content, ReadAll(database, "a/1", "big"));
    }

    [Fact]
    public async Task AnUploadOverTheLimitKeepsNothing()
    {
        await using var database = Open(_folder.Path);
        var content = Bytes(3 * DocumentsTransaction.StagingStepBytes, 12);
        var error = await Assert.ThrowsAsync<PayloadTooLargeException>(() => AttachmentUpload.ReadAsync(database, new MemoryStream(content), 2 * DocumentsTransaction.StagingStepBytes + 1, "Attachments:MaxSize", default));
        Assert.Contains("Attachments:MaxSize", error.Message, StringComparison.Ordinal);
        await database.Attachments.CleanAsync();
        Assert.Equal(new AttachmentStorageStats(0, 0, 0, 0), Stats(database));
    }

    [Fact]
    public async Task AnUploadLeftBeingWrittenByACrashIsDeletedAtOpenWithCountsRight()
    {
        var kept = Bytes(5000, 21);
        await using (var database = Open(_folder.Path))
        {
            await PutAsync(database, "a/1", null);
            await PutAttachmentAsync(database, "a/1", "kept", kept);
            await PutAsync(database, "b/1", null);
            await PutAttachmentAsync(database, "b/1", "kept", kept);
            // Two steps of an upload that never got linked: what a kill -9 mid-upload leaves.
            var first = new StageAttachmentChunksCommand(null, 0, Bytes(16 * ChunkSize, 22));
            await database.EnqueueAsync(first);
            await database.EnqueueAsync(new StageAttachmentChunksCommand(first.StreamId, 16, Bytes(100, 23)));
            var stats = Stats(database);
            Assert.Equal(1, stats.StagedStreams);
            Assert.Equal(18, stats.Chunks);
        }

        await using (var database = Open(_folder.Path))
        {
            await Poll.UntilAsync(() => Task.FromResult(Stats(database).StagedStreams == 0), TimeSpan.FromSeconds(30), "the orphan left at open to be deleted");
            Assert.Equal(new AttachmentStorageStats(2, 1, 1, 0), Stats(database));
            Assert.Equal(2, References(database, kept));
            Assert.Equal(kept, ReadAll(database, "b/1", "kept"));

            // Stream ids go on after the orphan's.
            await PutAsync(database, "c/1", null);
            await PutAttachmentAsync(database, "c/1", "new", Bytes(10, 24));
            Assert.Equal(new AttachmentStorageStats(3, 2, 2, 0), Stats(database));
        }
    }

    [Fact]
    public async Task AnAttachmentChangeIsPublishedAsAChangeOfItsDocumentNamingTheAttachment()
    {
        await using var database = Open(_folder.Path);
        var changes = new System.Collections.Concurrent.ConcurrentQueue<DocumentChange>();
        using var subscription = database.Notifications.Subscribe(commit =>
        {
            foreach (var change in commit.Changes)
            {
                changes.Enqueue(change);
            }
        });
        await PutAsync(database, "users/1", "Users");
        var put = await PutAttachmentAsync(database, "users/1", "a.txt", [1]);
        await WriteAsync(database, (t, c) => t.DeleteAttachment("users/1", "a.txt", null, c));
        await Poll.UntilAsync(() => Task.FromResult(changes.Count >= 3), TimeSpan.FromSeconds(10), "three published changes");

        Assert.All(changes, c => Assert.Equal(ChangeVectors.Format("A", c.Etag, database.DatabaseId), c.ChangeVector));
        Assert.Equal(
            [
                new DocumentChange(1, "users/1", "Users", DocumentChangeKind.Put),
                new DocumentChange(2, "users/1", "Users", DocumentChangeKind.Put, "a.txt", DocumentChangeKind.Put),
                new DocumentChange(3, "users/1", "Users", DocumentChangeKind.Put, "a.txt", DocumentChangeKind.Delete),
            ],
            changes.Select(c => c with { ChangeVector = null }).ToArray());
        Assert.Equal(ChangeVectors.Format("A", 2, database.DatabaseId), put.DocumentChangeVector);
    }

    [Fact]
    public async Task AttachmentsSurviveAReopen()
    {
        var content = Bytes(150_000, 31);
        string changeVector;
        await using (var database = Open(_folder.Path))
        {
            await PutAsync(database, "a/1", null);
            changeVector = (await PutAttachmentAsync(database, "a/1", "doc.pdf", content, "application/pdf")).ChangeVector;
        }
        await using (var database = Open(_folder.Path))
        {
            Assert.Equal(content, ReadAll(database, "a/1", "doc.pdf"));
            using var reader = database.BeginRead();
            var info = Assert.Single(reader.GetAttachments("a/1"));
            Assert.Equal("application/pdf", info.ContentType);
            Assert.Equal(changeVector, ChangeVectors.Format("A", info.Etag, database.DatabaseId));
        }
    }
}
