using System.Text;
using Jackdaw.Server.Documents;

namespace Jackdaw.Server.Replication;

/// <summary>
/// Reads the next batch of a database's etag feed for a destination: its documents (each at its
/// latest version) and tombstones after a position, merged in etag order, bounded by a count and
/// a size; tombstones of ids that exist again are left out (the live version supersedes them).
/// Each document carries its attachments (ReplicationFeed.Attachments.cs also reads the revisions and
/// the contents a batch sends); counters and time series are not replicated.
/// </summary>
public static partial class ReplicationFeed
{
    public static ReplicationBatch Read(DocumentsReader reader, long afterEtag, int maxItems, long maxBytes) =>
        Read(reader, afterEtag, maxItems, maxBytes, null, out _);

    /// <summary>
    /// The same, leaving out the documents and tombstones whose change vector <paramref name="leaveOut"/>
    /// accepts (what the destination already holds): their documents are not copied, they count
    /// towards the batch's bounds as a tombstone does, and the batch's last etag still passes them.
    /// </summary>
    public static ReplicationBatch Read(DocumentsReader reader, long afterEtag, int maxItems, long maxBytes, Func<string, bool>? leaveOut, out int leftOut)
    {
        HashSet<long>? left = null;
        var documents = new List<ReplicationItem>();
        long bytes = 0;
        var documentsCut = false;
        foreach (var record in reader.GetDocumentsFrom(null, afterEtag, maxItems))
        {
            var changeVector = record.ChangeVectorOr(reader.DatabaseId);
            if (leaveOut is not null && leaveOut(changeVector))
            {
                (left ??= []).Add(record.Etag);
                documents.Add(new ReplicationItem(record.Etag, false, "", null, changeVector, 0, []));
                bytes += 64;
                if (bytes >= maxBytes)
                {
                    documentsCut = true;
                    break;
                }
                continue;
            }
            var collection = record.CollectionUtf8.IsEmpty ? null : Encoding.UTF8.GetString(record.CollectionUtf8);
            documents.Add(new ReplicationItem(record.Etag, false, record.Id, collection, changeVector, record.LastModifiedTicks, record.Document.ToArray()));
            bytes += record.Document.Length;
            if (bytes >= maxBytes)
            {
                documentsCut = true;
                break;
            }
        }
        documentsCut |= documents.Count == maxItems;

        var tombstones = new List<ReplicationItem>();
        var tombstonesCut = false;
        foreach (var record in reader.GetTombstonesFrom(null, afterEtag, maxItems))
        {
            // A tombstone of an id that exists again is superseded by the live version, which
            // travels itself. Sending it could delete the document everywhere: the tombstone a
            // replicated put leaves when it moves the document to another collection has a change
            // vector of this node's that the document's (as it came) does not cover.
            if (reader.TryGet(record.Id, out _))
            {
                continue;
            }
            var tombstoneChangeVector = record.ChangeVectorOr(reader.DatabaseId);
            if (leaveOut is not null && leaveOut(tombstoneChangeVector))
            {
                (left ??= []).Add(record.Etag);
            }
            tombstones.Add(new ReplicationItem(record.Etag, true, record.Id, record.Collection, tombstoneChangeVector, record.DeletedAtTicks, []));
            bytes += 64 + record.IdUtf8.Length;
            if (bytes >= maxBytes)
            {
                tombstonesCut = true;
                break;
            }
        }
        tombstonesCut |= tombstones.Count == maxItems;

        // Neither list may run past the other's end when the other was cut short: what lies
        // beyond is not read yet.
        var limit = long.MaxValue;
        if (documentsCut && documents.Count > 0)
        {
            limit = documents[^1].Etag;
        }
        if (tombstonesCut && tombstones.Count > 0)
        {
            limit = Math.Min(limit, tombstones[^1].Etag);
        }

        var merged = documents.Concat(tombstones).Where(i => i.Etag <= limit).OrderBy(i => i.Etag).ToList();
        var items = new List<ReplicationItem>();
        long batchBytes = 0;
        foreach (var item in merged)
        {
            if (items.Count >= maxItems || (items.Count > 0 && batchBytes >= maxBytes))
            {
                break;
            }
            items.Add(item);
            batchBytes += item.Document.Length + 64;
        }

        long lastEtag;
        if (items.Count < merged.Count)
        {
            lastEtag = items[^1].Etag;
        }
        else if (limit != long.MaxValue)
        {
            lastEtag = limit;
        }
        else
        {
            lastEtag = Math.Max(afterEtag, reader.LastEtag);
        }
        leftOut = left is null ? 0 : items.RemoveAll(i => left.Contains(i.Etag));
        return new ReplicationBatch(lastEtag, items);
    }
}
