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
public sealed class DocumentsReader : IDisposable
{
    [ThreadStatic]
    private static byte[]? t_keyBuffer;

    private readonly ReadTransaction _transaction;
    private Tree? _docs;
    private bool _docsOpened;

    internal DocumentsReader(DocumentDatabase database, ReadTransaction transaction)
    {
        Database = database;
        _transaction = transaction;
    }

    public DocumentDatabase Database { get; }

    public long DocumentCount => Docs?.Count ?? 0;

    /// <summary>The <c>Docs</c> tree, opened on first use (a GET by id needs no other).</summary>
    private Tree? Docs
    {
        get
        {
            if (!_docsOpened)
            {
                _docs = _transaction.OpenTree(DocumentDatabase.DocsTree);
                _docsOpened = true;
            }
            return _docs;
        }
    }

    /// <summary>Looks a document up by id (any casing).</summary>
    internal bool TryGet(ReadOnlySpan<char> id, out DocumentRecord record)
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
    internal bool TryGetByKey(ReadOnlySpan<byte> key, out DocumentRecord record)
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
            return [];
        var lowerPrefix = Encoding.UTF8.GetBytes(prefix.ToLowerInvariant());
        using var iterator = docs.Iterate();
        return iterator.Seek(lowerPrefix) ? Page(iterator, lowerPrefix, forward: true, valueIsKey: false, start, pageSize) : [];
    }

    /// <summary>Storage keys of all documents, newest change first.</summary>
    internal List<byte[]> KeysByEtagDescending(int start, int pageSize)
    {
        if (pageSize <= 0 || _transaction.OpenTree(DocumentDatabase.DocsByEtagTree) is not { } byEtag)
            return [];
        using var iterator = byEtag.Iterate();
        return iterator.SeekLast() ? Page(iterator, [], forward: false, valueIsKey: true, start, pageSize) : [];
    }

    /// <summary>Storage keys of a collection's documents, newest change first.</summary>
    internal List<byte[]> KeysOfCollection(string collection, int start, int pageSize)
    {
        var lower = StorageKeys.LowerCollection(collection);
        if (pageSize <= 0 || lower.Length > StorageKeys.MaxCollectionBytes || _transaction.OpenTree(DocumentDatabase.CollectionsTree) is not { } tree)
            return [];

        Span<byte> last = stackalloc byte[1 + StorageKeys.MaxCollectionBytes + StorageKeys.EtagSize];
        var length = StorageKeys.WriteCollectionEtag(last, lower, long.MaxValue);
        using var iterator = tree.Iterate();
        return iterator.SeekLastLessOrEqual(last[..length]) ? Page(iterator, last[..(1 + lower.Length)], forward: false, valueIsKey: true, start, pageSize) : [];
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
                break;
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

    /// <summary>Every collection with its document count, in name order.</summary>
    public List<CollectionCount> GetCollections()
    {
        var result = new List<CollectionCount>();
        var tree = _transaction.OpenTree(DocumentDatabase.CollectionCountsTree);
        if (tree is null)
            return result;
        using var iterator = tree.Iterate();
        if (!iterator.SeekFirst())
            return result;
        do
        {
            var value = iterator.Value;
            result.Add(new CollectionCount(Encoding.UTF8.GetString(value[sizeof(long)..]), BinaryPrimitives.ReadInt64LittleEndian(value)));
        }
        while (iterator.MoveNext());
        return result;
    }

    /// <summary>The etag of the last change in this snapshot (durable, unlike <see cref="DocumentDatabase.LastEtag"/>).</summary>
    public long LastEtag =>
        _transaction.OpenTree(DocumentDatabase.MetaTree) is { } meta && meta.TryGet(DocumentDatabase.LastEtagKey, out var value)
            ? BinaryPrimitives.ReadInt64LittleEndian(value)
            : 0;

    /// <summary>The number of tombstones (deletions not yet purged).</summary>
    public long TombstoneCount => _transaction.OpenTree(DocumentDatabase.TombstonesTree)?.Count ?? 0;

    public void Dispose() => _transaction.Dispose();
}
