using Jackdaw.Storage.Engine;

namespace Jackdaw.Server.Documents;

/// <summary>
/// Every document, newest change first (descending etag), straight from <c>DocsByEtag</c> of a
/// snapshot, each entry resolved in <c>Docs</c>: those with an etag below a given one, so that a
/// reader of several snapshots resumes where it stopped. Use it with <c>foreach</c>.
/// </summary>
public readonly ref struct DocumentsNewestFirst
{
    private readonly DocumentsReader _reader;
    private readonly Tree? _byEtag;
    private readonly long _beforeEtag;

    internal DocumentsNewestFirst(DocumentsReader reader, Tree? byEtag, long beforeEtag)
    {
        _reader = reader;
        _byEtag = byEtag;
        _beforeEtag = beforeEtag;
    }

    public Enumerator GetEnumerator() => new(_reader, _byEtag, _beforeEtag);

    public ref struct Enumerator
    {
        private readonly DocumentsReader _reader;
        private readonly TreeIterator? _iterator;
        private readonly long _beforeEtag;
        private bool _started;
        private DocumentRecord _current;

        internal Enumerator(DocumentsReader reader, Tree? byEtag, long beforeEtag)
        {
            _reader = reader;
            _iterator = beforeEtag > 1 ? byEtag?.Iterate() : null;
            _beforeEtag = beforeEtag;
        }

        /// <summary>The current document; valid until the next <see cref="MoveNext"/>.</summary>
        public readonly DocumentRecord Current => _current;

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
                Span<byte> last = stackalloc byte[StorageKeys.EtagSize];
                StorageKeys.WriteEtag(last, _beforeEtag - 1);
                positioned = _iterator.SeekLastLessOrEqual(last);
            }
            else
            {
                positioned = _iterator.MovePrev();
            }
            while (positioned)
            {
                if (_reader.TryGetByKey(_iterator.Value, out _current))
                {
                    return true;
                }
                positioned = _iterator.MovePrev();
            }
            return false;
        }

        public readonly void Dispose() => _iterator?.Dispose();
    }
}
