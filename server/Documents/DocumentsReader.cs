using System.Buffers.Binary;
using System.Text;
using Jackdaw.Storage.Engine;

namespace Jackdaw.Server.Documents;

/// <summary>Per-collection document count.</summary>
public readonly record struct CollectionCount(string Name, long Count);

/// <summary>
/// A read transaction over a database's trees: a snapshot as of the last commit when it began.
/// Spans it hands out are valid until it is disposed.
/// </summary>
public partial class DocumentsReader : IDisposable
{
    [ThreadStatic]
    private static byte[]? t_keyBuffer;

    private readonly ReadTransaction _transaction;
    private Tree? _docs;
    private bool _docsOpened;

    /// <param name="databaseId">The suffix of the database's change vectors.</param>
    /// <param name="transaction">The engine's read transaction; this view disposes it.</param>
    protected internal DocumentsReader(string databaseId, ReadTransaction transaction)
    {
        DatabaseId = databaseId;
        _transaction = transaction;
    }

    /// <summary>The database's id: the suffix of its change vectors.</summary>
    public string DatabaseId { get; }

    /// <summary>The engine transaction, for the trees other features register (see the database's reader).</summary>
    protected ReadTransaction EngineTransaction => _transaction;

    public long DocumentCount => Docs?.Count ?? 0;

    /// <summary>The <c>Docs</c> tree, opened on first use (a GET by id needs no other).</summary>
    private Tree? Docs
    {
        get
        {
            if (!_docsOpened)
            {
                _docs = _transaction.OpenTree(DocumentsStorage.DocsTree);
                _docsOpened = true;
            }
            return _docs;
        }
    }

    /// <summary>Looks a document up by id (any casing).</summary>
    public bool TryGet(ReadOnlySpan<char> id, out DocumentRecord record)
    {
        // A heap buffer, not stackalloc: the record handed out may not refer to this frame.
        var key = t_keyBuffer ??= new byte[DocumentIds.MaxKeyBytes];
        var length = DocumentIds.GetKey(id, key);
        if (length < 0 || Docs is not { } docs || !docs.TryGet(key.AsSpan(0, length), out var value))
        {
            record = default;
            return false;
        }
        record = new DocumentRecord(value);
        return true;
    }

    /// <summary>Looks a document up by its storage key (the lowercased id).</summary>
    public bool TryGetByKey(ReadOnlySpan<byte> key, out DocumentRecord record)
    {
        if (Docs is not { } docs || !docs.TryGet(key, out var value))
        {
            record = default;
            return false;
        }
        record = new DocumentRecord(value);
        return true;
    }

    /// <summary>Storage keys of documents whose id starts with <paramref name="prefix"/>, in id order.</summary>
    internal List<byte[]> KeysStartingWith(string prefix, int start, int pageSize)
    {
        if (pageSize <= 0 || Docs is not { } docs)
        {
            return [];
        }
        var lowerPrefix = Encoding.UTF8.GetBytes(prefix.ToLowerInvariant());
        using var iterator = docs.Iterate();
        return iterator.Seek(lowerPrefix) ? Page(iterator, lowerPrefix, forward: true, valueIsKey: false, start, pageSize) : [];
    }

    /// <summary>Storage keys of all documents, newest change first.</summary>
    internal List<byte[]> KeysByEtagDescending(int start, int pageSize)
    {
        if (pageSize <= 0 || _transaction.OpenTree(DocumentsStorage.DocsByEtagTree) is not { } byEtag)
        {
            return [];
        }
        using var iterator = byEtag.Iterate();
        return iterator.SeekLast() ? Page(iterator, [], forward: false, valueIsKey: true, start, pageSize) : [];
    }

    /// <summary>
    /// Storage keys of a collection's documents, newest change first (or, <paramref name="ascending"/>,
    /// oldest first): read from either end of the collection's etag range, never the whole of it.
    /// </summary>
    internal List<byte[]> KeysOfCollection(string collection, int start, int pageSize, bool ascending = false)
    {
        var lower = StorageKeys.LowerCollection(collection);
        if (pageSize <= 0 || lower.Length > StorageKeys.MaxCollectionBytes || _transaction.OpenTree(DocumentsStorage.CollectionsTree) is not { } tree)
        {
            return [];
        }

        Span<byte> edge = stackalloc byte[1 + StorageKeys.MaxCollectionBytes + StorageKeys.EtagSize];
        var length = StorageKeys.WriteCollectionEtag(edge, lower, ascending ? 0 : long.MaxValue);
        using var iterator = tree.Iterate();
        var positioned = ascending ? iterator.Seek(edge[..length]) : iterator.SeekLastLessOrEqual(edge[..length]);
        return positioned ? Page(iterator, edge[..(1 + lower.Length)], forward: ascending, valueIsKey: true, start, pageSize) : [];
    }

    /// <summary>
    /// From a positioned iterator, skips <paramref name="start"/> entries under <paramref name="prefix"/>
    /// and collects up to <paramref name="pageSize"/> document keys (the entry's key or its value).
    /// </summary>
    private static List<byte[]> Page(TreeIterator iterator, ReadOnlySpan<byte> prefix, bool forward, bool valueIsKey, int start, int pageSize)
    {
        var keys = new List<byte[]>(Math.Min(pageSize, 1024));
        do
        {
            if (!iterator.Key.StartsWith(prefix))
            {
                break;
            }
            if (start > 0)
            {
                start--;
                continue;
            }
            keys.Add((valueIsKey ? iterator.Value : iterator.Key).ToArray());
        }
        while (keys.Count < pageSize && (forward ? iterator.MoveNext() : iterator.MovePrev()));
        return keys;
    }

    /// <summary>
    /// The documents whose storage key starts with <paramref name="lowerPrefix"/> (see
    /// <see cref="DocumentIds.KeyPrefix"/>), in id order, after <paramref name="afterKey"/> (a key
    /// an earlier enumeration handed out; empty to start at the first), or backward before it.
    /// </summary>
    public DocumentsById GetDocumentsById(ReadOnlySpan<byte> lowerPrefix, ReadOnlySpan<byte> afterKey, bool descending = false) =>
        new(Docs, lowerPrefix, afterKey, descending);

    /// <summary>Every document, newest change first, with an etag below <paramref name="beforeEtag"/>.</summary>
    public DocumentsNewestFirst GetDocumentsNewestFirst(long beforeEtag = long.MaxValue) =>
        new(this, _transaction.OpenTree(DocumentsStorage.DocsByEtagTree), beforeEtag);

    /// <summary>How many documents a collection (any casing) has; 0 for one that has none.</summary>
    public long CountOf(string collection)
    {
        var lower = StorageKeys.LowerCollection(collection);
        if (lower.Length > StorageKeys.MaxCollectionBytes || _transaction.OpenTree(DocumentsStorage.CollectionCountsTree) is not { } tree || !tree.TryGet(lower, out var value))
        {
            return 0;
        }
        return BinaryPrimitives.ReadInt64LittleEndian(value);
    }

    /// <summary>Every collection with its document count, in name order.</summary>
    public List<CollectionCount> GetCollections()
    {
        var result = new List<CollectionCount>();
        var tree = _transaction.OpenTree(DocumentsStorage.CollectionCountsTree);
        if (tree is null)
        {
            return result;
        }
        using var iterator = tree.Iterate();
        if (!iterator.SeekFirst())
        {
            return result;
        }
        do
        {
            var value = iterator.Value;
            result.Add(new CollectionCount(Encoding.UTF8.GetString(value[sizeof(long)..]), BinaryPrimitives.ReadInt64LittleEndian(value)));
        }
        while (iterator.MoveNext());
        return result;
    }

    /// <summary>Every identity (lowercased prefix without its <c>|</c>) with its last value, in name order, from <paramref name="start"/> on, at most <paramref name="pageSize"/>.</summary>
    public List<(string Prefix, long Value)> GetIdentities(int start = 0, int pageSize = int.MaxValue)
    {
        var result = new List<(string, long)>();
        var tree = _transaction.OpenTree(DocumentsStorage.IdentitiesTree);
        if (tree is null)
        {
            return result;
        }
        using var iterator = tree.Iterate();
        if (!iterator.SeekFirst())
        {
            return result;
        }
        var index = 0;
        do
        {
            if (index++ >= start)
            {
                result.Add((Encoding.UTF8.GetString(iterator.Key), BinaryPrimitives.ReadInt64LittleEndian(iterator.Value)));
            }
        }
        while (result.Count < pageSize && iterator.MoveNext());
        return result;
    }

    /// <summary>The etag of the last change in this snapshot (every snapshot is durable).</summary>
    public long LastEtag => DocumentsStorage.ReadLastEtag(_transaction.OpenTree(DocumentsStorage.MetaTree));

    /// <summary>The number of tombstones (deletions not yet purged).</summary>
    public long TombstoneCount => _transaction.OpenTree(DocumentsStorage.TombstonesTree)?.Count ?? 0;

    /// <summary>
    /// The documents changed after <paramref name="afterEtag"/>, in etag order, at most
    /// <paramref name="take"/>: of one collection (any casing), or of all when
    /// <paramref name="collection"/> is null. Each document appears once, at its latest version.
    /// Read in this snapshot, straight from the trees; records are valid until the next move.
    /// </summary>
    public DocumentFeed GetDocumentsFrom(string? collection, long afterEtag, int take = int.MaxValue)
    {
        // Etags start at 1: anything below 0 means "from the start" (and must not wrap in a key).
        afterEtag = Math.Max(afterEtag, 0);
        if (collection is null)
        {
            return new DocumentFeed(this, _transaction.OpenTree(DocumentsStorage.DocsByEtagTree), [], afterEtag, take);
        }
        var lower = StorageKeys.LowerCollection(collection);
        if (lower.Length > StorageKeys.MaxCollectionBytes)
        {
            return default;
        }
        return new DocumentFeed(this, _transaction.OpenTree(DocumentsStorage.CollectionsTree), lower, afterEtag, take, byCollection: true);
    }

    /// <summary>
    /// The tombstones (deletions) after <paramref name="afterEtag"/>, in etag order, at most
    /// <paramref name="take"/>: of one collection (any casing; "" for documents that had none), or
    /// of all when <paramref name="collection"/> is null. A document deleted and created again
    /// keeps its tombstone until clean-up, so a consumer behind it still sees the delete.
    /// </summary>
    public TombstoneFeed GetTombstonesFrom(string? collection, long afterEtag, int take = int.MaxValue)
    {
        afterEtag = Math.Max(afterEtag, 0);
        var tombstones = _transaction.OpenTree(DocumentsStorage.TombstonesTree);
        if (collection is null)
        {
            return new TombstoneFeed(tombstones, null, [], afterEtag, take);
        }
        var lower = StorageKeys.LowerCollection(collection);
        if (lower.Length > StorageKeys.MaxCollectionBytes)
        {
            return default;
        }
        return new TombstoneFeed(tombstones, _transaction.OpenTree(DocumentsStorage.TombstonesByCollectionTree), lower, afterEtag, take);
    }

    /// <summary>
    /// Every collection that has tombstones (lowercased; "" for documents that had none) with the
    /// etag of its oldest one, in collection order. One seek per collection.
    /// </summary>
    public List<(string LowerCollection, long OldestEtag)> GetTombstoneCollections()
    {
        var result = new List<(string, long)>();
        if (_transaction.OpenTree(DocumentsStorage.TombstonesByCollectionTree) is not { } tree)
        {
            return result;
        }
        using var iterator = tree.Iterate();
        var more = iterator.SeekFirst();
        Span<byte> next = stackalloc byte[1 + StorageKeys.MaxCollectionBytes + StorageKeys.EtagSize];
        while (more)
        {
            var key = iterator.Key;
            var length = key[0];
            var lower = key.Slice(1, length);
            result.Add((System.Text.Encoding.UTF8.GetString(lower), StorageKeys.ReadEtag(key[(1 + length)..])));
            // Past every key of this collection: the same prefix with the largest etag, then one more.
            var last = StorageKeys.WriteCollectionEtag(next, lower, long.MaxValue);
            more = iterator.SeekLastLessOrEqual(next[..last]) && iterator.MoveNext();
        }
        return result;
    }

    public void Dispose() => _transaction.Dispose();
}
