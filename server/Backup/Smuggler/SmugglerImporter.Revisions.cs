using System.Globalization;
using Jackdaw.Server.Documents;
using Jackdaw.Server.Errors;
using Jackdaw.Storage.Blittable;

namespace Jackdaw.Server.Backup.Smuggler;

/// <summary>
/// The importer's <c>RevisionDocuments</c> (RavenDB's section): each element a revision as RavenDB
/// shows one (the version's document, <c>@metadata</c> with <c>@id</c>, <c>@collection</c>,
/// <c>@change-vector</c>, <c>@last-modified</c> and <c>@flags</c> <c>"HasRevisions, Revision"</c>,
/// or a delete revision: <c>"DeleteRevision"</c> and no body), stored as it was through
/// <see cref="ImportRevisionsCommand"/> in batches. Attachment contents may precede a revision as
/// they precede documents; a revision keeps its <c>@attachments</c> as data, but holds no reference
/// to a content (Jackdaw's revisions do not keep attachments alive), so a content only revisions
/// list is not stored.
/// </summary>
internal sealed partial class SmugglerImporter
{
    private async Task ReadRevisionsAsync(DumpReader dump)
    {
        var counts = _result.RevisionDocuments;
        var import = _options.Includes(DatabaseItemType.RevisionDocuments);
        counts.Start();
        if (!await StartArrayAsync(dump, "RevisionDocuments").ConfigureAwait(false))
        {
            return;
        }
        var batch = new List<ImportedRevision>();
        long bytes = 0;
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
            await ForgetUnlistedAsync(null).ConfigureAwait(false);
            if (!import)
            {
                counts.SkippedOne();
                continue;
            }
            counts.Read(element.Size);
            if (ReadRevision(element, position, counts) is not { } revision)
            {
                continue;
            }
            batch.Add(revision);
            bytes += revision.Document.Length;
            if (batch.Count >= MaxBatchDocuments || bytes >= MaxBatchBytes)
            {
                await ApplyRevisionsAsync(batch).ConfigureAwait(false);
                bytes = 0;
            }
        }
        await ApplyRevisionsAsync(batch).ConfigureAwait(false);
        counts.Finish(skipped: !import, attachmentsSkipped: !_options.Includes(DatabaseItemType.Attachments));
    }

    private async ValueTask ApplyRevisionsAsync(List<ImportedRevision> batch)
    {
        if (batch.Count == 0)
        {
            return;
        }
        using var context = new JsonOperationContext();
        await _database.EnqueueAsync(new ImportRevisionsCommand(batch.ToList(), context)).ConfigureAwait(false);
        batch.Clear();
    }

    /// <summary>The revision an element holds; null when refused (reported) or filtered out.</summary>
    private ImportedRevision? ReadRevision(DumpElement element, long position, SmugglerCounts counts)
    {
        if (element.TooLarge)
        {
            return RefuseRevision(counts, position, null, $"it is {element.Size:N0} bytes of JSON, more than the {_options.MaxDocumentBytes:N0} a document may have ({_options.MaxDocumentSetting}).");
        }
        if (!element.IsObject)
        {
            return RefuseRevision(counts, position, null, "it is not a JSON object.");
        }
        using var context = new JsonOperationContext();
        BlittableDocument document;
        try
        {
            document = context.Parse(element.Json, BlittableMode.Disk);
        }
        catch (BlittableParseException e)
        {
            return RefuseRevision(counts, position, BestEffortId(element.Json), $"its JSON is not a valid document: {e.Description}");
        }
        if (!document.Root.TryGet("@metadata"u8, out var value) || value.Type != BlittableToken.Object)
        {
            return RefuseRevision(counts, position, null, "it has no '@metadata': a revision carries its id, change vector and time there.");
        }
        var metadata = value.GetObject();
        var id = Text(metadata, "@id"u8);
        var changeVector = Text(metadata, "@change-vector"u8);
        var collection = Text(metadata, "@collection"u8);
        var flagsText = Text(metadata, "@flags"u8) ?? string.Empty;
        if (id is null || DocumentIds.Validate(id) is not null || DocumentIds.KindOf(id) != DocumentIds.IdKind.Exact)
        {
            return RefuseRevision(counts, position, id, "it has no valid '@metadata.@id'.");
        }
        if (string.IsNullOrEmpty(changeVector) || changeVector.Any(c => c > 127))
        {
            return RefuseRevision(counts, position, id, "it has no '@metadata.@change-vector' (ASCII): a revision is known by its change vector.");
        }
        if (!DateTime.TryParse(Text(metadata, "@last-modified"u8), CultureInfo.InvariantCulture, DateTimeStyles.AdjustToUniversal | DateTimeStyles.AssumeUniversal, out var lastModified))
        {
            return RefuseRevision(counts, position, id, "it has no valid '@metadata.@last-modified'.");
        }
        if (collection is "" or "@empty")
        {
            collection = null;
        }
        if (collection is not null && System.Text.Encoding.UTF8.GetByteCount(collection.ToLowerInvariant()) > 255)
        {
            return RefuseRevision(counts, position, id, $"its collection '{collection}' is longer than 255 bytes.");
        }
        if (_options.Collections.Count > 0 && (collection is null || !_options.IncludesCollection(collection)))
        {
            counts.SkippedOne();
            return null;
        }
        var flags = DocumentFlags.None;
        foreach (var name in flagsText.Split(',', StringSplitOptions.TrimEntries | StringSplitOptions.RemoveEmptyEntries))
        {
            if (Enum.TryParse<DocumentFlags>(name, ignoreCase: true, out var flag))
            {
                flags |= flag;
            }
        }
        return new ImportedRevision(id, collection, changeVector, lastModified, flags & (DocumentFlags.DeleteRevision | DocumentFlags.HasAttachments), document.Span.ToArray());
    }

    private static string? Text(BlittableObject metadata, ReadOnlySpan<byte> name) =>
        metadata.TryGet(name, out var value) && value.Type == BlittableToken.String ? value.GetString() : null;

    private ImportedRevision? RefuseRevision(SmugglerCounts counts, long position, string? id, string reason)
    {
        _result.Refuse(counts, new SmugglerRefusal("RevisionDocuments", position, id, reason));
        return null;
    }
}
