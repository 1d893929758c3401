using System.Text;
using Lucene.Net.Index;
using Lucene.Net.Search;

namespace Jackdaw.Server.Indexing.Lucene;

/// <summary>
/// Hits in the order of a sort (or by relevance), a page at a time: each page is a search after
/// the previous page's last hit (Lucene's <c>SearchAfter</c>, ties broken by document number),
/// pages growing from <see cref="FirstPage"/> to <see cref="MaxPage"/> hits. Memory stays within
/// one page; time is one pass over the matches per page. A page's ids are read from the doc
/// values in document order (the packed ords and id blocks are then read forward, not at random:
/// a sorted stream of a million read them with a <c>pread</c> per hit before), then handed out in
/// rank order. A document with several entries (found by its neighbours' ids: one document's
/// entries are adjacent) is remembered so that only its first-ranked entry is a result.
/// </summary>
public sealed class RankedHits : HitStream
{
    public const int FirstPage = 1024;

    /// <summary>The largest page: a few MB of sort values at most, and 1M hits in ~20 passes.</summary>
    public const int MaxPage = 64 * 1024;

    private readonly IndexSearcher _searcher;
    private readonly Query _query;
    private readonly Sort? _sort;
    private HashSet<string>? _severalEntries;
    private TopDocs _page;
    private int _next;
    private int _pageSize = FirstPage;
    private long _read;

    // The current page's keys, in rank order: _keys[_keyStarts[i].._keyStarts[i + 1]]; _several[i]
    // when the document of hit i has other entries.
    private byte[] _keys = new byte[64 * 1024];
    private int[] _keyStarts = new int[FirstPage + 1];
    private bool[] _several = new bool[FirstPage];
    private int[] _byDoc = new int[FirstPage];
    private int[] _docs = new int[FirstPage];

    public RankedHits(IndexSearcher searcher, Query query, Sort? sort)
        : base(searcher)
    {
        _searcher = searcher;
        _query = query;
        _sort = sort;
        _page = Search(null);
        TotalHits = _page.TotalHits;
        ReadKeys();
    }

    public override bool MoveNext()
    {
        if (_next == _page.ScoreDocs.Length)
        {
            if (_page.ScoreDocs.Length < _pageSize || _read >= _page.TotalHits)
            {
                return false;
            }
            var last = _page.ScoreDocs[^1];
            _pageSize = Math.Min(_pageSize * 2, MaxPage);
            _page = Search(last);
            _next = 0;
            if (_page.ScoreDocs.Length == 0)
            {
                return false;
            }
            ReadKeys();
        }
        var i = _next++;
        _read++;
        var start = _keyStarts[i];
        var length = _keyStarts[i + 1] - start;
        var repeat = false;
        if (_several[i])
        {
            // Only documents with several entries are remembered, not every result.
            _severalEntries ??= new HashSet<string>(StringComparer.Ordinal);
            repeat = !_severalEntries.Add(Encoding.UTF8.GetString(_keys, start, length));
        }
        SetCurrent(_page.ScoreDocs[i].Doc, _keys, start, length, repeat);
        return true;
    }

    private TopDocs Search(ScoreDoc? after) =>
        _sort is null ? _searcher.SearchAfter(after, _query, _pageSize) : _searcher.SearchAfter(after, _query, _pageSize, _sort);

    /// <summary>Reads the page's keys in document order into the page buffers, indexed by rank.</summary>
    private void ReadKeys()
    {
        var hits = _page.ScoreDocs;
        var count = hits.Length;
        if (_docs.Length < count)
        {
            _docs = new int[count];
            _byDoc = new int[count];
            _several = new bool[count];
            _keyStarts = new int[count + 1];
        }
        for (var i = 0; i < count; i++)
        {
            _docs[i] = hits[i].Doc;
            _byDoc[i] = i;
        }
        Array.Sort(_docs, _byDoc, 0, count);

        // First pass in document order: each key into a scratch area after the ranked ones.
        var lengths = new int[count];
        var positions = new int[count];
        var used = 0;
        for (var j = 0; j < count; j++)
        {
            var doc = _docs[j];
            var rank = _byDoc[j];
            var leaf = LeafOf(doc, out var ids);
            var local = doc - leaf.DocBase;
            var ord = ids?.GetOrd(local) ?? -1;
            var key = ReadKey(doc, ids, ord);
            if (used + key.Length > _keys.Length)
            {
                Array.Resize(ref _keys, Math.Max(_keys.Length * 2, used + key.Length));
            }
            Buffer.BlockCopy(key.Bytes, key.Offset, _keys, used, key.Length);
            positions[rank] = used;
            lengths[rank] = key.Length;
            used += key.Length;
            _several[rank] = ord >= 0 && HasSeveralEntries(leaf, ids!, local, ord);
        }

        // Then laid out by rank, so that a hit's key is one slice.
        var ranked = new byte[used];
        var offset = 0;
        for (var i = 0; i < count; i++)
        {
            _keyStarts[i] = offset;
            Buffer.BlockCopy(_keys, positions[i], ranked, offset, lengths[i]);
            offset += lengths[i];
        }
        _keyStarts[count] = offset;
        _keys = ranked;
    }

    private static bool HasSeveralEntries(AtomicReaderContext leaf, SortedDocValues ids, int doc, int ord) =>
        (doc > 0 && ids.GetOrd(doc - 1) == ord) || (doc + 1 < leaf.Reader.MaxDoc && ids.GetOrd(doc + 1) == ord);
}
