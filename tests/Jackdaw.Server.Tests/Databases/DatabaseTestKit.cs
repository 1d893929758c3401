using System.Buffers;
using System.Text;
using System.Text.Json;
using Jackdaw.Server.Databases;
using Jackdaw.Server.Documents;
using Jackdaw.Server.Documents.Commands;
using Jackdaw.Storage.Blittable;
using Microsoft.Extensions.Logging.Abstractions;

namespace Jackdaw.Server.Tests.Databases;

/// <summary>A document as a feed returns it: etag, id as stored, collection as written, and its <c>V</c> field.</summary>
public readonly record struct FeedDocument(long Etag, string Id, string? Collection, long V);

/// <summary>A tombstone as a feed returns it.</summary>
public readonly record struct FeedTombstone(long Etag, string Id, string? Collection);

/// <summary>Opens databases directly (no HTTP) and reads their feeds into lists.</summary>
internal static class DatabaseTestKit
{
    /// <summary>Options with the clean-up timer off: tests call <c>CleanAsync</c> themselves.</summary>
    public static DocumentDatabaseOptions NoTimer(int cleanupBatch = 16 * 1024) =>
        new() { TombstoneCleanupInterval = Timeout.InfiniteTimeSpan, TombstoneCleanupBatch = cleanupBatch };

    public static DocumentDatabase Open(string folder, DocumentDatabaseOptions? options = null) =>
        DocumentDatabase.Open("Test", folder, NullLoggerFactory.Instance, options ?? NoTimer());

    /// <summary>Stores <c>{"V": v}</c> under <paramref name="id"/>.</summary>
    public static async Task<PutResult> PutAsync(DocumentDatabase database, string id, string? collection, long v = 0)
    {
        using var context = new JsonOperationContext();
        var document = context.Parse(Encoding.UTF8.GetBytes($$"""{"V":{{v}}}"""), BlittableMode.Disk);
        var command = new PutDocumentCommand(new DocumentToPut(id, document, collection, null), context);
        await database.Merger.EnqueueAsync(command);
        return command.Result;
    }

    public static async Task<bool> DeleteAsync(DocumentDatabase database, string id)
    {
        var command = new DeleteDocumentCommand(id, null);
        await database.Merger.EnqueueAsync(command);
        return command.Deleted;
    }

    public static List<FeedDocument> ReadDocuments(DocumentsReader reader, string? collection, long afterEtag, int take = int.MaxValue)
    {
        var result = new List<FeedDocument>();
        foreach (var record in reader.GetDocumentsFrom(collection, afterEtag, take))
        {
            var json = new ArrayBufferWriter<byte>();
            BlittableJsonWriter.WriteTo(record.Document, json);
            using var parsed = JsonDocument.Parse(json.WrittenMemory);
            var v = parsed.RootElement.GetProperty("V").GetInt64();
            var stampedId = parsed.RootElement.GetProperty("@metadata").GetProperty("@id").GetString();
            Assert.Equal(record.Id, stampedId);
            var recordCollection = record.CollectionUtf8.IsEmpty ? null : Encoding.UTF8.GetString(record.CollectionUtf8);
            result.Add(new FeedDocument(record.Etag, record.Id, recordCollection, v));
        }
        return result;
    }

    public static List<FeedTombstone> ReadTombstones(DocumentsReader reader, string? collection, long afterEtag, int take = int.MaxValue)
    {
        var result = new List<FeedTombstone>();
        foreach (var tombstone in reader.GetTombstonesFrom(collection, afterEtag, take))
        {
            result.Add(new FeedTombstone(tombstone.Etag, tombstone.Id, tombstone.Collection));
        }
        return result;
    }

    public static List<FeedTombstone> ReadAllTombstones(DocumentDatabase database)
    {
        using var reader = database.BeginRead();
        return ReadTombstones(reader, null, 0);
    }

    public static List<FeedDocument> ReadAllDocuments(DocumentDatabase database)
    {
        using var reader = database.BeginRead();
        return ReadDocuments(reader, null, 0);
    }
}
