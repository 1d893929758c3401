using System.Diagnostics;
using Jackdaw.Server.Documents;
using Jackdaw.Server.Indexing.Lucene;

namespace Jackdaw.Server.Indexing.Workers;

/// <summary>
/// Deletes the entries of the documents a collection's tombstones name, in a batch, after the
/// collection's documents (<see cref="Batch"/>).
/// </summary>
internal sealed class CleanupDeletedDocuments(DocumentWorker worker, string[] lowerCollections)
{
    /// <summary>Reads the tombstones of <paramref name="collection"/> after <paramref name="position"/> until the batch is full, moving the position on.</summary>
    public void Run(Batch batch, DocumentsReader reader, string collection, ref CollectionPosition position)
    {
        foreach (var tombstone in reader.GetTombstonesFrom(collection, position.Tombstones))
        {
            if (batch.Count >= Batch.MaxCount || Stopwatch.GetElapsedTime(batch.Started) > Batch.MaxTime)
            {
                batch.Full = true;
                break;
            }
            // A document deleted and written again keeps its tombstone: its entries
            // stay (its newer version is, or will be, indexed from the documents feed),
            // also when it moved to another collection this index maps (deleting then
            // would remove the entry that collection's feed wrote earlier in the batch).
            var id = tombstone.Id;
            if (!(reader.TryGet(id, out var current) && Array.IndexOf(lowerCollections, LuceneFields.Lower(System.Text.Encoding.UTF8.GetString(current.CollectionUtf8))) >= 0))
            {
                var deleteStarted = Stopwatch.GetTimestamp();
                worker.Delete(LuceneFields.Lower(id));
                batch.Timer.AddDelete(Stopwatch.GetTimestamp() - deleteStarted);
            }
            position = position with { Tombstones = tombstone.Etag };
            batch.Count++;
            batch.Timer.Input++;
        }
    }
}
