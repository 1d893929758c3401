using Lucene.Net.Index;
using Lucene.Net.Search;

namespace Jackdaw.Server.Indexing;

/// <summary>
/// Hits in the order of a sort (or by relevance), a page at a time: each page is a search after
/// the previous page's last hit (Lucene's <c>SearchAfter</c>, ties broken by document number),
/// pages growing from <see cref="FirstPage"/> to <see cref="MaxPage"/> hits. Memory stays within
/// one page; time is one pass over the matches per page. A document with several entries (found
/// by its neighbours' ids: one document's entries are adjacent) is remembered so that only its
/// first-ranked entry is a result.
/// </summary>
public sealed class RankedHits : HitStream
{
    public const int FirstPage = 1024;

    /// <summary>The largest page: ~5 MB of sort values at most, and 1M hits in ~20 passes.</summary>
    public const int MaxPage = 64 * 1024;

    private readonly IndexSearcher _searcher;
    private readonly Query _query;
    private readonly Sort? _sort;
    private HashSet<string>? _severalEntries;
    private TopDocs _page;
    private int _next;
    private int _pageSize = FirstPage;
    private long _read;

    public RankedHits(IndexSearcher searcher, Query query, Sort? sort)
        : base(searcher)
    {
        _searcher = searcher;
        _query = query;
        _sort = sort;
        _page = Search(null);
        TotalHits = _page.TotalHits;
    }

    public override bool MoveNext()
    {
        if (_next == _page.ScoreDocs.Length)
        {
            if (_page.ScoreDocs.Length < _pageSize || _read >= _page.TotalHits)
                return false;
            var last = _page.ScoreDocs[^1];
            _pageSize = Math.Min(_pageSize * 2, MaxPage);
            _page = Search(last);
            _next = 0;
            if (_page.ScoreDocs.Length == 0)
                return false;
        }
        var doc = _page.ScoreDocs[_next++].Doc;
        _read++;
        var leaf = LeafOf(doc, out var ids);
        var ord = ids?.GetOrd(doc - leaf.DocBase) ?? -1;
        SetCurrent(doc, ids, ord, false);
        if (ord >= 0 && HasSeveralEntries(leaf, ids!, doc - leaf.DocBase, ord))
        {
            // Only documents with several entries are remembered, not every result.
            _severalEntries ??= new HashSet<string>(StringComparer.Ordinal);
            IsRepeat = !_severalEntries.Add(System.Text.Encoding.UTF8.GetString(Key));
        }
        return true;
    }

    private TopDocs Search(ScoreDoc? after) =>
        _sort is null ? _searcher.SearchAfter(after, _query, _pageSize) : _searcher.SearchAfter(after, _query, _pageSize, _sort);

    private static bool HasSeveralEntries(AtomicReaderContext leaf, SortedDocValues ids, int doc, int ord) =>
        (doc > 0 && ids.GetOrd(doc - 1) == ord) || (doc + 1 < leaf.Reader.MaxDoc && ids.GetOrd(doc + 1) == ord);
}
