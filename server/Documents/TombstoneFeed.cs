using Jackdaw.Storage.Engine;

namespace Jackdaw.Server.Documents;

/// <summary>
/// Tombstones in etag order after an etag, read straight from a snapshot: over <c>Tombstones</c>
/// (all collections) or one collection's range of <c>TombstonesByCollection</c>, each resolved in
/// <c>Tombstones</c>. Use it with <c>foreach</c>, which disposes the iterator.
/// </summary>
public readonly ref struct TombstoneFeed
{
    private readonly Tree? _tombstones;
    private readonly Tree? _byCollection;
    private readonly ReadOnlySpan<byte> _lowerCollection;
    private readonly long _afterEtag;
    private readonly int _take;

    internal TombstoneFeed(Tree? tombstones, Tree? byCollection, ReadOnlySpan<byte> lowerCollection, long afterEtag, int take)
    {
        _tombstones = tombstones;
        _byCollection = byCollection;
        _lowerCollection = lowerCollection;
        _afterEtag = afterEtag;
        _take = take;
    }

    public Enumerator GetEnumerator() => new(_tombstones, _byCollection, _lowerCollection, _afterEtag, _take);

    public ref struct Enumerator
    {
        private readonly Tree? _tombstones;
        private readonly TreeIterator? _iterator;
        private readonly bool _byCollection;
        private readonly ReadOnlySpan<byte> _lowerCollection;
        private readonly long _afterEtag;
        private int _left;
        private bool _started;
        private TombstoneRecord _current;

        internal Enumerator(Tree? tombstones, Tree? byCollection, ReadOnlySpan<byte> lowerCollection, long afterEtag, int take)
        {
            _tombstones = tombstones;
            _byCollection = byCollection is not null;
            _iterator = take <= 0 || tombstones is null ? null : (byCollection ?? tombstones).Iterate();
            _lowerCollection = lowerCollection;
            _afterEtag = afterEtag;
            _left = take;
        }

        /// <summary>The current tombstone; valid until the next <see cref="MoveNext"/>.</summary>
        public readonly TombstoneRecord Current => _current;

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
                var key = _iterator.Key;
                if (!_byCollection)
                {
                    _current = new TombstoneRecord(StorageKeys.ReadEtag(key), _iterator.Value);
                    _left--;
                    return true;
                }
                if (!StorageKeys.IsCollectionEtagKey(key, _lowerCollection))
                {
                    return false;
                }
                var etagKey = key[(1 + _lowerCollection.Length)..];
                if (_tombstones!.TryGet(etagKey, out var value))
                {
                    _current = new TombstoneRecord(StorageKeys.ReadEtag(etagKey), value);
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
