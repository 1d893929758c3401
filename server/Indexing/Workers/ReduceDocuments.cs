using System.Diagnostics;
using System.Text;
using Jackdaw.Server.Documents;
using Jackdaw.Server.Indexing.Lucene;
using Jackdaw.Server.Indexing.MapReduce;
using Jackdaw.Server.Indexing.Mapping;

namespace Jackdaw.Server.Indexing.Workers;

/// <summary>
/// The documents of a map-reduce index: each document's (key, entry) pairs go into the reduce store
/// (<see cref="ReduceTable.UpdateDocument"/>) as the batch maps it; at the end of the batch every
/// key it changed is reduced, and the keys whose results changed are written to Lucene (one entry
/// per result row, by the key's id) and marked pending until the next commit (and for the output
/// collection, until their documents are written).
/// </summary>
internal sealed class ReduceDocuments : DocumentWorker
{
    private readonly IIndexMapper _mapper;
    private readonly IReduceFunctions _functions;
    private readonly ReduceStore _store;
    private readonly Func<string, FieldPlan> _planOf;
    private readonly bool _output;
    private readonly ReduceMapOutput _entries = new();

    public ReduceDocuments(IIndexMapper mapper, IReduceFunctions functions, ReduceStore store, IndexFiles files, Func<string, FieldPlan> planOf, Action<string, string, string> recordError, bool outputToCollection)
        : base(files, recordError)
    {
        _mapper = mapper;
        _functions = functions;
        _store = store;
        _planOf = planOf;
        _output = outputToCollection;
        Table = new ReduceTable(store, functions);
    }

    public ReduceTable Table { get; }

    public override bool UsesLoad => _mapper.UsesLoad;

    public override void Map(DocumentRecord record, MapOutput output, IMapDocumentLoader? loader, BatchTimer? timer, bool firstMet = false)
    {
        var id = record.Id;
        var lowerId = LuceneFields.Lower(id);
        var input = Prepare(record, timer, out var collection);
        _entries.Clear();
        var mapStarted = Stopwatch.GetTimestamp();
        try
        {
            _functions.MapEntries(input, loader, _entries);
        }
        catch (IndexMapException e)
        {
            Failed(id, e, timer);
            Table.DeleteDocument(lowerId);
            return;
        }
        var writeStarted = Stopwatch.GetTimestamp();
        timer?.AddMap(collection, writeStarted - mapStarted);
        if (Observer is not null)
        {
            output.Clear();
            foreach (var (_, entry) in _entries.Entries)
            {
                output.Entries.Add(ReduceResults.ToFields(entry));
            }
            Observer(id, output);
        }
        if (timer is not null)
        {
            timer.Output += _entries.Entries.Count;
        }
        Table.UpdateDocument(lowerId, _entries);
        timer?.AddWrite(Stopwatch.GetTimestamp() - writeStarted);
    }

    public override void Delete(string lowerId) => Table.DeleteDocument(lowerId);

    public override HashSet<string> FindReferrers(IEnumerable<string> ids) => Table.FindReferrers(ids.Select(LuceneFields.Lower));

    /// <summary>Reduces the keys the batch changed and writes the changed results to Lucene.</summary>
    public override void EndBatch(BatchTimer timer)
    {
        var started = Stopwatch.GetTimestamp();
        var pending = _store.Write.CreateTree(ReduceStore.PendingTree);
        var outputPending = _output ? _store.Write.CreateTree(ReduceStore.OutputPendingTree) : null;
        Table.ReduceChanged(
            (key, before, result) =>
            {
                // A key the store did not have has no rows in Lucene either (they agree after every commit and rollback).
                WriteResult(Files, _planOf, key.Id, result, firstMet: before is null && !key.Stored);
                pending.Put(key.Id, []);
                if (outputPending is not null)
                {
                    MarkOutput(outputPending, key.Id, before);
                }
            },
            (key, message) => RecordError(Encoding.UTF8.GetString(key.Key), "Reduce", message));
        timer.AddReduce(Stopwatch.GetTimestamp() - started);
    }

    /// <summary>Whether keys were marked for the output collection since the flag was last cleared.</summary>
    public bool OutputChanged { get; set; }

    // A key's output documents are due: the value is a version (so that writing them forgets only
    // this mark, not a later one) and the most rows the database may hold for it.
    private void MarkOutput(Storage.Engine.Tree outputPending, byte[] keyId, byte[]? before)
    {
        var rows = before is null ? 0 : ReduceResults.Rows(before).Count;
        if (outputPending.TryGet(keyId, out var existing))
        {
            rows = Math.Max(rows, System.Buffers.Binary.BinaryPrimitives.ReadInt32BigEndian(existing[8..]));
        }
        var value = new byte[12];
        System.Buffers.Binary.BinaryPrimitives.WriteInt64BigEndian(value, Interlocked.Increment(ref s_outputVersion));
        System.Buffers.Binary.BinaryPrimitives.WriteInt32BigEndian(value.AsSpan(8), rows);
        outputPending.Put(keyId, value);
        OutputChanged = true;
    }

    // Versions of output marks: they need only differ between the last commit and the open transaction.
    private static long s_outputVersion = DateTime.UtcNow.Ticks;

    /// <summary>Writes a key's results to Lucene (null: removes them).</summary>
    public static void WriteResult(IndexFiles files, Func<string, FieldPlan> planOf, byte[] keyId, byte[]? result, bool firstMet = false)
    {
        var hex = Convert.ToHexStringLower(keyId);
        if (result is null)
        {
            if (!firstMet)
            {
                files.DeleteEntries(hex);
            }
            return;
        }
        var rows = new List<(IndexField[], byte[])>();
        foreach (var row in ReduceResults.Rows(result))
        {
            rows.Add((ReduceResults.ToFields(row), row));
        }
        files.WriteResults(hex, rows, planOf, firstMet);
    }

    /// <summary>
    /// Writes into Lucene the results of the keys the store's last commit has that Lucene may not
    /// (pending; every key when <paramref name="all"/>: Lucene's files were lost), from the store's
    /// last commit. The caller commits Lucene after it.
    /// </summary>
    public static int Recover(ReduceStore store, IndexFiles files, Func<string, FieldPlan> planOf, bool all)
    {
        using var read = store.BeginRead();
        var keys = read.OpenTree(ReduceStore.KeysTree);
        var written = 0;
        if (all)
        {
            if (keys is null)
            {
                return 0;
            }
            using var iterator = keys.Iterate();
            if (iterator.SeekFirst())
            {
                do
                {
                    var key = ReduceKey.Read(iterator.Key.ToArray(), iterator.Value);
                    WriteResult(files, planOf, key.Id, key.Result);
                    written++;
                }
                while (iterator.MoveNext());
            }
            return written;
        }
        foreach (var keyId in store.PendingKeys())
        {
            var result = keys is not null && keys.TryGet(keyId, out var record) ? ReduceKey.Read(keyId, record).Result : null;
            WriteResult(files, planOf, keyId, result);
            written++;
        }
        return written;
    }
}
