using System.Buffers;
using System.Security.Cryptography;
using System.Text;
using System.Text.Json;
using Jackdaw.Server.Databases;
using Jackdaw.Server.Documents;
using Jackdaw.Server.Documents.Commands;
using Jackdaw.Server.Tests.Infrastructure;
using Jackdaw.Storage.Blittable;
using static Jackdaw.Server.Tests.Databases.DatabaseTestKit;

namespace Jackdaw.Server.Tests.Documents;

/// <summary>
/// Revisions and attachments together, without HTTP: a revision holds a reference on the contents
/// its version lists, removing it releases them, and a revert brings the attachments back.
/// </summary>
public sealed class RevisionAttachmentsStorageTests : IDisposable
{
    private readonly TempFolder _folder = new();
    private readonly ManualClock _clock = new();

    public void Dispose() => _folder.Dispose();

    private DocumentDatabase OpenDatabase() => Open(_folder.Path, NoTimer() with { Clock = _clock });

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

    private static async Task ConfigureAsync(DocumentDatabase database, string json) =>
        await database.EnqueueAsync(new ConfigureRevisionsCommand(RevisionsConfiguration.Parse(Encoding.UTF8.GetBytes(json))));

    private static Task<AttachmentPutResult> PutAttachmentAsync(DocumentDatabase database, string id, string name, byte[] content) =>
        WriteAsync(database, (t, c) => t.PutAttachment(id, name, "application/pdf", AttachmentSource.FromBytes(content), null, c));

    private static Task<bool> DeleteAttachmentAsync(DocumentDatabase database, string id, string name) =>
        WriteAsync(database, (t, c) => t.DeleteAttachment(id, name, null, c));

    private static async Task<int> RevertAsync(DocumentDatabase database, string id, string changeVector)
    {
        var command = new RevertToRevisionsCommand([new(id, changeVector)], new JsonOperationContext());
        await database.EnqueueAsync(command);
        return command.Reverted;
    }

    private static long References(DocumentDatabase database, byte[] content)
    {
        using var reader = database.BeginRead();
        return reader.GetAttachmentContent(Convert.ToBase64String(SHA256.HashData(content)))?.References ?? 0;
    }

    private static AttachmentStorageStats Stats(DocumentDatabase database)
    {
        using var reader = database.BeginRead();
        return reader.GetAttachmentStorageStats();
    }

    private static byte[]? ReadAttachment(DocumentDatabase database, string id, string name)
    {
        using var reader = database.BeginRead();
        using var stream = reader.OpenAttachment(id, name);
        if (stream is null)
        {
            return null;
        }
        var copy = new MemoryStream();
        stream.CopyTo(copy);
        return copy.ToArray();
    }

    private static byte[]? ReadRevisionAttachment(DocumentDatabase database, string id, string name, string changeVector)
    {
        using var reader = database.BeginRead();
        if (reader.GetRevisionAttachment(id, name, changeVector) is not { } info)
        {
            return null;
        }
        using var stream = reader.OpenAttachmentContent(info.Hash)!;
        Assert.Equal(info.Size, stream.Length);
        var copy = new MemoryStream();
        stream.CopyTo(copy);
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

    /// <summary>The change vector of a document's newest revision that is not a delete.</summary>
    private static string NewestVersion(DocumentDatabase database, string id)
    {
        using var reader = database.BeginRead();
        foreach (var key in reader.GetRevisionKeysFor(id, 0, int.MaxValue))
        {
            Assert.True(reader.TryGetRevisionByKey(key, out var revision));
            if (!revision.IsDeleteRevision)
            {
                return revision.ChangeVector;
            }
        }
        throw new InvalidOperationException($"'{id}' has no revision of a version.");
    }

    [Fact]
    public async Task ADocumentDeletedByMistakeIsRevertedWithItsAttachmentAfterTheOrphanCleanUp()
    {
        await using var database = OpenDatabase();
        await ConfigureAsync(database, """{"Default":{"Disabled":false}}""");
        var pdf = Bytes(200_000, 1);
        await PutAsync(database, "users/1", "Users", v: 1);
        await PutAttachmentAsync(database, "users/1", "invoice.pdf", pdf);
        var withPdf = NewestVersion(database, "users/1");
        // The document's entry and the revision of the attachment's put.
        Assert.Equal(2, References(database, pdf));

        Assert.True(await DeleteAsync(database, "users/1"));
        await database.Attachments.CleanAsync();
        Assert.Equal(1, References(database, pdf));
        Assert.Equal(new AttachmentStorageStats(0, 1, 4, 0), Stats(database));

        Assert.Equal(1, await RevertAsync(database, "users/1", withPdf));
        Assert.Equal(pdf, ReadAttachment(database, "users/1", "INVOICE.pdf"));
        var metadata = Metadata(database, "users/1");
        Assert.Equal(["invoice.pdf"], metadata.GetProperty("@attachments").EnumerateArray().Select(a => a.GetProperty("Name").GetString()));
        Assert.Contains("HasAttachments", metadata.GetProperty("@flags").GetString(), StringComparison.Ordinal);
        // The document, the revision reverted to, and the revert's own revision.
        Assert.Equal(3, References(database, pdf));
        Assert.Equal(new AttachmentStorageStats(1, 1, 4, 0), Stats(database));
    }

    [Fact]
    public async Task ARevertReplacesTheAttachmentsAddedSinceAndReleasesTheirContents()
    {
        await using var database = OpenDatabase();
        await ConfigureAsync(database, """{"Default":{"Disabled":false}}""");
        var first = Bytes(1000, 2);
        var second = Bytes(1000, 3);
        var later = Bytes(1000, 4);
        await PutAsync(database, "users/1", "Users", v: 1);
        await PutAttachmentAsync(database, "users/1", "a.pdf", first);
        var withFirst = NewestVersion(database, "users/1");
        await PutAttachmentAsync(database, "users/1", "a.pdf", second);
        await PutAttachmentAsync(database, "users/1", "later.txt", later);
        await ConfigureAsync(database, """{"Default":{"Disabled":true}}""");

        Assert.Equal(1, await RevertAsync(database, "users/1", withFirst));
        Assert.Equal(first, ReadAttachment(database, "users/1", "a.pdf"));
        Assert.Null(ReadAttachment(database, "users/1", "later.txt"));
        // With revisions off now, the revert stores no revision: first is held by the document and
        // by one revision; second and later only by the revisions that list them.
        Assert.Equal((2L, 2L, 1L), (References(database, first), References(database, second), References(database, later)));
        Assert.Equal(1, Stats(database).Attachments);
    }

    [Fact]
    public async Task ARevertToATimeBringsBackTheAttachmentsOfThatTime()
    {
        await using var database = OpenDatabase();
        await ConfigureAsync(database, """{"Default":{"Disabled":false}}""");
        var pdf = Bytes(5000, 5);
        await PutAsync(database, "users/1", "Users", v: 1);
        await PutAttachmentAsync(database, "users/1", "a.pdf", pdf);
        var time = _clock.GetUtcNow().UtcDateTime;
        _clock.Advance(TimeSpan.FromMinutes(5));
        await DeleteAttachmentAsync(database, "users/1", "a.pdf");
        await DeleteAsync(database, "users/1");
        Assert.Equal(1, References(database, pdf));

        var command = new RevertToTimeCommand(["users/1"], time, new JsonOperationContext());
        await database.EnqueueAsync(command);
        Assert.Equal(1, command.Reverted);
        Assert.Equal(pdf, ReadAttachment(database, "users/1", "a.pdf"));
        Assert.Equal(3, References(database, pdf));
    }

    [Fact]
    public async Task PurgingADocumentsRevisionsReleasesTheirContentsExactly()
    {
        await using var database = OpenDatabase();
        await ConfigureAsync(database, """{"Default":{"Disabled":false,"PurgeOnDelete":true}}""");
        var pdf = Bytes(3 * 65_504 + 7, 6);
        await PutAsync(database, "users/1", "Users", v: 1);
        await PutAttachmentAsync(database, "users/1", "a.pdf", pdf);
        await PutAttachmentAsync(database, "users/1", "copy.pdf", pdf);
        await PutAsync(database, "users/1", "Users", v: 2);
        // Per revision per attachment: the document's two entries, one revision listing a.pdf, two listing both.
        Assert.Equal(2 + 1 + 2 * 2, References(database, pdf));
        Assert.Equal(new AttachmentStorageStats(2, 1, 4, 0), Stats(database));

        Assert.True(await DeleteAsync(database, "users/1"));
        Assert.Equal(0, References(database, pdf));
        await database.Attachments.CleanAsync();
        Assert.Equal(new AttachmentStorageStats(0, 0, 0, 0), Stats(database));
        using var reader = database.BeginRead();
        Assert.Equal(0, reader.RevisionCount);
    }

    [Fact]
    public async Task APolicyTrimmingReleasesWhatTheTrimmedRevisionsHeld()
    {
        await using var database = OpenDatabase();
        await ConfigureAsync(database, """{"Default":{"Disabled":false,"MinimumRevisionsToKeep":2}}""");
        var pdf = Bytes(100, 7);
        await PutAsync(database, "users/1", "Users", v: 1);
        await PutAttachmentAsync(database, "users/1", "a.pdf", pdf);
        await PutAsync(database, "users/1", "Users", v: 2);
        await PutAsync(database, "users/1", "Users", v: 3);
        Assert.Equal(1 + 2, References(database, pdf));

        await DeleteAttachmentAsync(database, "users/1", "a.pdf");
        Assert.Equal(1, References(database, pdf));
        await PutAsync(database, "users/1", "Users", v: 4);
        Assert.Equal(0, References(database, pdf));
        await database.Attachments.CleanAsync();
        Assert.Equal(new AttachmentStorageStats(0, 0, 0, 0), Stats(database));
    }

    [Fact]
    public async Task ARevisionsAttachmentIsReadByItsChangeVectorAfterTheDocumentsChanged()
    {
        await using var database = OpenDatabase();
        await ConfigureAsync(database, """{"Default":{"Disabled":false}}""");
        var old = Bytes(70_000, 8);
        var current = Bytes(70_000, 9);
        await PutAsync(database, "users/1", "Users", v: 1);
        var created = NewestVersion(database, "users/1");
        await PutAttachmentAsync(database, "users/1", "a.pdf", old);
        var withOld = NewestVersion(database, "users/1");
        await PutAttachmentAsync(database, "users/1", "a.pdf", current);

        Assert.Equal(old, ReadRevisionAttachment(database, "USERS/1", "A.PDF", withOld));
        Assert.Equal(current, ReadAttachment(database, "users/1", "a.pdf"));
        Assert.Null(ReadRevisionAttachment(database, "users/1", "a.pdf", created));
        Assert.Null(ReadRevisionAttachment(database, "users/2", "a.pdf", withOld));
        Assert.Null(ReadRevisionAttachment(database, "users/1", "b.pdf", withOld));
        Assert.Null(ReadRevisionAttachment(database, "users/1", "a.pdf", "A:999-none"));
    }

    [Fact]
    public async Task AnImportedRevisionWhoseContentsAreNotStoredHoldsNoReferences()
    {
        await using var database = OpenDatabase();
        var stored = Bytes(10, 10);
        await PutAsync(database, "users/1", "Users", v: 1);
        await PutAttachmentAsync(database, "users/1", "kept.bin", stored);
        var missing = Convert.ToBase64String(SHA256.HashData(Bytes(10, 11)));
        var present = Convert.ToBase64String(SHA256.HashData(stored));
        var body = $$$"""{"V":1,"@metadata":{"@collection":"Users","@attachments":[{"Name":"kept.bin","Hash":"{{{present}}}","ContentType":"","Size":10},{"Name":"gone.bin","Hash":"{{{missing}}}","ContentType":"","Size":10}]}}""";
        Assert.True(await WriteAsync(database, (t, c) => t.PutRevision("users/1", "Users", "A:77-elsewhere", DateTime.UtcNow, DocumentFlags.HasAttachments, c.Parse(Encoding.UTF8.GetBytes(body), BlittableMode.Disk).Span)));
        Assert.Equal(1, References(database, stored));

        // A revert restores what is stored and leaves out what is not.
        Assert.Equal(1, await RevertAsync(database, "users/1", "A:77-elsewhere"));
        Assert.Equal(stored, ReadAttachment(database, "users/1", "kept.bin"));
        Assert.Equal(["kept.bin"], Metadata(database, "users/1").GetProperty("@attachments").EnumerateArray().Select(a => a.GetProperty("Name").GetString()));
        Assert.Equal(1, References(database, stored));
    }

    [Fact]
    public async Task RevisionReferencesSurviveAReopen()
    {
        var pdf = Bytes(100, 12);
        string withPdf;
        await using (var database = OpenDatabase())
        {
            await ConfigureAsync(database, """{"Default":{"Disabled":false}}""");
            await PutAsync(database, "users/1", "Users", v: 1);
            await PutAttachmentAsync(database, "users/1", "a.pdf", pdf);
            withPdf = NewestVersion(database, "users/1");
            await DeleteAsync(database, "users/1");
        }
        await using (var database = OpenDatabase())
        {
            await database.Attachments.CleanAsync();
            Assert.Equal(1, References(database, pdf));
            Assert.Equal(1, await RevertAsync(database, "users/1", withPdf));
            Assert.Equal(pdf, ReadAttachment(database, "users/1", "a.pdf"));
        }
    }

    /// <summary>A clock the tests move: revisions' time is read from it.</summary>
    private sealed class ManualClock : TimeProvider
    {
        private TimeSpan _offset = TimeSpan.Zero;

        public void Advance(TimeSpan by) => _offset += by;

        public override DateTimeOffset GetUtcNow() => DateTimeOffset.UtcNow + _offset;
    }
}
