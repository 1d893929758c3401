using System.Buffers;
using System.IO.Compression;
using System.IO.Pipelines;
using System.Text.Json;
using Jackdaw.Server.Databases;
using Jackdaw.Server.Documents;
using Jackdaw.Server.Documents.Commands;
using Jackdaw.Server.Errors;
using Jackdaw.Server.Wire;
using Jackdaw.Storage.Blittable;

namespace Jackdaw.Server.Backup.Smuggler;

/// <summary>
/// Reads a <c>.ravendbdump</c> into a database as it is gunzipped (see <see cref="DumpReader"/>):
/// each document is built as a blittable from its JSON and put through the merger in batches of
/// <see cref="MaxBatchDocuments"/> (one batch committing while the next is parsed), as a bulk
/// insert does, with the attachments it lists; tombstones, identities, index definitions and subscriptions follow the dump's
/// order. An item the importer must refuse (a document with a bad id, JSON that is not a valid
/// document, one over the size limit, an index that does not compile) is reported in the result
/// and the rest imported; a dump that cannot be read on (not gzip, not JSON, cut short) stops it
/// with a <see cref="BadRequestException"/>, what came before it committed.
/// </summary>
/// <remarks>
/// RavenDB's metadata is kept as it is, but for what the server stamps again (<c>@id</c>,
/// <c>@change-vector</c>, <c>@last-modified</c>), what it rebuilds (<c>@attachments</c>, from the
/// attachments linked: SmugglerImporter.Attachments.cs) and what describes data Jackdaw does not
/// have (<c>@counters</c>, <c>@timeseries</c>, <c>@revisions</c>, and those names in <c>@flags</c>),
/// which is removed; <c>@collection</c> <c>@empty</c> (RavenDB's "no collection") is removed too.
/// Revisions: SmugglerImporter.Revisions.cs.
/// </remarks>
internal sealed partial class SmugglerImporter
{
    /// <summary>The property a logical backup file describes itself in (see <c>Backup.LogicalChain</c>).</summary>
    internal const string LogicalBackupHeader = "JackdawBackup";

    private const int MaxBatchDocuments = 1024;
    private const long MaxBatchBytes = 8 * 1024 * 1024;

    // @attachments is rebuilt by the server from the attachments the import links; the others
    // describe data Jackdaw does not have.
    private static readonly byte[][] DroppedMetadata = ["@attachments"u8.ToArray(), "@counters"u8.ToArray(), "@timeseries"u8.ToArray(), "@revisions"u8.ToArray()];

    // Flags of data Jackdaw does not have (the server's own, HasAttachments and HasRevisions, are
    // stamped from the trees by every put whatever a body sends; other names are kept as written).
    private static readonly string[] DroppedFlags = ["HasCounters", "HasTimeSeries", "Revision", "DeleteRevision"];

    private readonly DocumentDatabase _database;
    private readonly SmugglerImportOptions _options;
    private readonly SmugglerResult _result;
    private readonly DatabaseOperation? _operation;
    private readonly CancellationToken _cancel;
    private readonly DateTime _now = DateTime.UtcNow;
    private readonly BlittablePatch _strip = new();

    // The database's last etag when the import began: a document written after it is newer than any tombstone of the dump.
    private readonly long _startEtag;

    // One batch commits while the next is parsed; each holds its own context until it is durable.
    private JsonOperationContext _parsing = new();
    private JsonOperationContext? _spare;
    private List<(ImportedDocument Document, long Position)> _batch = new(MaxBatchDocuments);
    private long _batchBytes;
    private (Task Commit, List<(ImportedDocument Document, long Position)> Batch, JsonOperationContext Context)? _inFlight;
    private long _committed;

    public SmugglerImporter(DocumentDatabase database, SmugglerImportOptions options, SmugglerResult result, DatabaseOperation? operation, CancellationToken cancel)
    {
        _database = database;
        _options = options;
        _result = result;
        _operation = operation;
        _cancel = cancel;
        _startEtag = database.LastEtag;
    }

    /// <summary>The documents committed so far.</summary>
    public long Committed => _committed;

    public async Task RunAsync(Stream source)
    {
        var gzip = new GZipStream(source, CompressionMode.Decompress, leaveOpen: true);
        var pipe = PipeReader.Create(gzip, new StreamPipeReaderOptions(bufferSize: 64 * 1024, minimumReadSize: 16 * 1024, leaveOpen: true));
        var dump = new DumpReader(pipe, _cancel);
        try
        {
            var (first, _) = await dump.NextTokenAsync().ConfigureAwait(false);
            if (first != JsonTokenType.StartObject)
            {
                throw new BadRequestException("The dump is not a JSON object: a .ravendbdump is gzipped {\"BuildVersion\":...,\"Docs\":[...],...}.");
            }
            try
            {
                while (true)
                {
                    var (type, name) = await dump.NextTokenAsync().ConfigureAwait(false);
                    if (type == JsonTokenType.EndObject)
                    {
                        break;
                    }
                    await ReadSectionAsync(dump, name!).ConfigureAwait(false);
                }
                await dump.ExpectEndAsync().ConfigureAwait(false);
            }
            catch (BadRequestException)
            {
                // The dump cannot be read on (cut short, say): what was read whole before the fault is kept.
                await SendBatchAsync().ConfigureAwait(false);
                await DrainAsync().ConfigureAwait(false);
                throw;
            }
            await SendBatchAsync().ConfigureAwait(false);
            await DrainAsync().ConfigureAwait(false);
        }
        finally
        {
            dump.Release();
            await pipe.CompleteAsync().ConfigureAwait(false);
            await gzip.DisposeAsync().ConfigureAwait(false);
            await AbandonAsync().ConfigureAwait(false);
            await ReleaseContentsAsync().ConfigureAwait(false);
        }
        _result.FinishAll();
    }

    private async Task ReadSectionAsync(DumpReader dump, string name)
    {
        switch (name)
        {
            case "BuildVersion":
                var (type, version) = await dump.NextTokenAsync().ConfigureAwait(false);
                if (type == JsonTokenType.Number && long.TryParse(version, out var build) && build is > 0 and < 40000 and not (>= 40 and < 1000))
                {
                    _result.AddWarning($"The dump's BuildVersion {build} is RavenDB 3.x's: its documents are read as they are, its other sections are not.");
                }
                return;
            case "Docs":
                await ReadDocumentsAsync(dump).ConfigureAwait(false);
                return;
            case "Tombstones":
                await ReadTombstonesAsync(dump).ConfigureAwait(false);
                return;
            case "Indexes":
                await ReadIndexesAsync(dump).ConfigureAwait(false);
                return;
            case "Identities":
                await ReadIdentitiesAsync(dump).ConfigureAwait(false);
                return;
            case "Subscriptions":
                await ReadSubscriptionsAsync(dump).ConfigureAwait(false);
                return;
            case LogicalBackupHeader:
                // A logical backup's own header (the etags it covers): read by the restore, nothing to import.
                await dump.SkipValueAsync().ConfigureAwait(false);
                return;
            case "RevisionDocuments":
                await ReadRevisionsAsync(dump).ConfigureAwait(false);
                return;
            case "TimeSeries":
                // Each segment's header is followed by its raw bytes ("Size" of them).
                await SkipElementsAsync(dump, name, rawAfter: SegmentSize).ConfigureAwait(false);
                return;
            default:
                await dump.SkipValueAsync().ConfigureAwait(false);
                if (_result.CountsOf(name) is { } counts)
                {
                    counts.Finish(skipped: true);
                }
                _result.AddInfo($"Skipped '{name}': Jackdaw has no {name}.");
                return;
        }
    }

    /// <summary>Reads the start of an array section; false for a null one.</summary>
    private static async ValueTask<bool> StartArrayAsync(DumpReader dump, string name)
    {
        var (type, _) = await dump.NextTokenAsync().ConfigureAwait(false);
        return type switch
        {
            JsonTokenType.StartArray => true,
            JsonTokenType.Null => false,
            _ => throw new BadRequestException($"The dump's '{name}' is not an array ({dump.Where})."),
        };
    }

    private async Task SkipElementsAsync(DumpReader dump, string name, Func<ReadOnlySequence<byte>, long> rawAfter)
    {
        var counts = _result.CountsOf(name)!;
        if (await StartArrayAsync(dump, name).ConfigureAwait(false))
        {
            while (await dump.NextElementAsync(long.MaxValue).ConfigureAwait(false) is { IsDone: false } element)
            {
                counts.SkippedOne();
                var raw = element.IsObject ? rawAfter(element.Json) : 0;
                if (raw > 0)
                {
                    await dump.SkipRawAsync(raw).ConfigureAwait(false);
                }
            }
        }
        counts.Finish(skipped: true);
        _result.AddInfo($"Skipped '{name}': Jackdaw has no {name}.");
    }

    private async Task ReadDocumentsAsync(DumpReader dump)
    {
        var counts = _result.Documents;
        var import = _options.Includes(DatabaseItemType.Documents);
        counts.Start();
        if (!await StartArrayAsync(dump, "Docs").ConfigureAwait(false))
        {
            return;
        }
        long position = 0;
        while (await dump.NextElementAsync(_options.MaxDocumentBytes).ConfigureAwait(false) is { IsDone: false } element)
        {
            _cancel.ThrowIfCancellationRequested();
            position++;
            if (element.IsObject && !element.TooLarge && AttachmentHeaderOf(element.Json) is { } header)
            {
                await ReadAttachmentContentAsync(dump, header, counts).ConfigureAwait(false);
                continue;
            }
            if (!import)
            {
                counts.SkippedOne();
                await ForgetUnlistedAsync(null).ConfigureAwait(false);
                continue;
            }
            counts.Read(element.Size);
            _operation?.DocumentProcessed();
            var referenced = new HashSet<string>(StringComparer.Ordinal);
            if (ReadDocument(element, position, referenced) is { } document)
            {
                _batch.Add((document, position));
                _batchBytes += element.Size + (document.Attachments?.Sum(a => (long)a.Source.Bytes.Length) ?? 0);
                if (_batch.Count >= MaxBatchDocuments || _batchBytes >= MaxBatchBytes)
                {
                    await SendBatchAsync().ConfigureAwait(false);
                }
            }
            await ForgetUnlistedAsync(referenced).ConfigureAwait(false);
        }
        // Documents are durable before what follows them in the dump (tombstones) is applied.
        await SendBatchAsync().ConfigureAwait(false);
        await DrainAsync().ConfigureAwait(false);
        counts.Finish(skipped: !import, attachmentsSkipped: !_options.Includes(DatabaseItemType.Attachments));
    }

    /// <summary>
    /// The document an element holds, ready to put with its attachments; null when refused
    /// (reported) or filtered out. <paramref name="referenced"/> gets the hashes it lists (a filtered
    /// document's too: a later document may list the same content, written once before the first).
    /// </summary>
    private ImportedDocument? ReadDocument(DumpElement element, long position, HashSet<string> referenced)
    {
        if (element.TooLarge)
        {
            return Refuse(position, null, $"it is {element.Size:N0} bytes of JSON, more than the {_options.MaxDocumentBytes:N0} a document may have ({_options.MaxDocumentSetting}).");
        }
        if (!element.IsObject)
        {
            return Refuse(position, null, "it is not a JSON object.");
        }
        BlittableDocument document;
        try
        {
            document = _parsing.Parse(element.Json, BlittableMode.Disk);
        }
        catch (BlittableParseException e)
        {
            return Refuse(position, BestEffortId(element.Json), $"its JSON is not a valid document: {e.Description}");
        }
        string? id;
        string? collection;
        try
        {
            id = DocumentBodies.GetMetadataId(document);
            collection = DocumentBodies.GetCollection(document);
        }
        catch (BadRequestException e)
        {
            return Refuse(position, BestEffortId(element.Json), e.Message);
        }
        if (id is null)
        {
            return Refuse(position, null, "it has no '@metadata.@id': a dump's documents carry their id there.");
        }
        if (DocumentIds.Validate(id) is { } problem)
        {
            return Refuse(position, id, problem);
        }
        if (DocumentIds.KindOf(id) != DocumentIds.IdKind.Exact)
        {
            return Refuse(position, id, "an id ending in '/' or '|' asks the server to make one up; a dump's documents carry their final ids.");
        }
        if (collection == "@empty")
        {
            collection = null;
        }
        foreach (var (_, hash, _) in ListedAttachments(document.Span))
        {
            referenced.Add(hash);
        }
        if ((collection is null ? _options.Collections.Count > 0 : !_options.IncludesCollection(collection))
            || (!_options.IncludeExpired && SmugglerDocuments.Expired(document.Span, _now)))
        {
            _result.Documents.SkippedOne();
            return null;
        }
        var attachments = AttachmentsOf(document, id, _result.Documents, referenced);
        document = StripMetadata(document);
        return new ImportedDocument(new DocumentToPut(id, document, collection, null), attachments);
    }

    /// <summary>The document without the metadata of data Jackdaw does not have or rebuilds (see the remarks); itself when it has none.</summary>
    private BlittableDocument StripMetadata(BlittableDocument document)
    {
        if (!document.Root.TryGet("@metadata"u8, out var value) || value.Type != BlittableToken.Object)
        {
            return document;
        }
        var metadata = value.GetObject();
        var emptyCollection = metadata.TryGet("@collection"u8, out var collection) && collection.ValueEquals("@empty"u8);
        var any = emptyCollection;
        foreach (var name in DroppedMetadata)
        {
            any |= metadata.TryGet(name, out _);
        }
        var flags = metadata.TryGet("@flags"u8, out var flagsValue) && flagsValue.Type == BlittableToken.String ? flagsValue.GetString() : null;
        var keptFlags = flags is null ? null : KeptFlags(flags);
        any |= keptFlags != flags;
        if (!any)
        {
            return document;
        }
        _strip.Clear();
        var patch = _strip.Object("@metadata");
        foreach (var name in DroppedMetadata)
        {
            if (metadata.TryGet(name, out _))
            {
                patch.Remove(System.Text.Encoding.UTF8.GetString(name));
            }
        }
        if (emptyCollection)
        {
            patch.Remove("@collection");
        }
        if (keptFlags != flags)
        {
            if (keptFlags is null)
            {
                patch.Remove("@flags");
            }
            else
            {
                patch.Set("@flags", keptFlags);
            }
        }
        return _parsing.Modify(document.Span, _strip, BlittableMode.Disk);
    }

    /// <summary>A dump's <c>@flags</c> without the flags of data Jackdaw does not have; the same instance when nothing goes, null when nothing is left.</summary>
    private static string? KeptFlags(string flags)
    {
        var names = flags.Split(',', StringSplitOptions.TrimEntries | StringSplitOptions.RemoveEmptyEntries);
        var kept = names.Where(n => !DroppedFlags.Contains(n, StringComparer.OrdinalIgnoreCase)).ToArray();
        if (kept.Length == names.Length)
        {
            return flags;
        }
        return kept.Length == 0 ? null : string.Join(", ", kept);
    }

    private ImportedDocument? Refuse(long position, string? id, string reason)
    {
        _result.Refuse(_result.Documents, new SmugglerRefusal("Docs", position, id, reason));
        return null;
    }

    /// <summary>Cold path: the <c>@metadata.@id</c> of an entry refused as a document, for the report, when it can be read.</summary>
    private static string? BestEffortId(ReadOnlySequence<byte> json)
    {
        try
        {
            using var parsed = JsonDocument.Parse(json, new JsonDocumentOptions { MaxDepth = 1024 });
            return parsed.RootElement.ValueKind == JsonValueKind.Object
                   && parsed.RootElement.TryGetProperty("@metadata", out var metadata) && metadata.ValueKind == JsonValueKind.Object
                   && metadata.TryGetProperty("@id", out var id) && id.ValueKind == JsonValueKind.String
                ? id.GetString()
                : null;
        }
        catch (Exception e) when (e is JsonException or InvalidOperationException or ArgumentException)
        {
            return null;
        }
    }

    /// <summary>The size of a time-series segment's raw bytes after its header (<c>{"Document":{...},"Size":n}</c>).</summary>
    private static long SegmentSize(ReadOnlySequence<byte> json)
    {
        using var parsed = JsonDocument.Parse(json);
        return parsed.RootElement.TryGetProperty("Size", out var size) && size.TryGetInt64(out var bytes) && bytes > 0 ? bytes : 0;
    }

    private static bool Contains(ReadOnlySequence<byte> json, ReadOnlySpan<byte> text)
    {
        if (json.IsSingleSegment)
        {
            return json.FirstSpan.IndexOf(text) >= 0;
        }
        return json.ToArray().AsSpan().IndexOf(text) >= 0;
    }
}
