using System.Buffers;

namespace Jackdaw.Storage.Blittable;

/// <summary>
/// Owns the pooled buffers documents are built in. Documents built by a context stay valid until
/// <see cref="Reset"/> (end of request) or <see cref="Dispose"/>, which return the buffers in bulk.
/// Not thread-safe: one context per request. One streaming build at a time.
/// </summary>
public sealed class JsonOperationContext : IDisposable
{
    internal const int ChunkSize = 64 * 1024;

    /// <summary>Chunks kept across <see cref="Reset"/> for reuse: a context that fills many chunks per
    /// batch (bulk insert) would otherwise hand them to the shared pool and get fresh ones back.
    /// A reset keeps the chunks its request went through and half (rounded up) of the spares it
    /// did not need: after one large batch the spares halve with each smaller request, so they
    /// are not pinned in a pooled context for good, and requests of varying size do not churn
    /// the shared pool.</summary>
    private const int MaxSpareChunks = 64;

    /// <summary>Capacity of the retired-chunk list kept across <see cref="Reset"/> (16 MB of documents).</summary>
    private const int MaxRetiredCapacity = 256;

    private readonly List<byte[]> _retired = new();
    private readonly Stack<byte[]> _spare = new();
    private byte[] _current;
    private int _used;
    private BlittableBuilder? _builder;
    private bool _disposed;

    public JsonOperationContext()
    {
        _current = ArrayPool<byte>.Shared.Rent(ChunkSize);
    }

    /// <summary>Bytes handed out to documents since the last reset (for diagnostics and tests).</summary>
    public long AllocatedBytes { get; private set; }

    /// <summary>
    /// Parses a whole JSON text (one object) into a document. Rules for every parse entry point:
    /// the top-level value must be an object (NotAnObject); a repeated property name in one object
    /// is an error, not "last wins" (DuplicateProperty, at the second occurrence); nesting is limited
    /// to <c>256</c> levels counting the root (TooDeep); strings must be valid UTF-8, escaped lone
    /// surrogates included (InvalidUtf8); only whitespace may follow the root (TrailingData); input
    /// that stops early is Truncated; in Disk mode numbers must be finite doubles (NumberOutOfRange).
    /// Each error is a <see cref="BlittableParseException"/> with the byte position in the input.
    /// </summary>
    public BlittableDocument Parse(ReadOnlySpan<byte> utf8Json, BlittableMode mode)
    {
        var builder = RentBuilder(mode);
        return builder.ParseWhole(utf8Json);
    }

    /// <summary>
    /// Parses the JSON object at the start of <paramref name="utf8Json"/>, a value embedded in a
    /// larger text (a document inside a batch envelope): <paramref name="consumed"/> is its length
    /// and what follows is not looked at. The rules of <see cref="Parse(ReadOnlySpan{byte}, BlittableMode)"/>
    /// apply to the object itself. Only the object is checked for valid UTF-8 (what follows it is
    /// the caller's, so a batch of n documents is not checked n times over); when the object is
    /// rejected for any reason, invalid UTF-8 anywhere in the span is reported first.
    /// </summary>
    public BlittableDocument ParseObjectPrefix(ReadOnlySpan<byte> utf8Json, BlittableMode mode, out int consumed)
    {
        var builder = RentBuilder(mode);
        return builder.ParseObjectPrefix(utf8Json, out consumed);
    }

    /// <summary>Parses a whole JSON text held in a sequence (e.g. a completed request body).</summary>
    public BlittableDocument Parse(ReadOnlySequence<byte> utf8Json, BlittableMode mode)
    {
        if (utf8Json.IsSingleSegment)
        {
            return Parse(utf8Json.FirstSpan, mode);
        }

        var builder = RentBuilder(mode);
        builder.Feed(utf8Json, isFinalBlock: true);
        return builder.Complete();
    }

    /// <summary>
    /// Starts a streaming parse: call <see cref="BlittableBuilder.Feed"/> with each chunk of input
    /// (keeping the unconsumed tail), then <see cref="BlittableBuilder.Complete"/>.
    /// </summary>
    public BlittableBuilder StartParse(BlittableMode mode) => RentBuilder(mode);

    /// <summary>Builds a new document from <paramref name="blittable"/> with the changes in <paramref name="patch"/>.</summary>
    public BlittableDocument Modify(ReadOnlySpan<byte> blittable, BlittablePatch patch, BlittableMode mode) =>
        Modify(blittable, patch, mode, allowBlockCopies: true);

    /// <param name="allowBlockCopies">False copies value by value (tests compare both ways).</param>
    internal BlittableDocument Modify(ReadOnlySpan<byte> blittable, BlittablePatch patch, BlittableMode mode, bool allowBlockCopies)
    {
        ArgumentNullException.ThrowIfNull(patch);
        var root = BlittableReader.Open(blittable);
        var builder = RentBuilder(mode);
        try
        {
            // Same mode on both sides: unchanged values keep their encoding, so they can be copied
            // whole once the names area matches the source's.
            var raw = false;
            if (allowBlockCopies && BlittableReader.IsDiskMode(blittable) == (mode == BlittableMode.Disk))
            {
                raw = builder.TrySeedNames(blittable);
                if (!raw)
                {
                    builder.Start(mode);
                }
            }

            BlittableModifier.Apply(builder, root, patch, raw);
            return builder.CompleteBuilt();
        }
        catch
        {
            builder.Abandon();
            throw;
        }
    }

    /// <summary>
    /// Returns every buffer to the pool; documents built before become invalid. What a large
    /// request grew (chunks, the builder's working arrays, a huge name table) goes back too, so a
    /// pooled context holds what a normal request needs (see <see cref="RetainedBytes"/>).
    /// </summary>
    public void Reset()
    {
        ThrowIfDisposed();
        _builder?.Abandon();
        var keep = Math.Min(_retired.Count + ((_spare.Count + 1) / 2), MaxSpareChunks);
        foreach (var chunk in _retired)
        {
            if (chunk.Length == ChunkSize && _spare.Count < MaxSpareChunks)
            {
                _spare.Push(chunk);
            }
            else
            {
                ArrayPool<byte>.Shared.Return(chunk);
            }
        }

        while (_spare.Count > keep)
        {
            ArrayPool<byte>.Shared.Return(_spare.Pop());
        }

        _retired.Clear();
        if (_retired.Capacity > MaxRetiredCapacity)
        {
            _retired.Capacity = 0;
        }

        // A context lives long (pooled per request): do not keep a buffer grown for one huge document.
        if (_current.Length > ChunkSize)
        {
            ArrayPool<byte>.Shared.Return(_current);
            _current = RentChunk();
        }

        _builder?.TrimAfterRequest();
        _used = 0;
        AllocatedBytes = 0;
    }

    /// <summary>
    /// Bytes of buffers this context holds: chunks (current, spare, retired) and the builder's
    /// working arrays and name table. Diagnostics and tests: after <see cref="Reset"/> it stays
    /// small whatever the request before did.
    /// </summary>
    internal long RetainedBytes =>
        _current.Length + _spare.Sum(chunk => (long)chunk.Length) + _retired.Sum(chunk => (long)chunk.Length)
        + (_builder?.RetainedBytes ?? 0);

    /// <summary>Property names the builder keeps from earlier documents, across resets while few (diagnostics and tests).</summary>
    internal int LearnedNames => _builder?.LearnedNames ?? 0;

    public void Dispose()
    {
        if (_disposed)
        {
            return;
        }

        Reset();
        _builder?.Release();
        ArrayPool<byte>.Shared.Return(_current);
        _current = [];
        while (_spare.TryPop(out var spare))
        {
            ArrayPool<byte>.Shared.Return(spare);
        }

        _disposed = true;
    }

    private BlittableBuilder RentBuilder(BlittableMode mode)
    {
        ThrowIfDisposed();
        _builder ??= new BlittableBuilder(this);
        _builder.Start(mode);
        return _builder;
    }

    /// <summary>Gives the builder the free tail of the current chunk to write a document into.</summary>
    internal byte[] BeginDocument(out int start)
    {
        if (_current.Length - _used < 4096)
        {
            _retired.Add(_current);
            _current = RentChunk();
            _used = 0;
        }

        start = _used;
        return _current;
    }

    /// <summary>Moves a document in progress into a larger buffer; returns the new buffer (document at 0).</summary>
    internal byte[] GrowDocument(byte[] buffer, int start, int length, int required)
    {
        var size = Math.Max(Math.Max(ChunkSize, required), (int)Math.Min(Array.MaxLength, 2L * length));
        if (required > Array.MaxLength || size < required)
        {
            throw new BlittableParseException(BlittableParseError.TooLarge, 0, $"The document needs more than {Array.MaxLength} bytes.");
        }

        var next = ArrayPool<byte>.Shared.Rent(size);
        buffer.AsSpan(start, length).CopyTo(next);
        if (ReferenceEquals(buffer, _current))
        {
            if (start == 0)
            {
                // The chunk held nothing but this document: hand it back now.
                ArrayPool<byte>.Shared.Return(buffer);
            }
            else
            {
                _retired.Add(buffer);
            }
        }
        else
        {
            ArrayPool<byte>.Shared.Return(buffer);
        }

        _current = next;
        _used = 0;
        return next;
    }

    internal void EndDocument(byte[] buffer, int start, int length)
    {
        _used = start + length;
        AllocatedBytes += length;
    }

    private byte[] RentChunk() => _spare.TryPop(out var chunk) ? chunk : ArrayPool<byte>.Shared.Rent(ChunkSize);

    private void ThrowIfDisposed() => ObjectDisposedException.ThrowIf(_disposed, this);
}
