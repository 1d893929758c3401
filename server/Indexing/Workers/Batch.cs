using System.Diagnostics;
using Jackdaw.Server.Documents;
using Jackdaw.Server.Indexing.Lucene;
using Jackdaw.Server.Indexing.Mapping;

namespace Jackdaw.Server.Indexing.Workers;

/// <summary>
/// One batch of an index's work, read from one snapshot of the database: for each collection the
/// index maps, in turn, the documents after its position (<see cref="MapDocuments"/>) and then the
/// tombstones after its position (<see cref="CleanupDeletedDocuments"/>); then, for a map that
/// loads documents, the changes of every collection after the references position
/// (<see cref="HandleReferences"/>). The batch is full, and stops, at <see cref="MaxCount"/> items,
/// <see cref="MaxBytes"/> of documents or its time; the positions it reached go to the index's
/// next commit, and the next batch goes on from them.
/// </summary>
internal sealed class Batch
{
    /// <summary>The most items (documents, tombstones, changes) one batch reads.</summary>
    public const int MaxCount = 64 * 1024;

    /// <summary>The most document bytes one batch reads.</summary>
    public const long MaxBytes = 128L * 1024 * 1024;

    /// <summary>The time of a batch at normal priority; the tombstones and references passes take it as their limit.</summary>
    public static readonly TimeSpan MaxTime = TimeSpan.FromSeconds(2);

    public Batch(Dictionary<string, CollectionPosition> positions, TimeSpan time, BatchTimer timer)
    {
        Positions = positions;
        Time = time;
        Timer = timer;
    }

    /// <summary>The positions per collection (lowercased, and <see cref="HandleReferences.Position"/>), moved on as items are read.</summary>
    public Dictionary<string, CollectionPosition> Positions { get; }

    /// <summary>The time the documents of this batch may take (the index's priority, or a yielding replacement's share).</summary>
    public TimeSpan Time { get; }

    public BatchTimer Timer { get; }

    public long Started { get; } = Stopwatch.GetTimestamp();

    /// <summary>The map output, reused from one document to the next.</summary>
    public MapOutput Output { get; } = new();

    /// <summary>
    /// The snapshot's documents and attachments, for a map's <c>load(id)</c> and
    /// <c>attachmentsFor</c>/<c>loadAttachment</c>. Given to every map (one small object per batch): a
    /// map that does not load documents is not given them by <c>load</c> anyway (see <c>MapScope</c>).
    /// </summary>
    public IMapDocumentLoader? Loader { get; private set; }

    /// <summary>The last etag of the batch's snapshot.</summary>
    public long SnapshotEtag { get; private set; }

    /// <summary>The items read so far.</summary>
    public int Count { get; set; }

    /// <summary>The document bytes read so far.</summary>
    public long Bytes { get; set; }

    /// <summary>Whether a limit stopped the batch (there is more to do at once).</summary>
    public bool Full { get; set; }

    /// <summary>
    /// Reads and indexes from <paramref name="reader"/>'s snapshot until the batch is full or
    /// nothing is left. <paramref name="references"/> is the references pass of a map that loads
    /// documents, null for one that does not.
    /// </summary>
    public void Run(DocumentsReader reader, string[] lowerCollections, IndexFiles files, DocumentWorker map, CleanupDeletedDocuments cleanup, HandleReferences? references)
    {
        SnapshotEtag = reader.LastEtag;
        if (files.AddHorizon == -1)
        {
            files.AddHorizon = SnapshotEtag;
        }
        Loader = new SnapshotLoader(reader);
        foreach (var collection in lowerCollections)
        {
            var position = Positions.GetValueOrDefault(collection);
            map.Run(this, reader, collection, ref position);
            if (!Full)
            {
                cleanup.Run(this, reader, collection, ref position);
            }
            Positions[collection] = position;
            if (Full)
            {
                break;
            }
        }
        if (!Full && references is not null)
        {
            var referencesStarted = Stopwatch.GetTimestamp();
            references.Run(this, reader);
            Timer.AddReferences(Stopwatch.GetTimestamp() - referencesStarted);
        }
    }
}
