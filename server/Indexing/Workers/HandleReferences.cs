using System.Diagnostics;
using Jackdaw.Server.Documents;
using Jackdaw.Server.Indexing.Lucene;

namespace Jackdaw.Server.Indexing.Workers;

/// <summary>
/// For a map that loads documents: every change (any collection) after the references position
/// re-maps the documents whose entries loaded the changed one (their <c>@ref</c> terms), last in a
/// batch (<see cref="Batch"/>).
/// </summary>
internal sealed class HandleReferences(DocumentWorker map, string[] lowerCollections)
{
    /// <summary>The position of the references pass, beside the collections' (no collection is named "@references").</summary>
    public const string Position = "@references";

    /// <summary>Reads the changes after the references position until the batch is full, re-maps their referrers and moves the position on.</summary>
    public void Run(Batch batch, DocumentsReader reader)
    {
        var position = batch.Positions.GetValueOrDefault(Position);
        var changed = new List<(string Id, long Etag, bool Tombstone)>();
        foreach (var record in reader.GetDocumentsFrom(null, position.Documents))
        {
            if (batch.Count + changed.Count >= Batch.MaxCount || Stopwatch.GetElapsedTime(batch.Started) > Batch.MaxTime)
            {
                batch.Full = true;
                break;
            }
            changed.Add((record.Id, record.Etag, false));
        }
        if (!batch.Full)
        {
            foreach (var tombstone in reader.GetTombstonesFrom(null, position.Tombstones))
            {
                if (batch.Count + changed.Count >= Batch.MaxCount || Stopwatch.GetElapsedTime(batch.Started) > Batch.MaxTime)
                {
                    batch.Full = true;
                    break;
                }
                changed.Add((tombstone.Id, tombstone.Etag, true));
            }
        }
        if (changed.Count == 0)
        {
            return;
        }
        // The searcher is refreshed first, so entries written earlier in this batch are seen.
        var referrers = map.FindReferrers(changed.Select(c => c.Id));
        foreach (var referrer in referrers)
        {
            if (reader.TryGet(referrer, out var record)
                && Array.IndexOf(lowerCollections, System.Text.Encoding.UTF8.GetString(record.CollectionUtf8).ToLowerInvariant()) >= 0)
            {
                map.Map(record, batch.Output, batch.Loader, batch.Timer);
                batch.Count++;
            }
        }
        foreach (var (_, etag, tombstone) in changed)
        {
            position = tombstone ? position with { Tombstones = etag } : position with { Documents = etag };
        }
        batch.Count += changed.Count;
        batch.Positions[Position] = position;
    }
}
