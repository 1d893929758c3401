using Lucene.Net.Index;
using Lucene.Net.Search;

namespace Jackdaw.Server.Indexing.Lucene;

/// <summary>
/// Hits in index order: the query's scorer walked segment by segment over live documents, one
/// pass, nothing collected. The entries a map gave one document are added as one block, so they
/// are adjacent: a repeat is a hit with the previous hit's id.
/// </summary>
public sealed class DocOrderHits : HitStream
{
    private readonly Weight _weight;
    private readonly IList<AtomicReaderContext> _leaves;
    private int _leaf = -1;
    private Scorer? _scorer;
    private SortedDocValues? _ids;
    private int _previousOrd = -1;

    public DocOrderHits(IndexSearcher searcher, Query query)
        : base(searcher)
    {
        _leaves = searcher.IndexReader.Leaves;
        _weight = searcher.CreateNormalizedWeight(query);
        var count = new TotalHitCountCollector();
        searcher.Search(query, count);
        TotalHits = count.TotalHits;
    }

    public override bool MoveNext()
    {
        while (true)
        {
            if (_scorer is null)
            {
                if (++_leaf >= _leaves.Count)
                {
                    return false;
                }
                var leaf = _leaves[_leaf];
                _scorer = _weight.GetScorer(leaf, leaf.AtomicReader.LiveDocs);
                _ids = leaf.AtomicReader.GetSortedDocValues(LuceneFields.Id + LuceneFields.StringSortSuffix);
                _previousOrd = -1;
                continue;
            }
            var doc = _scorer.NextDoc();
            if (doc == DocIdSetIterator.NO_MORE_DOCS)
            {
                _scorer = null;
                continue;
            }
            var ord = _ids?.GetOrd(doc) ?? -1;
            var global = _leaves[_leaf].DocBase + doc;
            var key = ReadKey(global, _ids, ord);
            SetCurrent(global, key.Bytes, key.Offset, key.Length, ord >= 0 && ord == _previousOrd);
            _previousOrd = ord;
            return true;
        }
    }
}
