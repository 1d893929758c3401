using System.Diagnostics;
using Jackdaw.Server.Documents;
using Jackdaw.Server.Indexing.Lucene;
using Jackdaw.Server.Indexing.Mapping;

namespace Jackdaw.Server.Indexing.Workers;

/// <summary>
/// Maps documents to index entries and writes them (<see cref="IndexFiles.WriteEntries"/>): a
/// collection's documents after its position, in a batch (<see cref="Run"/>), or one document
/// (<see cref="Map"/>: a referrer of a changed document, or a test run). A document that fails to
/// map is an index error (<paramref name="recordError"/>) and loses its entries; indexing goes on.
/// One thread at a time (the index's loop, or the test run).
/// </summary>
internal sealed class MapDocuments(IIndexMapper mapper, IndexFiles files, Func<string, FieldPlan> planOf, Action<string, string, string> recordError)
{
    private byte[] _buffer = new byte[64 * 1024];
    private long _attempts;
    private long _errors;

    /// <summary>Whether the map may load other documents (then a change of a loaded one re-maps its referrers).</summary>
    public bool UsesLoad => mapper.UsesLoad;

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

    /// <summary>
    /// Maps one document and writes its entries in place of its earlier ones; one
    /// <paramref name="firstMet"/> below the add horizon is added (none of its entries can exist).
    /// </summary>
    public void Map(DocumentRecord record, MapOutput output, IMapDocumentLoader? loader, BatchTimer? timer, bool firstMet = false)
    {
        var id = record.Id;
        var lowerId = LuceneFields.Lower(id);
        var length = record.Document.Length;
        if (_buffer.Length < length)
            _buffer = new byte[Math.Max(length, _buffer.Length * 2)];
        record.Document.CopyTo(_buffer);
        var collection = System.Text.Encoding.UTF8.GetString(record.CollectionUtf8);
        output.Clear();
        Interlocked.Increment(ref _attempts);
        DocumentsMapped++;
        if (timer is not null)
            timer.Input++;
        var mapStarted = Stopwatch.GetTimestamp();
        try
        {
            mapper.Map(new MapInput(id, collection, _buffer.AsMemory(0, length)), loader, output);
        }
        catch (IndexMapException e)
        {
            Interlocked.Increment(ref _errors);
            recordError(id, "Map", e.Message);
            if (timer is not null)
                timer.Failed++;
            files.DeleteEntries(lowerId);
            return;
        }
        var writeStarted = Stopwatch.GetTimestamp();
        timer?.AddMap(collection, writeStarted - mapStarted);
        Observer?.Invoke(id, output);
        if (timer is not null)
            timer.Output += output.Entries.Count;
        files.WriteEntries(id, lowerId, output.Entries, planOf, References(output), firstMet);
        timer?.AddWrite(Stopwatch.GetTimestamp() - writeStarted);
    }

    private static List<string>? References(MapOutput output) => output.LoadedIds.Count == 0 ? null : output.LoadedIds;
}
