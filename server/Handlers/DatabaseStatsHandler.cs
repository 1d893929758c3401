using Jackdaw.Server.Hosting;
using Jackdaw.Server.Routing;
using Jackdaw.Server.Security;

namespace Jackdaw.Server.Handlers;

/// <summary>
/// <c>GET /databases/*/stats</c>: counts, etags and sizes of one database, with every field RavenDB's
/// clients read into <c>DatabaseStatistics</c> (counts of features Jackdaw does not have yet are 0).
/// </summary>
public sealed class DatabaseStatsHandler(ServerContext server) : HandlerBase(server)
{
    [Route("/databases/*/stats", "GET")]
    [Access(RouteAccess.DatabaseRead)]
    public ValueTask Get(RequestContext context)
    {
        var database = Server.Databases.GetDatabase(context.GetCaptureMemory(0));
        var storage = database.GetStorageStats();
        using var reader = database.BeginRead();
        var json = context.StartJson();
        json.WriteStartObject();
        json.WriteString("Name", database.Name);
        json.WriteString("DatabaseId", database.DatabaseId);
        json.WriteNumber("CountOfDocuments", reader.DocumentCount);
        json.WriteNumber("CountOfTombstones", reader.TombstoneCount);
        json.WriteNumber("LastDocEtag", reader.LastEtag);
        json.WriteNumber("LastDatabaseEtag", reader.LastEtag);
        json.WriteString("DatabaseChangeVector", reader.LastEtag == 0 ? "" : Documents.ChangeVectors.Format(database.NodeTag, reader.LastEtag, database.DatabaseId));
        json.WriteNumber("CountOfRevisionDocuments", reader.RevisionCount);
        foreach (var none in NotYet)
        {
            json.WriteNumber(none, 0);
        }
        var attachments = reader.GetAttachmentStorageStats();
        json.WriteNumber("CountOfAttachments", attachments.Attachments);
        json.WriteNumber("CountOfUniqueAttachments", attachments.Contents);
        // Jackdaw's own: what the content streams hold, so that orphans left by a failed or crashed
        // upload (staged streams, their chunks) can be seen going away.
        json.WriteStartObject("AttachmentStorage");
        json.WriteNumber("Chunks", attachments.Chunks);
        json.WriteNumber("StagedStreams", attachments.StagedStreams);
        json.WriteNumber("ChunksRemoved", database.Attachments.RemovedChunks);
        json.WriteEndObject();
        json.WriteStartObject("Collections");
        foreach (var collection in reader.GetCollections())
        {
            json.WriteNumber(collection.Name, collection.Count);
        }
        json.WriteEndObject();
        var indexes = Indexing.IndexStore.Of(database).Indexes;
        json.WriteNumber("CountOfIndexes", indexes.Count);
        json.WriteNumber("CountOfStaleIndexes", indexes.Count(i => i.IsStale(reader)));
        json.WriteStartArray("Indexes");
        DateTime? lastIndexing = null;
        foreach (var index in indexes)
        {
            json.WriteStartObject();
            json.WriteString("Name", index.Name);
            json.WriteString("Type", index.Definition.TypeName);
            json.WriteString("State", index.State.ToString());
            json.WriteBoolean("IsStale", index.IsStale(reader));
            json.WriteString("LockMode", index.LockMode.ToString());
            json.WriteString("Priority", index.Priority.ToString());
            WriteTime(json, "LastIndexingTime", index.LastIndexingTime);
            json.WriteEndObject();
            if (index.LastIndexingTime is { } at && (lastIndexing is null || at > lastIndexing))
            {
                lastIndexing = at;
            }
        }
        json.WriteEndArray();
        WriteTime(json, "LastIndexingTime", lastIndexing);
        json.WriteStartObject("Storage");
        json.WriteNumber("DataFileBytes", storage.DataFileSize);
        json.WriteNumber("JournalBytes", storage.JournalSize);
        json.WriteEndObject();
        WriteSize(json, "SizeOnDisk", storage.DataFileSize + storage.JournalSize);
        WriteSize(json, "TempBuffersSizeOnDisk", 0);
        json.WriteString("Pager", "Jackdaw.Storage");
        json.WriteBoolean("Is64Bit", Environment.Is64BitProcess);
        json.WriteNumber("NumberOfTransactionMergerQueueOperations", database.Merger.Queued);
        // Who holds the tombstones of each collection, and why: a stopped consumer is never silent.
        json.WriteStartArray("TombstoneCleanup");
        foreach (var state in database.Tombstones.GetState())
        {
            json.WriteStartObject();
            json.WriteString("Collection", state.Collection);
            json.WriteNumber("OldestTombstoneEtag", state.OldestEtag);
            json.WriteNumber("CleanableUpToEtag", state.CleanableUpToEtag);
            json.WriteString("HeldBy", state.HeldBy);
            json.WriteString("HoldReason", state.HoldReason);
            json.WriteEndObject();
        }
        json.WriteEndArray();
        json.WriteNumber("TombstonesRemoved", database.Tombstones.Removed);
        json.WriteNumber("MergedTransactions", database.Merger.Transactions);
        json.WriteNumber("MergedCommands", database.Merger.Commands);
        json.WriteEndObject();
        return context.CompleteJsonAsync();
    }

    // Counts RavenDB's DatabaseStatistics carries of features not built yet (counters, time series,
    // conflicts): 0, so that clients read numbers, not nulls.
    private static readonly string[] NotYet =
    [
        "CountOfDocumentsConflicts", "CountOfConflicts",
        "CountOfCounterEntries", "CountOfTimeSeriesSegments",
    ];

    private static void WriteTime(System.Text.Json.Utf8JsonWriter json, string name, DateTime? at)
    {
        if (at is { } time)
        {
            json.WriteString(name, time.ToUniversalTime().ToString("yyyy-MM-dd'T'HH:mm:ss.fffffff'Z'", System.Globalization.CultureInfo.InvariantCulture));
        }
        else
        {
            json.WriteNull(name);
        }
    }

    /// <summary>RavenDB's <c>Size</c>: <c>{"HumaneSize":"2 MBytes","SizeInBytes":2097152}</c>.</summary>
    private static void WriteSize(System.Text.Json.Utf8JsonWriter json, string name, long bytes)
    {
        json.WriteStartObject(name);
        json.WriteString("HumaneSize", Humane(bytes));
        json.WriteNumber("SizeInBytes", bytes);
        json.WriteEndObject();
    }

    private static string Humane(long bytes) => bytes switch
    {
        >= 1L << 30 => FormattableString.Invariant($"{bytes / (double)(1L << 30):0.##} GBytes"),
        >= 1L << 20 => FormattableString.Invariant($"{bytes / (double)(1L << 20):0.##} MBytes"),
        >= 1L << 10 => FormattableString.Invariant($"{bytes / (double)(1L << 10):0.##} KBytes"),
        _ => FormattableString.Invariant($"{bytes} Bytes"),
    };
}
