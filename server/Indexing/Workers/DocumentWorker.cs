using System.Diagnostics;
using Jackdaw.Server.Documents;
using Jackdaw.Server.Indexing.Lucene;
using Jackdaw.Server.Indexing.Mapping;

namespace Jackdaw.Server.Indexing.Workers;

/// <summary>
/// What a batch does with documents (<see cref="Batch"/>): maps a collection's documents after its
/// position (<see cref="Run"/>) or one document (<see cref="Map"/>: a referrer of a changed
/// document, or a test run), removes a deleted document's entries (<see cref="Delete"/>), and at the
/// end of the batch finishes what it started (<see cref="EndBatch"/>). A map index writes entries
/// as it maps (<see cref="MapDocuments"/>); a map-reduce index stores them and reduces the keys they
/// changed at the end of the batch (<see cref="ReduceDocuments"/>). A document that fails to map is
/// an index error (recorded) and loses its entries; indexing goes on. One thread at a time (the
/// index's loop, or the test run).
/// </summary>
internal abstract class DocumentWorker(IndexFiles files, Action<string, string, string> recordError)
{
    private byte[] _buffer = new byte[64 * 1024];
    private long _attempts;
    private long _errors;

    protected IndexFiles Files => files;

    /// <summary>Whether the map may load other documents (then a change of a loaded one re-maps its referrers).</summary>
    public abstract bool UsesLoad { get; }

    /// <summary>Documents the map was given since the index was opened.</summary>
    public long Attempts => Interlocked.Read(ref _attempts);

    /// <summary>Documents that failed to map since the index was opened.</summary>
    public long Errors => Interlocked.Read(ref _errors);

    /// <summary>Documents mapped since the index was opened.</summary>
    public long DocumentsMapped { get; private set; }

    /// <summary>Called with each document's map output (a test run keeps the first ones).</summary>
    public Action<string, MapOutput>? Observer { get; set; }

    /// <summary>Maps the documents of <paramref name="collection"/> after <paramref name="position"/> until the batch is full, moving the position on.</summary>
    public void Run(Batch batch, DocumentsReader reader, string collection, ref CollectionPosition position)
    {
        foreach (var record in reader.GetDocumentsFrom(collection, position.Documents))
        {
            if (batch.Count >= Batch.MaxCount || batch.Bytes >= Batch.MaxBytes || Stopwatch.GetElapsedTime(batch.Started) > batch.Time)
            {
                batch.Full = true;
                break;
            }
            Map(record, batch.Output, batch.Loader, batch.Timer, firstMet: record.Etag <= files.AddHorizon);
            position = position with { Documents = record.Etag };
            batch.Count++;
            batch.Bytes += record.Document.Length;
            batch.Timer.DocumentsSize += record.Document.Length;
        }
    }

    /// <summary>Maps one document and puts its entries in place of its earlier ones.</summary>
    public abstract void Map(DocumentRecord record, MapOutput output, IMapDocumentLoader? loader, BatchTimer? timer, bool firstMet = false);

    /// <summary>Removes the entries of the document whose lowercased id is <paramref name="lowerId"/>.</summary>
    public abstract void Delete(string lowerId);

    /// <summary>The ids of the documents whose maps loaded one of <paramref name="ids"/>.</summary>
    public abstract HashSet<string> FindReferrers(IEnumerable<string> ids);

    /// <summary>Called once the batch has read everything it reads (a map-reduce reduces there).</summary>
    public virtual void EndBatch(BatchTimer timer)
    {
    }

    /// <summary>Copies the document for the map (its bytes must outlive the reader's position) and counts the attempt.</summary>
    protected MapInput Prepare(DocumentRecord record, BatchTimer? timer, out string collection)
    {
        var length = record.Document.Length;
        if (_buffer.Length < length)
        {
            _buffer = new byte[Math.Max(length, _buffer.Length * 2)];
        }
        record.Document.CopyTo(_buffer);
        collection = System.Text.Encoding.UTF8.GetString(record.CollectionUtf8);
        Interlocked.Increment(ref _attempts);
        DocumentsMapped++;
        if (timer is not null)
        {
            timer.Input++;
        }
        return new MapInput(record.Id, collection, _buffer.AsMemory(0, length));
    }

    /// <summary>Records a document that failed to map.</summary>
    protected void Failed(string id, IndexMapException e, BatchTimer? timer)
    {
        Interlocked.Increment(ref _errors);
        recordError(id, "Map", e.Message);
        if (timer is not null)
        {
            timer.Failed++;
        }
    }

    protected void RecordError(string document, string action, string message) => recordError(document, action, message);
}
