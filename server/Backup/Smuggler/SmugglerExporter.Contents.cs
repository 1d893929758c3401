using System.Buffers;
using Jackdaw.Server.Documents;
using Jackdaw.Server.Wire;
using Jackdaw.Storage.Blittable;

namespace Jackdaw.Server.Backup.Smuggler;

/// <summary>
/// The exporter's attachments and revisions. As RavenDB writes them: each distinct attachment
/// content once per dump, right before the first document (or revision) that lists it, as a header
/// element <c>{"@metadata":{"@export-type":"Attachment"},"Hash","Size","Tag"}</c> followed by its
/// <c>Size</c> raw bytes; then the document, its <c>@metadata.@attachments</c> as stored. Without
/// <c>Attachments</c> in <c>OperateOnTypes</c> no content is written and documents lose
/// <c>@attachments</c> (RavenDB's filter). Revisions follow the documents in <c>RevisionDocuments</c>,
/// each as RavenDB shows a revision, in revision etag order; the revision tombstones (removed
/// revisions' change vectors) go in <c>Tombstones</c> after the document tombstones, as RavenDB's
/// <c>"Type":"Revision"</c> items.
/// </summary>
/// <remarks>
/// A content is copied in steps of <see cref="ContentStep"/> bytes, each from a fresh snapshot (the
/// stream's chunks never change while its content is stored: the step checks the content is still
/// there under the same stream), with a flush to the destination whenever the buffer is full, so
/// neither a large attachment nor a slow reader holds memory or old pages. A content deleted while
/// it is copied fails the export (its header promised its size).
/// </remarks>
internal sealed partial class SmugglerExporter
{
    private const int ContentStep = 1024 * 1024;

    private readonly HashSet<string> _writtenContents = new(StringComparer.Ordinal);
    private readonly List<(string Hash, AttachmentContentInfo Content, string Tag)> _pendingContents = [];
    private readonly BlittablePatch _filter = new();
    private JsonOperationContext? _filterContext;
    private SmugglerCounts? _contentsOf;

    /// <summary>What a pass of writing items stopped for.</summary>
    private enum Step
    {
        Ended,
        Flush,
        Contents,
    }

    /// <summary>
    /// Whether the document lists attachment contents not written yet (then they are in
    /// <see cref="_pendingContents"/>, to write before it). A content no longer stored (a revision's,
    /// whose attachment is gone) is not written.
    /// </summary>
    private bool NeedsContents(DocumentsReader reader, ReadOnlySpan<byte> document, SmugglerCounts counts)
    {
        if (!_options.Includes(DatabaseItemType.Attachments))
        {
            return false;
        }
        _contentsOf = counts;
        foreach (var (name, hash) in ListedAttachments(document))
        {
            if (_writtenContents.Contains(hash) || _pendingContents.Exists(p => p.Hash == hash))
            {
                continue;
            }
            if (reader.GetAttachmentContent(hash) is { } content)
            {
                _pendingContents.Add((hash, content, $"{DocumentIdOf(document)}/{name}"));
            }
            else
            {
                counts.Attachments!.SkippedOne();
            }
        }
        return _pendingContents.Count > 0;
    }

    /// <summary>Writes the pending contents: each header, then its bytes, step by step.</summary>
    private async ValueTask WriteContentsAsync(Stream output)
    {
        foreach (var (hash, content, tag) in _pendingContents)
        {
            _json.WriteStartObject();
            _json.WriteStartObject("@metadata");
            _json.WriteString("@export-type", "Attachment");
            _json.WriteEndObject();
            _json.WriteString("Hash", hash);
            _json.WriteNumber("Size", content.Size);
            _json.WriteString("Tag", tag);
            _json.WriteEndObject();
            // The raw bytes go straight into the buffer, after what the writer holds.
            _json.Flush();
            long position = 0;
            while (position < content.Size)
            {
                using (var reader = _database.BeginRead())
                {
                    if (reader.GetAttachmentContent(hash) is not { } now || now.StreamId != content.StreamId)
                    {
                        throw new InvalidOperationException($"Attachment content {hash} ({tag}) was deleted while it was exported; export again.");
                    }
                    using var stream = reader.OpenAttachmentContent(hash)!;
                    stream.Position = position;
                    var step = (int)Math.Min(ContentStep, content.Size - position);
                    stream.ReadExactly(_buffer.GetSpan(step)[..step]);
                    _buffer.Advance(step);
                    position += step;
                }
                if (_buffer.WrittenCount >= FlushThreshold)
                {
                    await FlushAsync(output).ConfigureAwait(false);
                }
            }
            _writtenContents.Add(hash);
            _contentsOf?.Attachments!.Read(content.Size);
        }
        _pendingContents.Clear();
        await FlushAsync(output).ConfigureAwait(false);
    }

    /// <summary>Writes a stored document as JSON into <see cref="_document"/> and the dump; without attachments in the export, without <c>@attachments</c>.</summary>
    private void WriteDocument(ReadOnlySpan<byte> document)
    {
        _document.ResetWrittenCount();
        if (!_options.Includes(DatabaseItemType.Attachments) && HasAttachmentsList(document))
        {
            _filterContext ??= new JsonOperationContext();
            _filter.Clear();
            _filter.Object("@metadata").Remove("@attachments");
            var filtered = _filterContext.Modify(document, _filter, BlittableMode.Disk);
            BlittableJsonWriter.WriteTo(filtered.Span, _document);
            _filterContext.Reset();
        }
        else
        {
            BlittableJsonWriter.WriteTo(document, _document);
        }
        _json.WriteRawValue(_document.WrittenSpan, skipInputValidation: true);
    }

    private async Task WriteRevisionsAsync(Stream output)
    {
        var counts = _result.RevisionDocuments;
        counts.Start();
        _json.WriteStartArray("RevisionDocuments");
        var after = AfterRevisionEtag;
        using var context = new JsonOperationContext();
        var writer = new RevisionResultsWriter(context);
        while (true)
        {
            Step step;
            using (var reader = _database.BeginRead())
            {
                step = WriteSomeRevisions(reader, writer, context, ref after);
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
        _json.WriteEndArray();
        counts.Finish(skipped: false, attachmentsSkipped: !_options.Includes(DatabaseItemType.Attachments));
    }

    private Step WriteSomeRevisions(DocumentsReader reader, RevisionResultsWriter writer, JsonOperationContext context, ref long after)
    {
        var counts = _result.RevisionDocuments;
        while (true)
        {
            var keys = reader.GetRevisionKeysAfter(after, 256);
            if (keys.Count == 0)
            {
                return Step.Ended;
            }
            foreach (var key in keys)
            {
                _cancel.ThrowIfCancellationRequested();
                if (!reader.TryGetRevisionByKey(key, out var revision))
                {
                    continue;
                }
                var collection = revision.Collection;
                if (_options.Collections.Count > 0 && (collection is null || !_options.IncludesCollection(collection)))
                {
                    after = revision.Etag;
                    counts.SkippedOne();
                    continue;
                }
                if (NeedsContents(reader, revision.Document, counts))
                {
                    return Step.Contents;
                }
                after = revision.Etag;
                _document.ResetWrittenCount();
                writer.Write(revision, _document, metadataOnly: false);
                context.Reset();
                _json.WriteRawValue(_document.WrittenSpan, skipInputValidation: true);
                counts.Read(_document.WrittenCount);
                counts.Etag(revision.Etag);
                if (_buffer.WrittenCount + _json.BytesPending >= FlushThreshold)
                {
                    return Step.Flush;
                }
            }
        }
    }

    /// <summary>
    /// Revision tombstones go with revisions: a dump without revisions has no use for them. With a
    /// collection filter none are written: a tombstone keeps only the change vector, not the
    /// collection (RavenDB too writes only the collections' document tombstones then).
    /// </summary>
    private bool WritesRevisionTombstones => _options.Includes(DatabaseItemType.RevisionDocuments) && _options.Collections.Count == 0;

    /// <summary>
    /// Writes revision tombstones after <paramref name="after"/> up to <paramref name="upTo"/> (revision
    /// etags); returns true when the buffer should be flushed before the rest.
    /// </summary>
    private bool WriteSomeRevisionTombstones(DocumentsReader reader, long upTo, ref long after)
    {
        while (true)
        {
            var tombstones = reader.GetRevisionTombstonesAfter(after, 256);
            if (tombstones.Count == 0)
            {
                return false;
            }
            foreach (var tombstone in tombstones)
            {
                _cancel.ThrowIfCancellationRequested();
                if (tombstone.Etag > upTo)
                {
                    return false;
                }
                after = tombstone.Etag;
                // RavenDB keys a revision tombstone by the removed revision's change vector; its importer
                // finds the revision by it, whatever collection is named. The collection is not kept here:
                // "@empty" is RavenDB's name for none (an empty name would make it a collection of that name).
                // Its etag is a revision etag, so it does not move the documents' Tombstones.LastEtag.
                WriteTombstone(tombstone.ChangeVector, "Revision", "@empty", tombstone.ChangeVector, tombstone.Etag, tombstone.RemovedAtTicks);
                if (_buffer.WrittenCount + _json.BytesPending >= FlushThreshold)
                {
                    return true;
                }
            }
        }
    }

    private static bool HasAttachmentsList(ReadOnlySpan<byte> document)
    {
        var root = BlittableReader.Open(document);
        return root.TryGet("@metadata"u8, out var metadata) && metadata.Type == BlittableToken.Object && metadata.GetObject().TryGet("@attachments"u8, out _);
    }

    /// <summary>Name and hash of each entry of a stored document's <c>@metadata.@attachments</c>.</summary>
    private static List<(string Name, string Hash)> ListedAttachments(ReadOnlySpan<byte> document)
    {
        var result = new List<(string, string)>();
        if (document.IsEmpty)
        {
            return result;
        }
        var root = BlittableReader.Open(document);
        if (!root.TryGet("@metadata"u8, out var metadata) || metadata.Type != BlittableToken.Object
            || !metadata.GetObject().TryGet("@attachments"u8, out var list) || list.Type != BlittableToken.Array)
        {
            return result;
        }
        var array = list.GetArray();
        for (var i = 0; i < array.Length; i++)
        {
            if (array[i].Type != BlittableToken.Object)
            {
                continue;
            }
            var entry = array[i].GetObject();
            if (entry.TryGet("Hash"u8, out var hash) && hash.Type == BlittableToken.String && entry.TryGet("Name"u8, out var name) && name.Type == BlittableToken.String)
            {
                result.Add((name.GetString()!, hash.GetString()!));
            }
        }
        return result;
    }

    private static string DocumentIdOf(ReadOnlySpan<byte> document)
    {
        var root = BlittableReader.Open(document);
        return root.TryGet("@metadata"u8, out var metadata) && metadata.Type == BlittableToken.Object
               && metadata.GetObject().TryGet("@id"u8, out var id) && id.Type == BlittableToken.String
            ? id.GetString() ?? string.Empty
            : string.Empty;
    }
}
