using System.Text;
using Jackdaw.Server.Databases;
using Jackdaw.Server.Documents;

namespace Jackdaw.Server.Changes;

/// <summary>
/// What an event stream resumed with <c>Last-Event-ID</c> missed, read back from the etag feeds:
/// the documents and tombstones of its filter after that etag and up to the stream's start, in etag
/// order, each document at its latest version (what is still in the database; a document changed
/// since has moved past the start and comes live). Read in chunks, each in a snapshot of its own, so
/// a long replay pins no snapshot.
/// </summary>
public static class ChangesReplay
{
    public const int ChunkSize = 1024;

    /// <summary>
    /// Adds to <paramref name="into"/> the matching changes after <paramref name="afterEtag"/>, in
    /// etag order, up to the etag returned (at most <paramref name="upTo"/>): every change of the
    /// filter in (afterEtag, returned] is there. Call again from the etag returned until it is
    /// <paramref name="upTo"/>.
    /// </summary>
    public static long ReadChunk(DocumentDatabase database, WatchSet filter, long afterEtag, long upTo, List<DocumentChange> into, int take = ChunkSize)
    {
        if (afterEtag >= upTo)
        {
            return upTo;
        }
        var start = into.Count;
        // One collection and nothing else: its own feed; otherwise every change, filtered.
        var collection = !filter.AllDocuments && filter.Documents.IsEmpty && filter.Prefixes.IsEmpty && filter.Collections.Count == 1
            ? filter.Collections.First()
            : null;
        using var reader = database.BeginRead();

        var documentsEnd = upTo;
        var scanned = 0;
        foreach (var record in reader.GetDocumentsFrom(collection, afterEtag, take))
        {
            if (record.Etag > upTo)
            {
                break;
            }
            scanned++;
            if (scanned == take)
            {
                documentsEnd = record.Etag;
            }
            var change = new DocumentChange(record.Etag, record.Id, CollectionOf(record.CollectionUtf8), DocumentChangeKind.Put, ChangeVector: record.ChangeVectorOr(reader.DatabaseId));
            if (filter.Matches(change))
            {
                into.Add(change);
            }
        }

        var tombstonesEnd = upTo;
        scanned = 0;
        foreach (var tombstone in reader.GetTombstonesFrom(collection, afterEtag, take))
        {
            if (tombstone.Etag > upTo)
            {
                break;
            }
            scanned++;
            if (scanned == take)
            {
                tombstonesEnd = tombstone.Etag;
            }
            var change = new DocumentChange(tombstone.Etag, tombstone.Id, tombstone.Collection, DocumentChangeKind.Delete, ChangeVector: tombstone.ChangeVectorOr(reader.DatabaseId));
            if (filter.Matches(change))
            {
                into.Add(change);
            }
        }

        // Each feed is complete up to where it stopped; together, up to the nearer of the two.
        var end = Math.Min(documentsEnd, tombstonesEnd);
        into.RemoveAll(c => c.Etag > end);
        into.Sort(start, into.Count - start, EtagOrder.Instance);
        return end;
    }

    private static string? CollectionOf(ReadOnlySpan<byte> utf8) => utf8.IsEmpty ? null : Encoding.UTF8.GetString(utf8);

    private sealed class EtagOrder : IComparer<DocumentChange>
    {
        public static readonly EtagOrder Instance = new();

        public int Compare(DocumentChange x, DocumentChange y) => x.Etag.CompareTo(y.Etag);
    }
}
