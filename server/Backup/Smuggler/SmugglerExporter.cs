using System.Buffers;
using System.IO.Compression;
using System.Text.Json;
using Jackdaw.Server.Databases;
using Jackdaw.Server.Documents;
using Jackdaw.Server.Indexing;
using Jackdaw.Server.Subscriptions;
using Jackdaw.Server.Wire;
using Jackdaw.Storage.Blittable;

namespace Jackdaw.Server.Backup.Smuggler;

/// <summary>
/// Writes a database as a <c>.ravendbdump</c>: gzipped JSON, in RavenDB's layout and order,
/// <code>
/// {"BuildVersion":60000,
///  "Docs":[{"@metadata":{"@export-type":"Attachment"},"Hash","Size","Tag"}[raw bytes],{...document, its @metadata as stored...},...],
///  "RevisionDocuments":[{...a revision as RavenDB shows one...},...],
///  "Tombstones":[{"Key":lower id,"Type":"Document","Collection","Flags":"None","ChangeVector","DeletedEtag","Etag","LastModified"},...,
///               {"Key":change vector,"Type":"Revision","Collection":"@empty","Flags":"None","ChangeVector":change vector,"DeletedEtag","Etag":revision etag,"LastModified":removed at},...],
///  "Indexes":[{"Type":"JavaScriptMap","IndexDefinition":{...}}],
///  "Identities":[{"Key":"users|","Value":7}],
///  "Subscriptions":[{"SubscriptionName","Query","SubscriptionId","ChangeVectorForNextBatchStartingPoint",...}]}
/// </code>
/// each array only when its type is asked for (attachments, revisions and revision tombstones:
/// SmugglerExporter.Contents.cs; revision tombstones only with <c>RevisionDocuments</c> too and no
/// collection filter). Documents are read in etag order and written from
/// their stored blittable bytes (turned into JSON text, never into objects). Nothing is held whole:
/// once <see cref="FlushThreshold"/> bytes of JSON are buffered, the snapshot is closed, the bytes
/// go through gzip to the destination (waiting for a slow reader without pinning old pages), and
/// reading resumes in a fresh snapshot after the last etag written, as <c>DocumentStream</c> does.
/// So the dump is not one snapshot: a document that changed meanwhile may appear twice (the later
/// copy wins on import). <see cref="SmugglerResult.LastEtag"/> is the last etag of the snapshot
/// in which the documents ran out: every change up to it is in the dump, and the tombstones
/// written stop there too, so an incremental export from it plus one misses nothing. A logical
/// backup writes its tombstones first instead (<see cref="SmugglerExportOptions.DeletionsFirst"/>).
/// </summary>
internal sealed partial class SmugglerExporter
{
    /// <summary>
    /// The <c>BuildVersion</c> written: RavenDB 6's. RavenDB reads the dump's layout from it (below
    /// 40000 is its 3.x format), so it names the layout written, not Jackdaw's own version.
    /// </summary>
    public const long DumpBuildVersion = 60000;

    private const int FlushThreshold = 256 * 1024;

    private readonly DocumentDatabase _database;
    private readonly SmugglerExportOptions _options;
    private readonly SmugglerResult _result;
    private readonly CancellationToken _cancel;
    private readonly ArrayBufferWriter<byte> _buffer = new(FlushThreshold + (FlushThreshold / 2));
    private readonly ArrayBufferWriter<byte> _document = new(16 * 1024);
    private readonly Utf8JsonWriter _json;
    private readonly DateTime _now = DateTime.UtcNow;

    public SmugglerExporter(DocumentDatabase database, SmugglerExportOptions options, SmugglerResult result, CancellationToken cancel)
    {
        _database = database;
        _options = options;
        _result = result;
        _cancel = cancel;
        _json = new Utf8JsonWriter(_buffer, JsonDefaults.WriterOptions);
    }

    public async Task RunAsync(Stream destination)
    {
        var gzip = new GZipStream(destination, CompressionLevel.Fastest, leaveOpen: true);
        await using (gzip.ConfigureAwait(false))
        {
            _json.WriteStartObject();
            _json.WriteNumber("BuildVersion", DumpBuildVersion);
            if (_options.DeletionsFirst)
            {
                long covered, coveredRevisions;
                using (var reader = _database.BeginRead())
                {
                    covered = reader.LastEtag;
                    coveredRevisions = reader.LastRevisionEtag;
                }
                _options.WriteHeader?.Invoke(_json, covered, coveredRevisions);
                _result.SetLastEtag(covered);
                _result.SetLastRevisionEtag(coveredRevisions);
                if (_options.Includes(DatabaseItemType.Tombstones))
                {
                    await WriteTombstonesAsync(gzip, covered, coveredRevisions).ConfigureAwait(false);
                }
                if (_options.Includes(DatabaseItemType.Documents))
                {
                    await WriteDocumentsAsync(gzip).ConfigureAwait(false);
                }
                if (_options.Includes(DatabaseItemType.RevisionDocuments))
                {
                    await WriteRevisionsAsync(gzip).ConfigureAwait(false);
                }
            }
            else
            {
                var covered = _database.LastEtag;
                if (_options.Includes(DatabaseItemType.Documents))
                {
                    covered = await WriteDocumentsAsync(gzip).ConfigureAwait(false);
                }
                _result.SetLastEtag(covered);
                if (_options.Includes(DatabaseItemType.RevisionDocuments))
                {
                    await WriteRevisionsAsync(gzip).ConfigureAwait(false);
                }
                if (_options.Includes(DatabaseItemType.Tombstones))
                {
                    // The revision tombstones to the end of their feed: a revision written above and
                    // removed since has its tombstone here.
                    await WriteTombstonesAsync(gzip, covered, long.MaxValue).ConfigureAwait(false);
                }
            }
            if (_options.Includes(DatabaseItemType.Indexes))
            {
                WriteIndexes();
            }
            if (_options.Includes(DatabaseItemType.Identities))
            {
                WriteIdentities();
            }
            if (_options.Includes(DatabaseItemType.Subscriptions))
            {
                WriteSubscriptions();
            }
            _json.WriteEndObject();
            await FlushAsync(gzip).ConfigureAwait(false);
        }
        _filterContext?.Dispose();
        await destination.FlushAsync(_cancel).ConfigureAwait(false);
        _result.FinishAll();
    }

    private long AfterEtag => Math.Max((_options.StartDocumentsEtag ?? 0) - 1, 0);

    private long AfterRevisionEtag => Math.Max((_options.StartRevisionsEtag ?? 0) - 1, 0);

    /// <summary>Writes the documents; returns the etag every change up to which is covered.</summary>
    private async Task<long> WriteDocumentsAsync(Stream output)
    {
        _result.Documents.Start();
        _json.WriteStartArray("Docs");
        // All documents in one etag-ordered pass; a collection filter reads each collection's own feed.
        var passes = _options.Collections.Count == 0 ? new string?[] { null } : _options.Collections.Distinct(StringComparer.OrdinalIgnoreCase).Select(c => (string?)c).ToArray();
        var covered = long.MaxValue;
        foreach (var collection in passes)
        {
            var after = AfterEtag;
            while (true)
            {
                Step step;
                using (var reader = _database.BeginRead())
                {
                    step = WriteSomeDocuments(reader, collection, ref after);
                    if (step == Step.Ended)
                    {
                        covered = Math.Min(covered, reader.LastEtag);
                    }
                }
                if (step == Step.Ended)
                {
                    break;
                }
                if (step == Step.Contents)
                {
                    await WriteContentsAsync(output).ConfigureAwait(false);
                }
                else
                {
                    await FlushAsync(output).ConfigureAwait(false);
                }
            }
        }
        _json.WriteEndArray();
        _result.Documents.Finish(skipped: false, attachmentsSkipped: !_options.Includes(DatabaseItemType.Attachments));
        return covered;
    }

    /// <summary>
    /// Writes documents after <paramref name="after"/> until the buffer should be flushed, the feed
    /// ends, or a document lists attachment contents not written yet (<see cref="Step.Contents"/>:
    /// <paramref name="after"/> stays before it, and it is read again once they are written).
    /// </summary>
    private Step WriteSomeDocuments(DocumentsReader reader, string? collection, ref long after)
    {
        foreach (var document in reader.GetDocumentsFrom(collection, after))
        {
            _cancel.ThrowIfCancellationRequested();
            if (!_options.IncludeExpired && SmugglerDocuments.Expired(document.Document, _now))
            {
                after = document.Etag;
                _result.Documents.SkippedOne();
                continue;
            }
            if (NeedsContents(reader, document.Document, _result.Documents))
            {
                return Step.Contents;
            }
            after = document.Etag;
            WriteDocument(document.Document);
            _result.Documents.Read(_document.WrittenCount);
            _result.Documents.Etag(document.Etag);
            if (_buffer.WrittenCount + _json.BytesPending >= FlushThreshold)
            {
                return Step.Flush;
            }
        }
        return Step.Ended;
    }

    /// <summary>
    /// The document tombstones up to <paramref name="upTo"/>, then the revision tombstones up to
    /// <paramref name="revisionsUpTo"/> (a revision etag) when revisions are exported too.
    /// </summary>
    private async Task WriteTombstonesAsync(Stream output, long upTo, long revisionsUpTo)
    {
        _result.Tombstones.Start();
        _json.WriteStartArray("Tombstones");
        await WriteInSnapshotsAsync(output, WriteSomeTombstones, upTo, AfterEtag).ConfigureAwait(false);
        if (WritesRevisionTombstones)
        {
            await WriteInSnapshotsAsync(output, WriteSomeRevisionTombstones, revisionsUpTo, AfterRevisionEtag).ConfigureAwait(false);
        }
        _json.WriteEndArray();
        _result.Tombstones.Finish(skipped: false);
    }

    /// <summary>Writes some items after <paramref name="after"/> up to <paramref name="upTo"/> from one snapshot; true when the buffer should be flushed before the rest.</summary>
    private delegate bool WriteSome(DocumentsReader reader, long upTo, ref long after);

    /// <summary>Writes a feed to <paramref name="upTo"/>, each part from a fresh snapshot, flushing between them.</summary>
    private async Task WriteInSnapshotsAsync(Stream output, WriteSome write, long upTo, long after)
    {
        while (true)
        {
            bool more;
            using (var reader = _database.BeginRead())
            {
                more = write(reader, upTo, ref after);
            }
            if (!more)
            {
                return;
            }
            await FlushAsync(output).ConfigureAwait(false);
        }
    }

    private bool WriteSomeTombstones(DocumentsReader reader, long upTo, ref long after)
    {
        foreach (var tombstone in reader.GetTombstonesFrom(null, after))
        {
            _cancel.ThrowIfCancellationRequested();
            if (tombstone.Etag > upTo)
            {
                return false;
            }
            after = tombstone.Etag;
            var collection = tombstone.Collection;
            if (_options.Collections.Count > 0 && (collection is null || !_options.IncludesCollection(collection)))
            {
                continue;
            }
            // RavenDB's key is the lowercased id; the casing is not kept.
            WriteTombstone(tombstone.Id.ToLowerInvariant(), "Document", collection, tombstone.ChangeVectorOr(reader.DatabaseId), tombstone.Etag, tombstone.DeletedAtTicks);
            _result.Tombstones.Etag(tombstone.Etag);
            if (_buffer.WrittenCount + _json.BytesPending >= FlushThreshold)
            {
                return true;
            }
        }
        return false;
    }

    /// <summary>One item of <c>Tombstones</c> in RavenDB's layout (its etag as both <c>DeletedEtag</c> and <c>Etag</c>), counted.</summary>
    private void WriteTombstone(string key, string type, string? collection, string changeVector, long etag, long deletedAtTicks)
    {
        var start = _buffer.WrittenCount + _json.BytesPending;
        _json.WriteStartObject();
        _json.WriteString("Key", key);
        _json.WriteString("Type", type);
        _json.WriteString("Collection", collection);
        _json.WriteString("Flags", "None");
        _json.WriteString("ChangeVector", changeVector);
        _json.WriteNumber("DeletedEtag", etag);
        _json.WriteNumber("Etag", etag);
        JsonDefaults.WriteTime(_json, "LastModified", new DateTime(deletedAtTicks, DateTimeKind.Utc));
        _json.WriteEndObject();
        _result.Tombstones.Read(_buffer.WrittenCount + _json.BytesPending - start);
    }

    private void WriteIndexes()
    {
        _result.Indexes.Start();
        _json.WriteStartArray("Indexes");
        if (_database.GetComponent<IndexStore>() is { } store)
        {
            foreach (var index in store.Indexes)
            {
                // Auto-indexes are made again by the queries that need them (RavenDB writes them
                // in its own server-side shape, which only it reads).
                if (index.Definition.IsAutoIndex || index.Name.StartsWith(IndexStore.ReplacementPrefix, StringComparison.OrdinalIgnoreCase))
                {
                    _result.Indexes.SkippedOne();
                    continue;
                }
                var definition = index.Definition.ToJson();
                definition["LockMode"] = index.LockMode.ToString();
                definition["Priority"] = index.Priority.ToString();
                definition.Remove("CreatedAt");
                if (_options.RemoveAnalyzers)
                {
                    SmugglerIndexes.RemoveAnalyzers(definition);
                }
                _json.WriteStartObject();
                _json.WriteString("Type", "JavaScriptMap");
                _json.WritePropertyName("IndexDefinition");
                definition.WriteTo(_json);
                _json.WriteEndObject();
                _result.Indexes.Read();
            }
        }
        _json.WriteEndArray();
        _result.Indexes.Finish(skipped: false);
    }

    private void WriteIdentities()
    {
        _result.Identities.Start();
        _json.WriteStartArray("Identities");
        using (var reader = _database.BeginRead())
        {
            foreach (var (prefix, value) in reader.GetIdentities())
            {
                _json.WriteStartObject();
                _json.WriteString("Key", prefix + "|");
                _json.WriteNumber("Value", value);
                _json.WriteEndObject();
                _result.Identities.Read();
            }
        }
        _json.WriteEndArray();
        _result.Identities.Finish(skipped: false);
    }

    private void WriteSubscriptions()
    {
        _result.Subscriptions.Start();
        _json.WriteStartArray("Subscriptions");
        if (_database.GetComponent<SubscriptionStore>() is { } store)
        {
            foreach (var subscription in store.Subscriptions)
            {
                var record = subscription.Record;
                _json.WriteStartObject();
                _json.WriteString("Query", record.Query);
                _json.WriteString("ChangeVectorForNextBatchStartingPoint", ChangeVectors.Format(_database.NodeTag, record.AckedEtag, _database.DatabaseId));
                _json.WriteNumber("SubscriptionId", record.Id);
                _json.WriteString("SubscriptionName", record.Name);
                _json.WriteNull("MentorNode");
                _json.WriteBoolean("PinToMentorNode", false);
                _json.WriteString("NodeTag", _database.NodeTag);
                JsonDefaults.WriteTime(_json, "LastBatchAckTime", record.LastAckAt);
                _json.WriteNull("LastClientConnectionTime");
                _json.WriteBoolean("Disabled", record.Disabled);
                _json.WriteNull("ArchivedDataProcessingBehavior");
                _json.WriteEndObject();
                _result.Subscriptions.Read();
            }
        }
        _json.WriteEndArray();
        _result.Subscriptions.Finish(skipped: false);
    }

    private async ValueTask FlushAsync(Stream output)
    {
        _json.Flush();
        if (_buffer.WrittenCount == 0)
        {
            return;
        }
        await output.WriteAsync(_buffer.WrittenMemory, _cancel).ConfigureAwait(false);
        _buffer.ResetWrittenCount();
    }
}
