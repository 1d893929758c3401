using System.Text.Json;
using Jackdaw.Server.Documents;
using Jackdaw.Storage.Engine;

namespace Jackdaw.Server.Backup.Smuggler;

/// <summary>
/// The importer's <c>Tombstones</c> (RavenDB's section): document deletions
/// (<c>{"Key":lower id,"Type":"Document","Collection":...}</c>, through <see cref="ApplyDeletionsCommand"/>)
/// and removed revisions (<c>{"Key":change vector,"Type":"Revision",...}</c>, through
/// <see cref="ApplyRevisionTombstonesCommand"/>, only when revisions are imported too), each kind in
/// batches. RavenDB's attachment and counter tombstones are of data Jackdaw does not have: read
/// past (skipped). Any other <c>Type</c> is refused, named, and the rest imported.
/// </summary>
internal sealed partial class SmugglerImporter
{
    private const int MaxDeletionsPerBatch = 1024;

    /// <summary>RavenDB's tombstone types of data Jackdaw does not have.</summary>
    private static readonly string[] ReadPastTombstoneTypes = ["Attachment", "Counter", "TimeSeries"];

    private async Task ReadTombstonesAsync(DumpReader dump)
    {
        var counts = _result.Tombstones;
        var import = _options.Includes(DatabaseItemType.Tombstones);
        counts.Start();
        if (!await StartArrayAsync(dump, "Tombstones").ConfigureAwait(false))
        {
            return;
        }
        var deletions = new List<(string, string?)>();
        var removals = new List<(string, long)>();
        long position = 0;
        while (await dump.NextElementAsync(1024 * 1024).ConfigureAwait(false) is { IsDone: false } element)
        {
            _cancel.ThrowIfCancellationRequested();
            position++;
            if (!import)
            {
                counts.SkippedOne();
                continue;
            }
            counts.Read(element.Size);
            ReadTombstone(element, position, counts, deletions, removals);
            if (deletions.Count >= MaxDeletionsPerBatch)
            {
                await ApplyDeletionsAsync(deletions).ConfigureAwait(false);
            }
            if (removals.Count >= MaxDeletionsPerBatch)
            {
                await ApplyRevisionTombstonesAsync(removals).ConfigureAwait(false);
            }
        }
        await ApplyDeletionsAsync(deletions).ConfigureAwait(false);
        await ApplyRevisionTombstonesAsync(removals).ConfigureAwait(false);
        counts.Finish(skipped: !import);
    }

    /// <summary>Adds the element to the deletions or the revision removals; skips (counted) or refuses (reported) the others.</summary>
    private void ReadTombstone(DumpElement element, long position, SmugglerCounts counts, List<(string, string?)> deletions, List<(string, long)> removals)
    {
        if (element.TooLarge || !element.IsObject)
        {
            RefuseItem(counts, "Tombstones", position, null, "it is not a tombstone object {\"Key\":...,\"Type\":\"Document\",\"Collection\":...}.");
            return;
        }
        using var json = JsonDocument.Parse(element.Json);
        var root = json.RootElement;
        var key = root.TryGetProperty("Key", out var k) && k.ValueKind == JsonValueKind.String ? k.GetString() : null;
        string? type = "Document";
        if (root.TryGetProperty("Type", out var t) && t.ValueKind != JsonValueKind.Null)
        {
            type = t.ValueKind == JsonValueKind.String ? t.GetString() : null;
        }
        switch (type)
        {
            case "Document":
                if (ReadDocumentTombstone(root, key, position, counts) is { } deletion)
                {
                    deletions.Add(deletion);
                }
                return;
            case "Revision":
                if (ReadRevisionTombstone(root, key, position, counts) is { } removal)
                {
                    removals.Add(removal);
                }
                return;
            case not null when ReadPastTombstoneTypes.Contains(type):
                counts.SkippedOne();
                return;
            default:
                RefuseItem(counts, "Tombstones", position, key,
                    $"its 'Type' {(type is null ? "is not a string" : $"'{type}' is not a tombstone type")}: \"Document\" or \"Revision\" (RavenDB's \"Attachment\" and \"Counter\" are read past).");
                return;
        }
    }

    /// <summary>A document tombstone's id and collection; null when refused (reported) or filtered out (skipped).</summary>
    private (string, string?)? ReadDocumentTombstone(JsonElement root, string? key, long position, SmugglerCounts counts)
    {
        if (key is null)
        {
            RefuseItem(counts, "Tombstones", position, null, "it has no 'Key' (the deleted document's id).");
            return null;
        }
        if (DocumentIds.Validate(key) is { } problem)
        {
            RefuseItem(counts, "Tombstones", position, key, problem);
            return null;
        }
        var collection = root.TryGetProperty("Collection", out var c) && c.ValueKind == JsonValueKind.String ? c.GetString() : null;
        if (collection is "" or "@empty")
        {
            collection = null;
        }
        if (collection is not null && System.Text.Encoding.UTF8.GetByteCount(collection.ToLowerInvariant()) > 255)
        {
            RefuseItem(counts, "Tombstones", position, key, $"its collection '{collection}' is longer than 255 bytes.");
            return null;
        }
        if (_options.Collections.Count > 0 && (collection is null || !_options.IncludesCollection(collection)))
        {
            counts.SkippedOne();
            return null;
        }
        return (key, collection);
    }

    /// <summary>
    /// A revision tombstone's change vector (RavenDB's <c>Key</c>: the removed revision's, alone or,
    /// since RavenDB 6, after the document's lowercased id and the record separator 0x1E; its
    /// <c>ChangeVector</c> is the removal's) and removal time; null when refused or skipped: without
    /// revisions in the import, or outside a collection filter (a tombstone that names no collection
    /// is outside any).
    /// </summary>
    private (string, long)? ReadRevisionTombstone(JsonElement root, string? key, long position, SmugglerCounts counts)
    {
        if (key?.IndexOf('\u001e', StringComparison.Ordinal) is { } separator and >= 0)
        {
            key = key[(separator + 1)..];
        }
        if (string.IsNullOrEmpty(key) || key.Any(ch => ch > 127))
        {
            RefuseItem(counts, "Tombstones", position, key, "it has no 'Key' (ASCII): a revision tombstone is the removed revision's change vector.");
            return null;
        }
        if (key.Length > Tree.MaxKeySize)
        {
            RefuseItem(counts, "Tombstones", position, key[..64] + "...", $"its change vector is {key.Length:N0} characters, more than the {Tree.MaxKeySize:N0} a stored one may have.");
            return null;
        }
        var collection = root.TryGetProperty("Collection", out var c) && c.ValueKind == JsonValueKind.String ? c.GetString() : null;
        if (!_options.Includes(DatabaseItemType.RevisionDocuments)
            || (_options.Collections.Count > 0 && (collection is null or "" or "@empty" || !_options.IncludesCollection(collection))))
        {
            counts.SkippedOne();
            return null;
        }
        var removedAt = root.TryGetProperty("LastModified", out var m) && m.ValueKind == JsonValueKind.String && m.TryGetDateTime(out var time)
            ? time.ToUniversalTime()
            : DateTime.UtcNow;
        return (key, removedAt.Ticks);
    }

    private async ValueTask ApplyDeletionsAsync(List<(string, string?)> deletions)
    {
        if (deletions.Count == 0)
        {
            return;
        }
        await _database.EnqueueAsync(new ApplyDeletionsCommand(deletions.ToList(), _startEtag)).ConfigureAwait(false);
        deletions.Clear();
    }

    private async ValueTask ApplyRevisionTombstonesAsync(List<(string, long)> removals)
    {
        if (removals.Count == 0)
        {
            return;
        }
        await _database.EnqueueAsync(new ApplyRevisionTombstonesCommand(removals.ToList())).ConfigureAwait(false);
        removals.Clear();
    }
}
