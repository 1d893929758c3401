using System.Buffers.Binary;
using Jackdaw.Server.Indexing.Lucene;
using Jackdaw.Server.Indexing.MapReduce;
using Microsoft.Extensions.Logging;
using Jackdaw.Server.Indexing.Workers;

namespace Jackdaw.Server.Indexing;

// A map-reduce index: its reduce store leads, Lucene follows (ReduceStore). At open and after a
// rollback the results the store has and Lucene may not are written again, and the index goes on
// from the store's positions.
public sealed partial class Index
{
    /// <summary>Leaves of big reduce keys reduced since the index opened (0 for a map).</summary>
    public long LeavesReduced => _reduce?.Table.LeavesReduced ?? 0;

    /// <summary>Branches of big reduce keys reduced since the index opened.</summary>
    public long BranchesReduced => _reduce?.Table.BranchesReduced ?? 0;

    /// <summary>Small (packed) reduce keys reduced since the index opened.</summary>
    public long PackedKeysReduced => _reduce?.Table.PackedReduced ?? 0;

    /// <summary>
    /// Opens the reduce store; one whose files are damaged (a crash the engine cannot recover
    /// from) is deleted and the index starts over, as an index whose Lucene files cannot be opened
    /// does (a lost store empties Lucene: <see cref="RecoverReduce"/>).
    /// </summary>
    private static ReduceStore OpenReduceStore(string folder, ILogger logger, string name)
    {
        try
        {
            return ReduceStore.Open(folder);
        }
        catch (Storage.Engine.StorageCorruptedException e)
        {
            logger.LogWarning(e, "Index {Index}: its reduce store in {Folder} cannot be opened; it is rebuilt from the start", name, folder);
            Directory.Delete(folder, recursive: true);
            return ReduceStore.Open(folder);
        }
    }

    /// <summary>
    /// Brings Lucene in line with the reduce store's last commit and returns the store's positions:
    /// the pending keys' results are written again (a crash between the store's commit and
    /// Lucene's); Lucene files that were lost (rebuilt empty) get every key's result; a store that
    /// was lost empties Lucene (the index starts over).
    /// </summary>
    private Dictionary<string, CollectionPosition> RecoverReduce()
    {
        var store = _reduceStore!;
        var lucene = _positions;
        var stored = store.ReadPositions();
        if (stored is null)
        {
            if (lucene.Count > 0)
            {
                _files.DeleteAllEntries();
                _files.Commit(new Dictionary<string, CollectionPosition>());
            }
            return new Dictionary<string, CollectionPosition>();
        }
        _outputDue = Definition.ReduceSpec?.OutputReduceToCollection is not null;
        var all = lucene.Count == 0 && stored.Count > 0;
        var written = ReduceDocuments.Recover(store, _files, _planOf, all);
        if (written > 0 || !SamePositions(lucene, stored))
        {
            if (!_files.InMemory)
            {
                _files.Commit(stored);
            }
            store.LuceneCommitted();
        }
        return stored;
    }

    private static bool SamePositions(Dictionary<string, CollectionPosition> a, Dictionary<string, CollectionPosition> b) =>
        a.Count == b.Count && a.All(p => b.TryGetValue(p.Key, out var other) && other == p.Value);

    // Set when a commit holds keys whose output documents are due (OutputReduceToCollection).
    private volatile bool _outputDue;

    // Set while the index is a replacement: its output waits for the swap and the old index's end.
    private volatile bool _outputHeld;

    // Failures of the output writes in a row, and when the next try may run (a Stopwatch timestamp).
    private int _outputFailures;
    private long _outputRetryAt;

    /// <summary>
    /// A replacement that became the index writes its output documents from now on: called once
    /// the index it replaced is closed, so that no write of the old one comes after the new one's.
    /// </summary>
    public void ReleaseOutput()
    {
        if (!_outputHeld)
        {
            return;
        }
        _outputHeld = false;
        if (Definition.ReduceSpec?.OutputReduceToCollection is not null)
        {
            _outputDue = true;
            Wake();
        }
    }

    /// <summary>
    /// Writes the output documents of the keys the reduce store's last commit marks as due, in
    /// one merged transaction of the database, then forgets those marks (in the store's open
    /// transaction: a crash before its commit writes them again, which changes nothing).
    /// </summary>
    private async Task WriteReduceOutputAsync()
    {
        var spec = Definition.ReduceSpec!;
        var marks = new List<(byte[] KeyId, byte[] Mark, ReduceOutputCommand.KeyOutput Output)>();
        using (var read = _reduceStore!.BeginRead())
        {
            var pending = read.OpenTree(ReduceStore.OutputPendingTree);
            if (pending is null)
            {
                return;
            }
            var keys = read.OpenTree(ReduceStore.KeysTree);
            var references = read.OpenTree(ReduceStore.OutputReferencesTree);
            using var iterator = pending.Iterate();
            if (iterator.SeekFirst())
            {
                do
                {
                    var keyId = iterator.Key.ToArray();
                    var mark = iterator.Value.ToArray();
                    var rows = keys is not null && keys.TryGet(keyId, out var record) && ReduceKey.Read(keyId, record).Result is { } result
                        ? ReduceResults.Rows(result)
                        : new List<byte[]>();
                    var reference = references is not null && references.TryGet(keyId, out var referenceId) ? System.Text.Encoding.UTF8.GetString(referenceId) : null;
                    var output = new ReduceOutputCommand.KeyOutput(BinaryPrimitives.ReadUInt64BigEndian(keyId), rows, BinaryPrimitives.ReadInt32BigEndian(mark.AsSpan(8)), reference);
                    marks.Add((keyId, mark, output));
                }
                while (iterator.MoveNext());
            }
        }
        if (marks.Count == 0)
        {
            return;
        }
        var command = new ReduceOutputCommand(spec.OutputReduceToCollection!, spec.PatternForOutputReduceToCollectionReferences, spec.ReferencesCollection, marks.Select(m => m.Output).ToList());
        await _database.EnqueueAsync(command).ConfigureAwait(false);
        foreach (var id in command.Unreferenced)
        {
            RecordError(id, "Output", $"The reference pattern '{spec.PatternForOutputReduceToCollectionReferences}' names a field the result does not have: no reference document for it.");
        }
        var write = _reduceStore.Write;
        var due = write.CreateTree(ReduceStore.OutputPendingTree);
        var referencesTree = write.CreateTree(ReduceStore.OutputReferencesTree);
        foreach (var (keyId, mark, output) in marks)
        {
            // A later batch may have marked the key again: that mark stays.
            if (due.TryGet(keyId, out var current) && current.SequenceEqual(mark))
            {
                due.Delete(keyId);
            }
            if (output.Reference is null)
            {
                referencesTree.Delete(keyId);
            }
            else
            {
                referencesTree.Put(keyId, System.Text.Encoding.UTF8.GetBytes(output.Reference));
            }
        }
        _dirty = true;
    }
}
