using System.Buffers;
using System.Text.Json;
using Jackdaw.Server.Databases;
using Jackdaw.Server.Documents;
using Jackdaw.Storage.Blittable;

namespace Jackdaw.Server.Backup.Smuggler;

/// <summary>
/// The importer's attachments. RavenDB writes each distinct content once per dump, right before the
/// first document (or revision) that lists it: a header element
/// <c>{"@metadata":{"@export-type":"Attachment"},"Hash","Size","Tag"}</c> followed by
/// <c>Size</c> raw bytes. A content is read as an upload is (<see cref="AttachmentUpload"/>: at
/// most ~1 MiB held, a larger one staged step by step), its SHA-256 checked against the header, and
/// kept by hash until the documents that list it are stored; a content the database holds already
/// is not read at all. A document's <c>@metadata.@attachments</c> then names what it links
/// (<see cref="ImportDocumentsCommand"/>).
/// </summary>
/// <remarks>
/// Memory: once the batch that linked a content committed, only a marker of its hash is kept (later
/// documents add references to the stored content). A content the next document does not list is
/// one no document of the dump lists (RavenDB writes a content just before its first user), so it
/// is let go at once; a staged one becomes an orphan. Whatever is still pending at the end is let
/// go the same way.
/// </remarks>
internal sealed partial class SmugglerImporter
{
    private readonly Dictionary<string, AttachmentSource> _contents = new(StringComparer.Ordinal);
    private readonly List<string> _recentContents = [];

    /// <summary>An attachment header of a dump: its content's base64 SHA-256 and size.</summary>
    private readonly record struct AttachmentHeader(string Hash, long Size);

    /// <summary>Reads (or steps over) the content after an attachment header.</summary>
    private async Task ReadAttachmentContentAsync(DumpReader dump, AttachmentHeader header, SmugglerCounts counts)
    {
        var attachments = counts.Attachments!;
        if (!_options.Includes(DatabaseItemType.Attachments))
        {
            attachments.SkippedOne();
            await dump.SkipRawAsync(header.Size).ConfigureAwait(false);
            return;
        }
        attachments.Read(header.Size);
        if (KnownContent(header.Hash) is not null)
        {
            await dump.SkipRawAsync(header.Size).ConfigureAwait(false);
            return;
        }
        var raw = new DumpRawStream(dump, header.Size);
        var source = await AttachmentUpload.ReadAsync(_database, raw, long.MaxValue, "the dump's own size", _cancel).ConfigureAwait(false);
        var actual = Convert.ToBase64String(source.Hash);
        if (actual != header.Hash)
        {
            await AttachmentUpload.AbandonAsync(_database, source).ConfigureAwait(false);
            attachments.Errored();
            _result.AddWarning($"An attachment content at {dump.Where} is not what its header says: its SHA-256 is {actual}, the header's {header.Hash}; it is left out, and so are the attachments that list it.");
            return;
        }
        _contents[header.Hash] = source;
        _recentContents.Add(header.Hash);
    }

    /// <summary>The content of <paramref name="hash"/> as read from this dump or stored in the database; null when neither has it.</summary>
    private AttachmentSource? KnownContent(string hash)
    {
        if (_contents.TryGetValue(hash, out var known))
        {
            return known;
        }
        var bytes = new byte[AttachmentEntry.HashSize];
        if (!Convert.TryFromBase64String(hash, bytes, out var written) || written != bytes.Length)
        {
            return null;
        }
        using var reader = _database.BeginRead();
        if (reader.GetAttachmentContent(hash) is not { } stored)
        {
            return null;
        }
        return _contents[hash] = AttachmentSource.FromStored(bytes, stored.Size);
    }

    /// <summary>
    /// The attachments a document lists (<c>@metadata.@attachments</c>), each with its content; null
    /// when the import leaves attachments alone. One whose content is neither in the dump nor in the
    /// database is left out and counted as an error (a warning names it).
    /// </summary>
    private List<ImportedAttachment>? AttachmentsOf(BlittableDocument document, string id, SmugglerCounts counts, HashSet<string> referenced)
    {
        if (!_options.Includes(DatabaseItemType.Attachments))
        {
            return null;
        }
        var result = new List<ImportedAttachment>();
        foreach (var (name, hash, contentType) in ListedAttachments(document.Span))
        {
            referenced.Add(hash);
            if (KnownContent(hash) is { } source)
            {
                result.Add(new ImportedAttachment(name, contentType, source));
                continue;
            }
            counts.Attachments!.Errored();
            _result.AddWarning($"Document '{id}': attachment '{name}' is left out: its content ({hash}) is neither in the dump nor in the database.");
        }
        return result;
    }

    /// <summary>Name, hash and content type of each entry of <c>@metadata.@attachments</c> (entries without a name or hash are ignored).</summary>
    private static List<(string Name, string Hash, string ContentType)> ListedAttachments(ReadOnlySpan<byte> document)
    {
        var result = new List<(string, string, string)>();
        var root = BlittableReader.Open(document);
        if (!root.TryGet("@metadata"u8, out var metadata) || metadata.Type != BlittableToken.Object
            || !metadata.GetObject().TryGet("@attachments"u8, out var list) || list.Type != BlittableToken.Array)
        {
            return result;
        }
        var array = list.GetArray();
        for (var i = 0; i < array.Length; i++)
        {
            var item = array[i];
            if (item.Type != BlittableToken.Object)
            {
                continue;
            }
            var entry = item.GetObject();
            var name = entry.TryGet("Name"u8, out var n) && n.Type == BlittableToken.String ? n.GetString() : null;
            var hash = entry.TryGet("Hash"u8, out var h) && h.Type == BlittableToken.String ? h.GetString() : null;
            var contentType = entry.TryGet("ContentType"u8, out var c) && c.Type == BlittableToken.String ? c.GetString() : null;
            if (!string.IsNullOrEmpty(name) && !string.IsNullOrEmpty(hash))
            {
                result.Add((name, hash, contentType ?? string.Empty));
            }
        }
        return result;
    }

    /// <summary>After each document: contents read just before it that it does not list are listed by no document of the dump.</summary>
    private async ValueTask ForgetUnlistedAsync(HashSet<string>? referenced)
    {
        if (_recentContents.Count == 0)
        {
            return;
        }
        foreach (var hash in _recentContents)
        {
            if ((referenced is null || !referenced.Contains(hash)) && _contents.Remove(hash, out var source))
            {
                await AttachmentUpload.AbandonAsync(_database, source).ConfigureAwait(false);
            }
        }
        _recentContents.Clear();
    }

    /// <summary>After a batch committed: the contents it linked are stored, so only their hashes are kept.</summary>
    private void MarkLinked(List<(ImportedDocument Document, long Position)> batch)
    {
        List<string>? linked = null;
        foreach (var (document, _) in batch)
        {
            foreach (var attachment in document.Attachments ?? [])
            {
                if (!attachment.Source.IsStored)
                {
                    (linked ??= []).Add(Convert.ToBase64String(attachment.Source.Hash));
                }
            }
        }
        if (linked is null)
        {
            return;
        }
        using var reader = _database.BeginRead();
        foreach (var hash in linked)
        {
            if (_contents.TryGetValue(hash, out var source) && !source.IsStored && reader.GetAttachmentContent(hash) is { } stored)
            {
                _contents[hash] = AttachmentSource.FromStored(source.Hash, stored.Size);
            }
        }
    }

    /// <summary>On the way out: staged contents no document linked become orphans.</summary>
    private async ValueTask ReleaseContentsAsync()
    {
        foreach (var source in _contents.Values)
        {
            if (source.IsStaged)
            {
                await AttachmentUpload.AbandonAsync(_database, source).ConfigureAwait(false);
            }
        }
        _contents.Clear();
    }

    /// <summary>RavenDB's attachment header (<c>{"@metadata":{"@export-type":"Attachment"},"Hash","Size",...}</c>), else null.</summary>
    private static AttachmentHeader? AttachmentHeaderOf(ReadOnlySequence<byte> json)
    {
        // Cheap test first: a document that merely mentions the word is parsed once more, no harm.
        if (json.Length > 4096 || !Contains(json, "\"@export-type\""u8))
        {
            return null;
        }
        using var parsed = JsonDocument.Parse(json);
        var root = parsed.RootElement;
        if (!root.TryGetProperty("@metadata", out var metadata) || metadata.ValueKind != JsonValueKind.Object
            || !metadata.TryGetProperty("@export-type", out var kind) || kind.ValueKind != JsonValueKind.String || kind.GetString() != "Attachment")
        {
            return null;
        }
        var size = root.TryGetProperty("Size", out var s) && s.TryGetInt64(out var bytes) && bytes >= 0 ? bytes : 0;
        var hash = root.TryGetProperty("Hash", out var h) && h.ValueKind == JsonValueKind.String ? h.GetString() ?? string.Empty : string.Empty;
        return new AttachmentHeader(hash, size);
    }
}
