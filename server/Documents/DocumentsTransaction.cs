using System.Buffers.Binary;
using System.Text;
using Jackdaw.Server.Http;
using Jackdaw.Storage.Blittable;
using Jackdaw.Storage.Engine;

namespace Jackdaw.Server.Documents;

/// <summary>What a stored document got: its final id and change vector.</summary>
public readonly record struct PutResult(string Id, long Etag, string ChangeVector, DateTime LastModified);

/// <summary>
/// A write transaction over a database's trees. Used only on the merger's thread: every write
/// takes the next etag, keeps the secondary trees (by etag, by collection, counts, tombstones) in
/// step with <c>Docs</c>, and nothing is visible to readers until <see cref="Commit"/> is durable.
/// </summary>
public sealed class DocumentsTransaction : IDisposable
{
    private readonly DocumentDatabase _database;
    private readonly WriteTransaction _transaction;
    private readonly Tree _docs;
    private readonly Tree _byEtag;
    private readonly Tree _collections;
    private readonly Tree _collectionCounts;
    private readonly Tree _tombstones;
    private readonly Tree _tombstonesById;
    private readonly Tree _identities;
    private readonly Tree _meta;
    private readonly long _startEtag;
    private byte[] _scratch = new byte[1024];
    private readonly BlittablePatch _stamp = new();
    private readonly Dictionary<string, CountChange> _countChanges = new(StringComparer.Ordinal);
    private readonly Dictionary<string, CountChange> _countChangesByLower = new(StringComparer.Ordinal);

    internal DocumentsTransaction(DocumentDatabase database, WriteTransaction transaction, long lastEtag)
    {
        _database = database;
        _transaction = transaction;
        _docs = transaction.CreateTree(DocumentDatabase.DocsTree);
        _byEtag = transaction.CreateTree(DocumentDatabase.DocsByEtagTree);
        _collections = transaction.CreateTree(DocumentDatabase.CollectionsTree);
        _collectionCounts = transaction.CreateTree(DocumentDatabase.CollectionCountsTree);
        _tombstones = transaction.CreateTree(DocumentDatabase.TombstonesTree);
        _tombstonesById = transaction.CreateTree(DocumentDatabase.TombstonesByIdTree);
        _identities = transaction.CreateTree(DocumentDatabase.IdentitiesTree);
        _meta = transaction.CreateTree(DocumentDatabase.MetaTree);
        _startEtag = lastEtag;
        LastEtag = lastEtag;
    }

    /// <summary>The etag of the last change made in this transaction.</summary>
    public long LastEtag { get; private set; }

    /// <summary>Changes made in this transaction.</summary>
    public long Changes => LastEtag - _startEtag;

    /// <summary>
    /// Stores <paramref name="document"/> (disk-mode blittable, as parsed from the request) under
    /// <paramref name="id"/>, completing ids that end in <c>/</c> or <c>|</c>, stamping
    /// <c>@metadata</c> with <c>@id</c>, <c>@change-vector</c> and <c>@last-modified</c>.
    /// </summary>
    /// <param name="expectedChangeVector">When not null, the document must exist with this change vector (an <c>If-Match</c> value).</param>
    /// <param name="context">Where the stamped document is built.</param>
    public PutResult Put(string id, ReadOnlySpan<byte> document, string? collection, string? expectedChangeVector, JsonOperationContext context)
    {
        var etag = LastEtag + 1;
        id = DocumentIds.KindOf(id) switch
        {
            DocumentIds.IdKind.ServerGenerated => DocumentIds.CompleteServerGenerated(id, etag),
            DocumentIds.IdKind.Identity => DocumentIds.CompleteIdentity(id, NextIdentity(id.AsSpan(0, id.Length - 1))),
            _ => id,
        };

        Span<byte> key = stackalloc byte[DocumentIds.MaxKeyBytes];
        key = key[..DocumentIds.GetKeyOrThrow(id, key)];

        // The stored casing of an existing document wins: ids are case-insensitive.
        var existed = _docs.TryGet(key, out var existingValue);
        if (existed)
        {
            var existing = new DocumentRecord(existingValue);
            CheckChangeVector(id, expectedChangeVector, existing.Etag);
            id = existing.Id;
            // Copy out of the record first: spans into a tree die with the next modification.
            var oldCollection = existing.CollectionUtf8.IsEmpty ? null : Encoding.UTF8.GetString(existing.CollectionUtf8);
            RemoveSecondaries(existing.Etag, oldCollection);
        }
        else if (expectedChangeVector is not null && !MustNotExist(expectedChangeVector))
        {
            ThrowConcurrency(id, expectedChangeVector, actual: null);
        }
        else
        {
            // A document created again is live: readers of changes by etag must not see it deleted.
            RemoveTombstone(key);
        }

        var now = DateTime.UtcNow;
        var changeVector = ChangeVectors.Format(etag, _database.DatabaseId);
        Span<byte> lastModified = stackalloc byte[Timestamps.Length + 8];
        var lastModifiedLength = Timestamps.Format(now, lastModified);

        // One patch per transaction, cleared per document: its operations and buffers are reused.
        var patch = _stamp;
        patch.Clear();
        var metadata = patch.Object("@metadata");
        metadata.Set("@id", id);
        metadata.Set("@change-vector", changeVector);
        metadata.SetUtf8("@last-modified", lastModified[..lastModifiedLength]);
        var stamped = context.Modify(document, patch, BlittableMode.Disk);

        var idBytes = Encoding.UTF8.GetBytes(id);
        var collectionBytes = collection is null ? [] : Encoding.UTF8.GetBytes(collection);
        var record = _docs.Reserve(key, DocumentRecord.SizeOf(idBytes.Length, collectionBytes.Length, stamped.Length));
        DocumentRecord.Write(record, etag, now.Ticks, idBytes, collectionBytes, stamped.Span);

        Span<byte> etagKey = stackalloc byte[StorageKeys.EtagSize];
        StorageKeys.WriteEtag(etagKey, etag);
        _byEtag.Put(etagKey, key);
        if (collection is not null)
            AddToCollection(key, etag, collection, collectionBytes);

        LastEtag = etag;
        return new PutResult(id, etag, changeVector, now);
    }

    /// <summary>Deletes a document; false if there was none. Leaves a tombstone with a new etag.</summary>
    public bool Delete(string id, string? expectedChangeVector)
    {
        Span<byte> key = stackalloc byte[DocumentIds.MaxKeyBytes];
        key = key[..DocumentIds.GetKeyOrThrow(id, key)];

        if (!_docs.TryGet(key, out var existingValue))
        {
            if (expectedChangeVector is not null && !MustNotExist(expectedChangeVector))
                ThrowConcurrency(id, expectedChangeVector, actual: null);
            return false;
        }

        var existing = new DocumentRecord(existingValue);
        CheckChangeVector(id, expectedChangeVector, existing.Etag);
        var etag = LastEtag + 1;

        // Copy what the tombstone needs before the tree changes under the span.
        var tombstone = Tombstones.Create(DateTime.UtcNow.Ticks, existing.IdUtf8, existing.CollectionUtf8, ref _scratch);
        var oldCollection = existing.CollectionUtf8.IsEmpty ? null : Encoding.UTF8.GetString(existing.CollectionUtf8);
        RemoveSecondaries(existing.Etag, oldCollection);
        _docs.Delete(key);

        Span<byte> etagKey = stackalloc byte[StorageKeys.EtagSize];
        StorageKeys.WriteEtag(etagKey, etag);
        RemoveTombstone(key);
        _tombstones.Put(etagKey, _scratch.AsSpan(0, tombstone));
        _tombstonesById.Put(key, etagKey);
        LastEtag = etag;
        return true;
    }

    /// <summary>Ends the transaction; the task completes once its journal write is on disk.</summary>
    internal Task CommitPipelined()
    {
        WriteCountChanges();
        if (Changes > 0)
            _database.WriteLastEtag(_meta, LastEtag);
        return _transaction.CommitPipelined().Durable;
    }

    public void Dispose() => _transaction.Dispose();

    private void RemoveTombstone(ReadOnlySpan<byte> key)
    {
        if (!_tombstonesById.TryGet(key, out var etag))
            return;
        Span<byte> etagKey = stackalloc byte[StorageKeys.EtagSize];
        etag.CopyTo(etagKey);
        _tombstones.Delete(etagKey);
        _tombstonesById.Delete(key);
    }

    private long NextIdentity(ReadOnlySpan<char> prefix)
    {
        var lower = Encoding.UTF8.GetBytes(prefix.ToString().ToLowerInvariant());
        var value = _identities.TryGet(lower, out var current) ? BinaryPrimitives.ReadInt64LittleEndian(current) + 1 : 1;
        Span<byte> buffer = stackalloc byte[sizeof(long)];
        BinaryPrimitives.WriteInt64LittleEndian(buffer, value);
        _identities.Put(lower, buffer);
        return value;
    }

    /// <summary>An empty expected change vector (<c>""</c>) means "the document must not exist yet".</summary>
    private static bool MustNotExist(string? expected) =>
        expected is not null && expected.AsSpan().Trim().Trim('"').IsEmpty;

    private void CheckChangeVector(string id, string? expected, long actualEtag)
    {
        if (expected is null)
            return;
        if (MustNotExist(expected))
            throw HttpErrorException.Conflict(ErrorTypes.Concurrency, $"Optimistic concurrency violation on document '{id}': it was expected not to exist, but its change vector is {ChangeVectors.Format(actualEtag, _database.DatabaseId)}.");
        var actual = ChangeVectors.Format(actualEtag, _database.DatabaseId);
        if (!ChangeVectors.Matches(expected, actual))
            ThrowConcurrency(id, expected, actual);
    }

    private static void ThrowConcurrency(string id, string expected, string? actual) =>
        throw HttpErrorException.Conflict(ErrorTypes.Concurrency, actual is null
            ? $"Optimistic concurrency violation on document '{id}': expected change vector {expected}, but the document does not exist."
            : $"Optimistic concurrency violation on document '{id}': expected change vector {expected}, but it is {actual}.");

    /// <summary>Removes the by-etag and by-collection entries of the current version of a document.</summary>
    private void RemoveSecondaries(long etag, string? collection)
    {
        Span<byte> etagKey = stackalloc byte[StorageKeys.EtagSize];
        StorageKeys.WriteEtag(etagKey, etag);
        _byEtag.Delete(etagKey);
        if (collection is null)
            return;

        var change = CountChangeOf(collection);
        Span<byte> collectionKey = stackalloc byte[1 + StorageKeys.MaxCollectionBytes + StorageKeys.EtagSize];
        var length = StorageKeys.WriteCollectionEtag(collectionKey, change.Lower, etag);
        _collections.Delete(collectionKey[..length]);
        change.Delta--;
    }

    private void AddToCollection(ReadOnlySpan<byte> key, long etag, string collection, ReadOnlySpan<byte> collectionBytes)
    {
        var change = CountChangeOf(collection);
        Span<byte> collectionKey = stackalloc byte[1 + StorageKeys.MaxCollectionBytes + StorageKeys.EtagSize];
        var length = StorageKeys.WriteCollectionEtag(collectionKey, change.Lower, etag);
        _collections.Put(collectionKey[..length], key);
        change.Delta++;
        change.Name ??= collectionBytes.ToArray();
    }

    /// <summary>
    /// The pending change to a collection's count: counts are summed over the transaction and
    /// written once at commit instead of once per document. Looked up by the name as written
    /// (no lowercasing per document); names differing only in case share one change.
    /// </summary>
    private CountChange CountChangeOf(string collection)
    {
        if (_countChanges.TryGetValue(collection, out var change))
            return change;

        var lower = collection.ToLowerInvariant();
        if (!_countChangesByLower.TryGetValue(lower, out change))
        {
            change = new CountChange(StorageKeys.LowerCollection(collection));
            _countChangesByLower.Add(lower, change);
        }
        _countChanges.Add(collection, change);
        return change;
    }

    private void WriteCountChanges()
    {
        foreach (var change in _countChangesByLower.Values)
        {
            if (change.Delta != 0)
                AdjustCount(change.Lower, change.Name, change.Delta);
        }
        _countChanges.Clear();
        _countChangesByLower.Clear();
    }

    private sealed class CountChange(byte[] lower)
    {
        public byte[] Lower { get; } = lower;

        public long Delta { get; set; }

        /// <summary>The name as first written in this transaction, stored if the collection is new.</summary>
        public byte[]? Name { get; set; }
    }

    private void AdjustCount(ReadOnlySpan<byte> lowerCollection, ReadOnlySpan<byte> nameIfNew, long delta)
    {
        long count = 0;
        byte[] value;
        if (_collectionCounts.TryGet(lowerCollection, out var current))
        {
            count = BinaryPrimitives.ReadInt64LittleEndian(current);
            value = current.ToArray();
        }
        else
        {
            value = new byte[sizeof(long) + nameIfNew.Length];
            nameIfNew.CopyTo(value.AsSpan(sizeof(long)));
        }

        count += delta;
        if (count <= 0)
        {
            _collectionCounts.Delete(lowerCollection);
            return;
        }
        BinaryPrimitives.WriteInt64LittleEndian(value, count);
        _collectionCounts.Put(lowerCollection, value);
    }
}

/// <summary>
/// A tombstone, the value in the <c>Tombstones</c> tree (keyed by the deletion's etag):
/// <code>
/// offset  size  field
///  0      8     deleted at, UTC ticks
///  8      2     id length (UTF-8 bytes)
/// 10      2     collection length (UTF-8 bytes)
/// 12      ...   id (original casing), collection
/// </code>
/// </summary>
internal static class Tombstones
{
    public const int HeaderSize = 12;

    public static int Create(long ticks, ReadOnlySpan<byte> id, ReadOnlySpan<byte> collection, ref byte[] buffer)
    {
        var size = HeaderSize + id.Length + collection.Length;
        if (buffer.Length < size)
            buffer = new byte[Math.Max(size, buffer.Length * 2)];
        var span = buffer.AsSpan();
        BinaryPrimitives.WriteInt64LittleEndian(span, ticks);
        BinaryPrimitives.WriteUInt16LittleEndian(span[8..], (ushort)id.Length);
        BinaryPrimitives.WriteUInt16LittleEndian(span[10..], (ushort)collection.Length);
        id.CopyTo(span[HeaderSize..]);
        collection.CopyTo(span[(HeaderSize + id.Length)..]);
        return size;
    }

    public static string ReadId(ReadOnlySpan<byte> tombstone)
    {
        var idLength = BinaryPrimitives.ReadUInt16LittleEndian(tombstone[8..]);
        return Encoding.UTF8.GetString(tombstone.Slice(HeaderSize, idLength));
    }
}
