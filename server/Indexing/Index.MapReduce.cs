using Jackdaw.Server.Indexing.Lucene;
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
        var all = lucene.Count == 0 && stored.Count > 0;
        var written = ReduceDocuments.Recover(store, _files, _planOf, all);
        if (written > 0 || !SamePositions(lucene, stored))
        {
            if (!_files.InMemory)
                _files.Commit(stored);
            store.LuceneCommitted();
        }
        return stored;
    }

    private static bool SamePositions(Dictionary<string, CollectionPosition> a, Dictionary<string, CollectionPosition> b) =>
        a.Count == b.Count && a.All(p => b.TryGetValue(p.Key, out var other) && other == p.Value);
}
