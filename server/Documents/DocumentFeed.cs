using Jackdaw.Storage.Engine;

namespace Jackdaw.Server.Documents;

/// <summary>
/// Documents in etag order after an etag, read straight from a snapshot: over <c>DocsByEtag</c>
/// (all collections) or one collection's range of <c>Collections</c>, each entry resolved in
/// <c>Docs</c>. Nothing is copied into lists; use it with <c>foreach</c>, which disposes the iterator.
/// </summary>
public readonly ref struct DocumentFeed
{
    private readonly DocumentsReader? _reader;
    private readonly Tree? _index;
    private readonly ReadOnlySpan<byte> _lowerCollection;
    private readonly long _afterEtag;
    private readonly int _take;
    private readonly bool _byCollection;

    internal DocumentFeed(DocumentsReader reader, Tree? index, ReadOnlySpan<byte> lowerCollection, long afterEtag, int take, bool byCollection = false)
    {
        _reader = reader;
        _index = index;
        _lowerCollection = lowerCollection;
        _afterEtag = afterEtag;
        _take = take;
        _byCollection = byCollection;
    }

    public Enumerator GetEnumerator() => new(_reader, _index, _lowerCollection, _afterEtag, _take, _byCollection);

    public ref struct Enumerator
    {
        private readonly DocumentsReader? _reader;
        private readonly TreeIterator? _iterator;
        private readonly ReadOnlySpan<byte> _lowerCollection;
        private readonly long _afterEtag;
        private readonly bool _byCollection;
        private int _left;
        private bool _started;
        private DocumentRecord _current;

        internal Enumerator(DocumentsReader? reader, Tree? index, ReadOnlySpan<byte> lowerCollection, long afterEtag, int take, bool byCollection)
        {
            _reader = reader;
            _iterator = take > 0 ? index?.Iterate() : null;
            _lowerCollection = lowerCollection;
            _afterEtag = afterEtag;
            _byCollection = byCollection;
            _left = take;
        }

        /// <summary>The current document; valid until the next <see cref="MoveNext"/>.</summary>
        public readonly DocumentRecord Current => _current;

        public bool MoveNext()
        {
            if (_iterator is null || _left <= 0)
            {
                return false;
            }
            bool positioned;
            if (!_started)
            {
                _started = true;
                positioned = StorageKeys.SeekAfter(_iterator, _lowerCollection, _afterEtag, _byCollection);
            }
            else
            {
                positioned = _iterator.MoveNext();
            }

            while (positioned)
            {
                if (_byCollection && !StorageKeys.IsCollectionEtagKey(_iterator.Key, _lowerCollection))
                {
                    return false;
                }
                // Every index entry points at a live document; a miss would be a broken invariant.
                if (_reader!.TryGetByKey(_iterator.Value, out _current))
                {
                    _left--;
                    return true;
                }
                positioned = _iterator.MoveNext();
            }
            return false;
        }

        public readonly void Dispose() => _iterator?.Dispose();
    }
}
