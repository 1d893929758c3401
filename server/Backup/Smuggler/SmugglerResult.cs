using System.Diagnostics;
using System.Globalization;
using System.Text.Json;
using Jackdaw.Server.Databases;

namespace Jackdaw.Server.Backup.Smuggler;

/// <summary>One item an import refused, and why: its id when it had a readable one, else its place in the dump.</summary>
/// <param name="Section">The dump's array it was in (<c>Docs</c>, <c>Indexes</c>...).</param>
/// <param name="Position">Its place in that array, from 1.</param>
public sealed record SmugglerRefusal(string Section, long Position, string? Id, string Reason);

/// <summary>
/// What an export or import did, in RavenDB's <c>SmugglerResult</c> shape (what
/// <c>operations/state</c> shows, as progress while it runs and as the result once done):
/// <code>
/// {"$type":"Raven.Client.Documents.Smuggler.SmugglerResult, Raven.Client",
///  "DatabaseRecord":{counts},"Documents":{counts,"LastEtag","Attachments":{counts},"SkippedCount"},
///  "RevisionDocuments":{...},"Tombstones":{counts,"LastEtag"},"Conflicts","Identities","Indexes","CompareExchange",
///  "Subscriptions","Counters","CompareExchangeTombstones","TimeSeries","ReplicationHubCertificates","TimeSeriesDeletedRanges",
///  "Messages":["[12:00:01 ERROR] ..."],"Elapsed":"00:00:01.2345678",
///  "LastEtag":n,"Refused":[{"Section","Position","Id","Reason"}],"RefusedCount":n}
/// counts: {"StartTime","Processed","ReadCount","Skipped","ErroredCount","SizeInBytes"}
/// </code>
/// The progress is the same with RavenDB's progress <c>$type</c> and the last <c>Message</c>.
/// <c>LastEtag</c>, <c>Refused</c> and <c>RefusedCount</c> are Jackdaw's: the etag an export
/// covers, and the items an import refused (the first <see cref="MaxRefusalsKept"/>).
/// </summary>
public sealed class SmugglerResult : IOperationDetails
{
    /// <summary>How many refusals the result lists (all are counted).</summary>
    public const int MaxRefusalsKept = 1000;

    /// <summary>How many messages are kept (the newest; RavenDB keeps all, but an import of a bad dump could add millions).</summary>
    private const int MaxMessagesKept = 2000;

    private readonly Lock _lock = new();
    private readonly Stopwatch _elapsed = Stopwatch.StartNew();
    private readonly List<string> _messages = [];
    private readonly List<SmugglerRefusal> _refused = [];
    private long _refusedCount;
    private long _version;
    private long _lastEtag;
    private long _lastRevisionEtag;
    private string? _message;

    public SmugglerResult()
    {
        DatabaseRecord = new SmugglerCounts(this);
        Documents = new SmugglerCounts(this, lastEtag: true, skippedCount: true, attachments: true);
        RevisionDocuments = new SmugglerCounts(this, lastEtag: true, skippedCount: true, attachments: true);
        Tombstones = new SmugglerCounts(this, lastEtag: true);
        Conflicts = new SmugglerCounts(this, lastEtag: true);
        Identities = new SmugglerCounts(this, lastEtag: true);
        Indexes = new SmugglerCounts(this);
        CompareExchange = new SmugglerCounts(this, lastEtag: true);
        Subscriptions = new SmugglerCounts(this);
        Counters = new SmugglerCounts(this, lastEtag: true, skippedCount: true);
        CompareExchangeTombstones = new SmugglerCounts(this);
        TimeSeries = new SmugglerCounts(this, lastEtag: true, skippedCount: true);
        ReplicationHubCertificates = new SmugglerCounts(this);
        TimeSeriesDeletedRanges = new SmugglerCounts(this, lastEtag: true, skippedCount: true);
    }

    public SmugglerCounts DatabaseRecord { get; }
    public SmugglerCounts Documents { get; }
    public SmugglerCounts RevisionDocuments { get; }
    public SmugglerCounts Tombstones { get; }
    public SmugglerCounts Conflicts { get; }
    public SmugglerCounts Identities { get; }
    public SmugglerCounts Indexes { get; }
    public SmugglerCounts CompareExchange { get; }
    public SmugglerCounts Subscriptions { get; }
    public SmugglerCounts Counters { get; }
    public SmugglerCounts CompareExchangeTombstones { get; }
    public SmugglerCounts TimeSeries { get; }
    public SmugglerCounts ReplicationHubCertificates { get; }
    public SmugglerCounts TimeSeriesDeletedRanges { get; }

    /// <summary>
    /// Export: every document and tombstone change up to this etag (from the start etag asked for) is
    /// in the dump, at the version read (a later one when it changed while the export ran); the next
    /// incremental export starts at it plus one. Import: 0.
    /// </summary>
    public long LastEtag => Volatile.Read(ref _lastEtag);

    /// <summary>
    /// Export with <see cref="SmugglerExportOptions.DeletionsFirst"/> (a logical backup): every
    /// revision and revision tombstone up to this revision etag is in the dump (from
    /// <see cref="SmugglerExportOptions.StartRevisionsEtag"/>); the next incremental starts after it. Otherwise 0.
    /// </summary>
    public long LastRevisionEtag => Volatile.Read(ref _lastRevisionEtag);

    public TimeSpan Elapsed => _elapsed.Elapsed;

    /// <summary>How many items the import refused (more than <see cref="Refused"/> lists when over <see cref="MaxRefusalsKept"/>).</summary>
    public long RefusedCount => Volatile.Read(ref _refusedCount);

    public IReadOnlyList<SmugglerRefusal> Refused
    {
        get
        {
            lock (_lock)
            {
                return _refused.ToArray();
            }
        }
    }

    public IReadOnlyList<string> Messages
    {
        get
        {
            lock (_lock)
            {
                return _messages.ToArray();
            }
        }
    }

    public long Version => Volatile.Read(ref _version);

    internal void Changed() => Interlocked.Increment(ref _version);

    internal void SetLastEtag(long etag) => Volatile.Write(ref _lastEtag, etag);

    internal void SetLastRevisionEtag(long etag) => Volatile.Write(ref _lastRevisionEtag, etag);

    internal void AddInfo(string message) => AddMessage("INFO", message);

    internal void AddWarning(string message) => AddMessage("WARNING", message);

    /// <summary>An item refused: counted, listed (the first ones), and said in the messages.</summary>
    internal void Refuse(SmugglerCounts counts, SmugglerRefusal refusal)
    {
        counts.Errored();
        Interlocked.Increment(ref _refusedCount);
        lock (_lock)
        {
            if (_refused.Count < MaxRefusalsKept)
            {
                _refused.Add(refusal);
            }
        }
        var what = refusal.Id is null ? $"Entry {refusal.Position} of {refusal.Section}" : $"'{refusal.Id}' (entry {refusal.Position} of {refusal.Section})";
        AddMessage("ERROR", $"{what} was not imported: {refusal.Reason}");
    }

    private void AddMessage(string kind, string message)
    {
        var line = $"[{DateTime.UtcNow.ToString("T", CultureInfo.InvariantCulture)} {kind}] {message}";
        lock (_lock)
        {
            _message = line;
            if (_messages.Count >= MaxMessagesKept)
            {
                _messages.RemoveAt(0);
            }
            _messages.Add(line);
        }
        Changed();
    }

    public void WriteProgress(Utf8JsonWriter writer)
    {
        writer.WriteStartObject();
        writer.WriteString("$type"u8, "Raven.Client.Documents.Smuggler.SmugglerResult+SmugglerProgress, Raven.Client");
        WriteCounts(writer);
        lock (_lock)
        {
            writer.WriteString("Message"u8, _message);
        }
        writer.WriteEndObject();
    }

    public void WriteResult(Utf8JsonWriter writer)
    {
        writer.WriteStartObject();
        writer.WriteString("$type"u8, "Raven.Client.Documents.Smuggler.SmugglerResult, Raven.Client");
        WriteCounts(writer);
        writer.WriteStartArray("Messages"u8);
        foreach (var message in Messages)
        {
            writer.WriteStringValue(message);
        }
        writer.WriteEndArray();
        writer.WriteString("Elapsed"u8, Elapsed.ToString("c", CultureInfo.InvariantCulture));
        writer.WriteNumber("LastEtag"u8, LastEtag);
        writer.WriteStartArray("Refused"u8);
        foreach (var refusal in Refused)
        {
            writer.WriteStartObject();
            writer.WriteString("Section"u8, refusal.Section);
            writer.WriteNumber("Position"u8, refusal.Position);
            writer.WriteString("Id"u8, refusal.Id);
            writer.WriteString("Reason"u8, refusal.Reason);
            writer.WriteEndObject();
        }
        writer.WriteEndArray();
        writer.WriteNumber("RefusedCount"u8, RefusedCount);
        writer.WriteEndObject();
    }

    private void WriteCounts(Utf8JsonWriter writer)
    {
        DatabaseRecord.Write(writer, "DatabaseRecord");
        Documents.Write(writer, "Documents");
        RevisionDocuments.Write(writer, "RevisionDocuments");
        Tombstones.Write(writer, "Tombstones");
        Conflicts.Write(writer, "Conflicts");
        Identities.Write(writer, "Identities");
        Indexes.Write(writer, "Indexes");
        CompareExchange.Write(writer, "CompareExchange");
        Subscriptions.Write(writer, "Subscriptions");
        Counters.Write(writer, "Counters");
        CompareExchangeTombstones.Write(writer, "CompareExchangeTombstones");
        TimeSeries.Write(writer, "TimeSeries");
        ReplicationHubCertificates.Write(writer, "ReplicationHubCertificates");
        TimeSeriesDeletedRanges.Write(writer, "TimeSeriesDeletedRanges");
    }

    /// <summary>The counts of a dump's array, by RavenDB's name of it; null for one Jackdaw does not know.</summary>
    internal SmugglerCounts? CountsOf(string section) => section switch
    {
        "Docs" => Documents,
        "RevisionDocuments" => RevisionDocuments,
        "Tombstones" => Tombstones,
        "Conflicts" => Conflicts,
        "Identities" => Identities,
        "Indexes" => Indexes,
        "CompareExchange" => CompareExchange,
        "Subscriptions" => Subscriptions,
        "CounterGroups" or "Counters" => Counters,
        "CompareExchangeTombstones" => CompareExchangeTombstones,
        "TimeSeries" => TimeSeries,
        "ReplicationHubCertificates" => ReplicationHubCertificates,
        "TimeSeriesDeletedRanges" => TimeSeriesDeletedRanges,
        "DatabaseRecord" => DatabaseRecord,
        _ => null,
    };

    /// <summary>Marks every kind not worked on as processed and skipped (RavenDB's EnsureProcessed).</summary>
    internal void FinishAll()
    {
        foreach (var counts in new[] { DatabaseRecord, Documents, RevisionDocuments, Tombstones, Conflicts, Identities, Indexes, CompareExchange, Subscriptions, Counters, CompareExchangeTombstones, TimeSeries, ReplicationHubCertificates, TimeSeriesDeletedRanges })
        {
            if (!counts.Processed)
            {
                counts.Finish(skipped: true);
            }
        }
        _elapsed.Stop();
    }
}
