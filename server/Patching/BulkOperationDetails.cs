using System.Globalization;
using System.Text.Json;
using Jackdaw.Server.Databases;

namespace Jackdaw.Server.Patching;

/// <summary>
/// The counts of a patch or delete by query, in RavenDB's shapes:
/// <code>
/// Progress: {"$type":"…DeterminateProgress, Raven.Client","Processed":n,"Total":m}
/// Result:   {"$type":"…BulkOperationResult, Raven.Client","Total":n,"DocumentsProcessed":n,"AttachmentsProcessed":0,
///            "CountersProcessed":0,"TimeSeriesProcessed":0,"Query":"…","Message":…,
///            "Details":[{"$type":"…PatchDetails","Id","ChangeVector","Status"} | {"$type":"…DeleteDetails","Id","Etag"}]}
/// </code>
/// <c>Total</c> while running is the number of documents the query matched; <c>Processed</c> those
/// committed, batch by batch. Details are kept only when the request asked for them.
/// </summary>
internal sealed class BulkOperationDetails(string query, bool keepDetails, bool delete) : IOperationDetails
{
    private const string RavenTypes = "Raven.Client.Documents.Operations.";
    private readonly Lock _lock = new();
    private readonly List<(string Id, string? ChangeVector, string Status, long Etag)> _details = [];
    private long _processed;
    private long _total;
    private long _version;

    public long Version => Volatile.Read(ref _version);

    public long Processed => Volatile.Read(ref _processed);

    public bool KeepDetails => keepDetails;

    public void Matched(long total)
    {
        Volatile.Write(ref _total, total);
        Interlocked.Increment(ref _version);
    }

    /// <summary>A batch committed: its documents count as processed.</summary>
    public void Committed(int count, IReadOnlyList<(string Id, string? ChangeVector, string Status, long Etag)> details)
    {
        lock (_lock)
        {
            if (keepDetails)
            {
                _details.AddRange(details);
            }
            _processed += count;
        }
        Interlocked.Increment(ref _version);
    }

    public void WriteProgress(Utf8JsonWriter writer)
    {
        writer.WriteStartObject();
        writer.WriteString("$type"u8, RavenTypes + "DeterminateProgress, Raven.Client");
        writer.WriteNumber("Processed"u8, Processed);
        writer.WriteNumber("Total"u8, Volatile.Read(ref _total));
        writer.WriteEndObject();
    }

    public void WriteResult(Utf8JsonWriter writer)
    {
        lock (_lock)
        {
            writer.WriteStartObject();
            writer.WriteString("$type"u8, RavenTypes + "BulkOperationResult, Raven.Client");
            writer.WriteNumber("Total"u8, _processed);
            writer.WriteNumber("DocumentsProcessed"u8, _processed);
            writer.WriteNumber("AttachmentsProcessed"u8, 0);
            writer.WriteNumber("CountersProcessed"u8, 0);
            writer.WriteNumber("TimeSeriesProcessed"u8, 0);
            writer.WriteString("Query"u8, query);
            writer.WriteString("Message"u8, (delete ? "Deleted " : "Patched ") + _processed.ToString("#,#0", CultureInfo.InvariantCulture) + " documents.");
            writer.WriteStartArray("Details"u8);
            foreach (var (id, changeVector, status, etag) in _details)
            {
                writer.WriteStartObject();
                if (delete)
                {
                    writer.WriteString("$type"u8, RavenTypes + "BulkOperationResult+DeleteDetails, Raven.Client");
                    writer.WriteString("Id"u8, id);
                    writer.WriteNumber("Etag"u8, etag);
                }
                else
                {
                    writer.WriteString("$type"u8, RavenTypes + "BulkOperationResult+PatchDetails, Raven.Client");
                    writer.WriteString("Id"u8, id);
                    writer.WriteString("ChangeVector"u8, changeVector);
                    writer.WriteString("Status"u8, status);
                }
                writer.WriteEndObject();
            }
            writer.WriteEndArray();
            writer.WriteEndObject();
        }
    }
}
