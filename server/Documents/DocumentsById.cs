using Jackdaw.Storage.Engine;

namespace Jackdaw.Server.Documents;

/// <summary>
/// Documents in id order (the lowercased UTF-8 storage key: ordinal over code points), straight
/// from the <c>Docs</c> tree of a snapshot: those whose key starts with a prefix, forward or
/// backward, resuming after a key a previous snapshot handed out (a stream reads in several
/// snapshots). Nothing is copied; use it with <c>foreach</c>, which disposes the iterator.
/// </summary>
public readonly ref struct DocumentsById
{
    private readonly Tree? _docs;
    private readonly ReadOnlySpan<byte> _prefix;
    private readonly ReadOnlySpan<byte> _afterKey;
    private readonly bool _descending;

    internal DocumentsById(Tree? docs, ReadOnlySpan<byte> prefix, ReadOnlySpan<byte> afterKey, bool descending)
    {
        _docs = docs;
        _prefix = prefix;
        _afterKey = afterKey;
        _descending = descending;
    }

    public Enumerator GetEnumerator() => new(_docs, _prefix, _afterKey, _descending);

    public ref struct Enumerator
    {
        private readonly TreeIterator? _iterator;
        private readonly ReadOnlySpan<byte> _prefix;
        private readonly ReadOnlySpan<byte> _afterKey;
        private readonly bool _descending;
        private bool _started;
        private DocumentRecord _current;

        internal Enumerator(Tree? docs, ReadOnlySpan<byte> prefix, ReadOnlySpan<byte> afterKey, bool descending)
        {
            _iterator = docs?.Iterate();
            _prefix = prefix;
            _afterKey = afterKey;
            _descending = descending;
        }

        /// <summary>The current document; valid until the next <see cref="MoveNext"/>.</summary>
        public readonly DocumentRecord Current => _current;

        /// <summary>The current document's storage key (its lowercased id); valid until the next <see cref="MoveNext"/>.</summary>
        public readonly ReadOnlySpan<byte> CurrentKey => _iterator!.Key;

        public bool MoveNext()
        {
            if (_iterator is null)
            {
                return false;
            }
            bool positioned;
            if (!_started)
            {
                _started = true;
                positioned = _descending ? SeekLast() : SeekFirst();
            }
            else
            {
                positioned = _descending ? _iterator.MovePrev() : _iterator.MoveNext();
            }
            if (!positioned || !_iterator.Key.StartsWith(_prefix))
            {
                return false;
            }
            _current = new DocumentRecord(_iterator.Value);
            return true;
        }

        private readonly bool SeekFirst()
        {
            if (_afterKey.IsEmpty || _afterKey.SequenceCompareTo(_prefix) < 0)
            {
                return _iterator!.Seek(_prefix);
            }
            return _iterator!.Seek(_afterKey) && (!_iterator.Key.SequenceEqual(_afterKey) || _iterator.MoveNext());
        }

        private readonly bool SeekLast()
        {
            if (!_afterKey.IsEmpty)
            {
                return _iterator!.SeekLastLessOrEqual(_afterKey) && (!_iterator.Key.SequenceEqual(_afterKey) || _iterator.MovePrev());
            }
            if (_prefix.IsEmpty)
            {
                return _iterator!.SeekLast();
            }
            // 0xFF never occurs in UTF-8: the prefix followed by it sorts after every key that starts with the prefix.
            Span<byte> past = stackalloc byte[_prefix.Length + 1];
            _prefix.CopyTo(past);
            past[^1] = 0xFF;
            return _iterator!.SeekLastLessOrEqual(past);
        }

        public readonly void Dispose() => _iterator?.Dispose();
    }
}
