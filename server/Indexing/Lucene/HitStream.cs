using System.Text;
using Lucene.Net.Index;
using Lucene.Net.Search;
using Lucene.Net.Util;

namespace Jackdaw.Server.Indexing.Lucene;

/// <summary>
/// The hits of a query on one searcher, one at a time, for streams: never all of them in memory.
/// <see cref="Create"/> picks the walk: in index order (<see cref="DocOrderHits"/>: one pass, no
/// memory) when the order does not matter, else ranked by the sort or by relevance
/// (<see cref="RankedHits"/>: pages of at most <see cref="RankedHits.MaxPage"/> hits). Each hit
/// comes with its document's storage key (the lowercased id, from the <c>@id@s</c> doc values) and
/// whether it is another entry of a document already returned (a map that gave a document
/// several entries). Not thread-safe; the searcher must stay acquired while it is used.
/// </summary>
public abstract class HitStream
{
    private readonly IndexSearcher _searcher;
    private readonly IList<AtomicReaderContext> _leaves;
    private readonly BytesRef _scratch = new();
    private int _leafIndex = -1;
    private SortedDocValues? _ids;
    private byte[] _key = [];
    private int _keyOffset;
    private int _keyLength;

    protected HitStream(IndexSearcher searcher)
    {
        _searcher = searcher;
        _leaves = searcher.IndexReader.Leaves;
    }

    /// <summary>A walk in index order when <paramref name="ranked"/> is false and there is no sort; else ranked.</summary>
    public static HitStream Create(IndexSearcher searcher, Query query, Sort? sort, bool ranked) =>
        sort is null && !ranked ? new DocOrderHits(searcher, query) : new RankedHits(searcher, query, sort);

    /// <summary>How many entries match (documents, unless a map gave a document several), known before the first hit.</summary>
    public long TotalHits { get; protected init; }

    /// <summary>The current hit's document number in the searcher.</summary>
    public int Doc { get; private set; }

    /// <summary>True when the current hit is another entry of a document an earlier hit was about.</summary>
    public bool IsRepeat { get; protected set; }

    public abstract bool MoveNext();

    /// <summary>The current hit's document's storage key (its lowercased id, UTF-8); valid until the next move.</summary>
    public ReadOnlySpan<byte> Key => _key.AsSpan(_keyOffset, _keyLength);

    /// <summary>The leaf (segment) a document number lies in, and its <c>@id@s</c> doc values.</summary>
    protected AtomicReaderContext LeafOf(int doc, out SortedDocValues? ids)
    {
        if (_leafIndex < 0 || doc < _leaves[_leafIndex].DocBase || doc >= _leaves[_leafIndex].DocBase + _leaves[_leafIndex].Reader.MaxDoc)
        {
            _leafIndex = ReaderUtil.SubIndex(doc, _leaves);
            _ids = _leaves[_leafIndex].AtomicReader.GetSortedDocValues(LuceneFields.Id + LuceneFields.StringSortSuffix);
        }
        ids = _ids;
        return _leaves[_leafIndex];
    }

    /// <summary>
    /// The storage key of document <paramref name="doc"/> (<paramref name="ord"/> in
    /// <paramref name="ids"/>), in a buffer valid until the next call.
    /// </summary>
    protected BytesRef ReadKey(int doc, SortedDocValues? ids, int ord)
    {
        if (ids is not null && ord >= 0)
        {
            ids.LookupOrd(ord, _scratch);
            return _scratch;
        }
        // A segment without the doc values (none of its entries has an id term): the stored id.
        var id = _searcher.Doc(doc).Get(LuceneFields.DocumentId) ?? "";
        return new BytesRef(Encoding.UTF8.GetBytes(LuceneFields.Lower(id)));
    }

    /// <summary>Makes <paramref name="doc"/> the current hit, its key <paramref name="key"/> (in a buffer the caller keeps until the next move).</summary>
    protected void SetCurrent(int doc, byte[] key, int offset, int length, bool repeat)
    {
        Doc = doc;
        IsRepeat = repeat;
        _key = key;
        _keyOffset = offset;
        _keyLength = length;
    }
}
