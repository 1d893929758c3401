using Jackdaw.Server.Hosting;
using Jackdaw.Server.Routing;

namespace Jackdaw.Server.Handlers;

/// <summary><c>GET /databases/*/stats</c>: counts, etags and sizes of one database.</summary>
public sealed class DatabaseStatsHandler(ServerContext server) : HandlerBase(server)
{
    [Route("/databases/*/stats", "GET")]
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
        json.WriteStartObject("Collections");
        foreach (var collection in reader.GetCollections())
            json.WriteNumber(collection.Name, collection.Count);
        json.WriteEndObject();
        var indexes = Indexing.IndexStore.Of(database).Indexes;
        json.WriteNumber("CountOfIndexes", indexes.Count);
        json.WriteNumber("CountOfStaleIndexes", indexes.Count(i => i.IsStale(reader)));
        json.WriteStartArray("Indexes");
        foreach (var index in indexes)
        {
            json.WriteStartObject();
            json.WriteString("Name", index.Name);
            json.WriteString("Type", index.Definition.IsAuto ? "AutoMap" : "Map");
            json.WriteString("State", index.State.ToString());
            json.WriteBoolean("IsStale", index.IsStale(reader));
            json.WriteString("LockMode", "Unlock");
            json.WriteString("Priority", "Normal");
            json.WriteEndObject();
        }
        json.WriteEndArray();
        json.WriteStartObject("Storage");
        json.WriteNumber("DataFileBytes", storage.DataFileSize);
        json.WriteNumber("JournalBytes", storage.JournalSize);
        json.WriteEndObject();
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
}
