using System.Buffers.Binary;
using System.Text;
using Jackdaw.Server.Errors;
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
public partial class DocumentsTransaction : IDisposable
{
    private readonly string _databaseId;
    private readonly string _nodeTag;
    private readonly WriteTransaction _transaction;
    private readonly Tree _docs;
    private readonly Tree _byEtag;
    private readonly Tree _collections;
    private readonly Tree _collectionCounts;
    private readonly Tree _tombstones;
    private readonly Tree _tombstonesByCollection;
    private readonly Tree _tombstoneIds;
    private readonly Tree _identities;
    private readonly Tree _meta;
    private readonly long _startEtag;
    private byte[] _scratch = new byte[1024];
    private byte[]? _lookupKey;
    private readonly BlittablePatch _stamp = new();
    private readonly Dictionary<string, CountChange> _countChanges = new(StringComparer.Ordinal);
    private readonly Dictionary<string, CountChange> _countChangesByLower = new(StringComparer.Ordinal);
    private readonly List<DocumentChange> _changes = [];

    /// <param name="databaseId">The suffix of the change vectors this transaction stamps.</param>
    /// <param name="transaction">The engine's write transaction; this view commits or disposes it.</param>
    /// <param name="lastEtag">The etag of the last change of the transactions before this one.</param>
    /// <param name="nodeTag">This node's tag: the tag of this copy's change-vector entries and the suffix of generated ids.</param>
    protected internal DocumentsTransaction(string databaseId, WriteTransaction transaction, long lastEtag, string nodeTag = ChangeVectors.DefaultTag)
    {
        _databaseId = databaseId;
        _nodeTag = nodeTag;
        _transaction = transaction;
        _docs = transaction.CreateTree(DocumentsStorage.DocsTree);
        _byEtag = transaction.CreateTree(DocumentsStorage.DocsByEtagTree);
        _collections = transaction.CreateTree(DocumentsStorage.CollectionsTree);
        _collectionCounts = transaction.CreateTree(DocumentsStorage.CollectionCountsTree);
        _tombstones = transaction.CreateTree(DocumentsStorage.TombstonesTree);
        _tombstonesByCollection = transaction.CreateTree(DocumentsStorage.TombstonesByCollectionTree);
        _tombstoneIds = transaction.CreateTree(DocumentsStorage.TombstoneIdsTree);
        _identities = transaction.CreateTree(DocumentsStorage.IdentitiesTree);
        _meta = transaction.CreateTree(DocumentsStorage.MetaTree);
        _startEtag = lastEtag;
        LastEtag = lastEtag;
    }

    /// <summary>The database's id: the suffix of the change vectors this transaction stamps.</summary>
    public string DatabaseId => _databaseId;

    /// <summary>This node's tag, in this copy's change-vector entries and generated ids.</summary>
    public string NodeTag => _nodeTag;

    /// <summary>The engine transaction, for the trees other features register (see the database's transaction).</summary>
    protected WriteTransaction EngineTransaction => _transaction;

    /// <summary>What this transaction changed, in etag order; published once it is durable.</summary>
    public IReadOnlyList<DocumentChange> DocumentChanges => _changes;

    /// <summary>The etag of the last change made in this transaction.</summary>
    public long LastEtag { get; private set; }

    /// <summary>Changes made in this transaction (each took an etag).</summary>
    public long Changes => LastEtag - _startEtag;

    /// <summary>
    /// Whether anything was written, including writes that take no etag (tombstone clean-up,
    /// other features' trees): such a transaction must be committed even when <see cref="Changes"/> is 0.
    /// </summary>
    public bool HasWrites => Changes > 0 || _otherWrites;

    private bool _otherWrites;

    /// <summary>Marks a write that took no etag, so the transaction is committed.</summary>
    protected void MarkWritten() => _otherWrites = true;

    /// <summary>
    /// Stores <paramref name="document"/> (disk-mode blittable, as parsed from the request) under
    /// <paramref name="id"/>, completing ids that end in <c>/</c> or <c>|</c>, stamping
    /// <c>@metadata</c> with <c>@id</c>, <c>@change-vector</c> and <c>@last-modified</c>.
    /// </summary>
    /// <param name="expectedChangeVector">When not null, the document must exist with this change vector (an <c>If-Match</c> value).</param>
    /// <param name="context">Where the stamped document is built.</param>
    public PutResult Put(string id, ReadOnlySpan<byte> document, string? collection, string? expectedChangeVector, JsonOperationContext context) =>
        PutCore(id, document, collection, expectedChangeVector, context, replicated: null);

    /// <summary>
    /// Stores a version written elsewhere (replication): under a new local etag, but with the
    /// change vector and last-modified time it is given, not this node's. The id is final.
    /// </summary>
    public PutResult PutReplicated(string id, ReadOnlySpan<byte> document, string? collection, string changeVector, long lastModifiedTicks, JsonOperationContext context) =>
        PutCore(id, document, collection, expectedChangeVector: null, context, new ReplicatedVersion(changeVector, lastModifiedTicks));

    /// <summary>The change vector and time a replicated version keeps.</summary>
    private sealed record ReplicatedVersion(string ChangeVector, long LastModifiedTicks);

    private PutResult PutCore(string id, ReadOnlySpan<byte> document, string? collection, string? expectedChangeVector, JsonOperationContext context, ReplicatedVersion? replicated)
    {
        if (collection is { Length: 0 })
        {
            collection = null;
        }
        var etag = LastEtag + 1;
        id = replicated is not null ? id : DocumentIds.KindOf(id) switch
        {
            DocumentIds.IdKind.ServerGenerated => DocumentIds.CompleteServerGenerated(id, etag, _nodeTag),
            DocumentIds.IdKind.Identity => DocumentIds.CompleteIdentity(id, NextIdentity(id.AsSpan(0, id.Length - 1))),
            _ => id,
        };

        Span<byte> key = stackalloc byte[DocumentIds.MaxKeyBytes];
        key = key[..DocumentIds.GetKeyOrThrow(id, key)];
        var keptCollection = false;
        string? previousChangeVector;

        // The stored casing of an existing document wins: ids are case-insensitive.
        var existed = _docs.TryGet(key, out var existingValue);
        if (existed)
        {
            var existing = new DocumentRecord(existingValue);
            previousChangeVector = existing.ChangeVectorOr(_databaseId);
            CheckChangeVector(id, expectedChangeVector, previousChangeVector);
            id = existing.Id;
            // Copy out of the record first: spans into a tree die with the next modification.
            var oldCollection = existing.CollectionUtf8.IsEmpty ? null : Encoding.UTF8.GetString(existing.CollectionUtf8);
            // A body that names no collection keeps the document in its own (RavenDB's rule: a
            // PUT of {"Name":"x"} must not move users/1 out of Users); naming another moves it.
            if (collection is null && oldCollection is not null)
            {
                collection = oldCollection;
                keptCollection = true;
            }
            // Compared as the keys are (lowercased invariant UTF-8, cached per transaction).
            var moved = (oldCollection is null) != (collection is null)
                || (oldCollection is not null && !CountChangeOf(oldCollection).Lower.AsSpan().SequenceEqual(CountChangeOf(collection!).Lower));
            var moveChangeVector = moved ? ChangeVectors.Update(previousChangeVector, _nodeTag, etag, _databaseId) : null;
            var tombstoneLength = moved ? TombstoneRecord.Write(UtcNow().Ticks, existing.IdUtf8, existing.CollectionUtf8, moveChangeVector!, ref _scratch) : 0;
            RemoveSecondaries(existing.Etag, oldCollection);
            if (moved)
            {
                // The document leaves its old collection: readers of that collection's feeds (an
                // index on it) learn it from a tombstone there, one etag before the new version.
                AddTombstone(etag, oldCollection, tombstoneLength, key);
                _changes.Add(new DocumentChange(etag, id, oldCollection, DocumentChangeKind.Delete, ChangeVector: moveChangeVector));
                previousChangeVector = moveChangeVector;
                etag++;
            }
        }
        else
        {
            if (expectedChangeVector is not null && !MustNotExist(expectedChangeVector))
            {
                ThrowConcurrency(id, expectedChangeVector, actual: null);
            }
            // A deleted id written again: the new version follows the deletion, wherever it was made.
            previousChangeVector = TryGetTombstoneChangeVector(key);
        }
        // A document created again after a delete keeps its tombstone: a consumer that has not
        // reached the tombstone's etag yet must still see the delete before the new version.

        // A local write of a conflicted id resolves the conflict: it follows every kept version.
        if (replicated is null && ResolveConflicts(key) is { } conflicted)
        {
            previousChangeVector = ChangeVectors.Merge(previousChangeVector, conflicted);
        }
        var now = replicated is null ? UtcNow() : new DateTime(replicated.LastModifiedTicks, DateTimeKind.Utc);
        var changeVector = replicated?.ChangeVector ?? ChangeVectors.Update(previousChangeVector, _nodeTag, etag, _databaseId);
        Span<byte> lastModified = stackalloc byte[Timestamps.Length + 8];
        var lastModifiedLength = Timestamps.Format(now, lastModified);

        // One patch per transaction, cleared per document: its operations and buffers are reused.
        var patch = _stamp;
        patch.Clear();
        var metadata = patch.Object("@metadata");
        metadata.Set("@id", id);
        metadata.Set("@change-vector", changeVector);
        metadata.SetUtf8("@last-modified", lastModified[..lastModifiedLength]);
        if (keptCollection)
        {
            metadata.Set("@collection", collection!);
        }
        // One @flags stamp for every server flag: the attachments' decided here, the revisions' in PrepareRevisionsForPut.
        var storeRevision = PrepareRevisionsForPut(key, collection, existed, document, metadata, StampAttachments(key, existed, document, metadata));
        var stamped = context.Modify(document, patch, BlittableMode.Disk);

        var idBytes = Encoding.UTF8.GetBytes(id);
        var collectionBytes = collection is null ? [] : Encoding.UTF8.GetBytes(collection);
        var record = _docs.Reserve(key, DocumentRecord.SizeOf(idBytes.Length, collectionBytes.Length, stamped.Length));
        DocumentRecord.Write(record, etag, now.Ticks, idBytes, collectionBytes, stamped.Span);

        Span<byte> etagKey = stackalloc byte[StorageKeys.EtagSize];
        StorageKeys.WriteEtag(etagKey, etag);
        _byEtag.Put(etagKey, key);
        if (collection is not null)
        {
            AddToCollection(key, etag, collection, collectionBytes);
        }
        if (storeRevision)
        {
            StoreRevisionOfPut(key, idBytes, collectionBytes, collection, changeVector, now.Ticks, stamped.Span, existed);
        }

        LastEtag = etag;
        _changes.Add(new DocumentChange(etag, id, collection, DocumentChangeKind.Put, ChangeVector: changeVector));
        return new PutResult(id, etag, changeVector, now);
    }

    /// <summary>The document as this transaction sees it (its own writes included); valid until the next change.</summary>
    public bool TryGet(string id, out DocumentRecord record)
    {
        // A heap buffer, not stackalloc: the record handed out may not refer to this frame.
        _lookupKey ??= new byte[DocumentIds.MaxKeyBytes];
        var key = _lookupKey.AsSpan(0, DocumentIds.GetKeyOrThrow(id, _lookupKey));
        if (_docs.TryGet(key, out var value))
        {
            record = new DocumentRecord(value);
            return true;
        }
        record = default;
        return false;
    }

    /// <summary>Deletes a document; false if there was none. Leaves a tombstone with a new etag.</summary>
    public bool Delete(string id, string? expectedChangeVector) => DeleteCore(id, expectedChangeVector, replicated: null);

    /// <summary>
    /// A deletion made elsewhere (replication), with its change vector and time: deletes the
    /// document when there is one, else records the tombstone alone (so the deletion's change
    /// vector is known here and goes on to the other nodes). Returns whether a document was deleted.
    /// </summary>
    public bool DeleteReplicated(string id, string? collection, string changeVector, long deletedAtTicks)
    {
        if (DeleteCore(id, expectedChangeVector: null, new ReplicatedVersion(changeVector, deletedAtTicks)))
        {
            return true;
        }
        WriteTombstoneOnly(id, collection, changeVector, deletedAtTicks);
        return false;
    }

    private bool DeleteCore(string id, string? expectedChangeVector, ReplicatedVersion? replicated)
    {
        Span<byte> key = stackalloc byte[DocumentIds.MaxKeyBytes];
        key = key[..DocumentIds.GetKeyOrThrow(id, key)];

        // A local delete of a conflicted id resolves the conflict: it follows every kept version.
        var conflicted = replicated is null ? ResolveConflicts(key) : null;
        if (!_docs.TryGet(key, out var existingValue))
        {
            if (expectedChangeVector is not null && !MustNotExist(expectedChangeVector))
            {
                ThrowConcurrency(id, expectedChangeVector, actual: null);
            }
            if (conflicted is not null)
            {
                WriteTombstoneOnly(id, collection: null, ChangeVectors.Update(conflicted, _nodeTag, LastEtag + 1, _databaseId), UtcNow().Ticks);
            }
            return false;
        }

        var existing = new DocumentRecord(existingValue);
        var previousChangeVector = ChangeVectors.Merge(existing.ChangeVectorOr(_databaseId), conflicted);
        CheckChangeVector(id, expectedChangeVector, previousChangeVector);
        var etag = LastEtag + 1;
        var changeVector = replicated?.ChangeVector ?? ChangeVectors.Update(previousChangeVector, _nodeTag, etag, _databaseId);

        // Copy what is needed after the first write before it: the record is a span into Docs, and
        // the revisions written next may move the page under it.
        var tombstone = TombstoneRecord.Write(replicated?.LastModifiedTicks ?? UtcNow().Ticks, existing.IdUtf8, existing.CollectionUtf8, changeVector, ref _scratch);
        var deletedId = existing.Id;
        var existingEtag = existing.Etag;
        var oldCollection = existing.CollectionUtf8.IsEmpty ? null : Encoding.UTF8.GetString(existing.CollectionUtf8);
        DeleteRevisionsOnDelete(key, existing, changeVector, oldCollection);
        RemoveSecondaries(existingEtag, oldCollection);
        RemoveAttachmentsOf(key);
        _docs.Delete(key);

        AddTombstone(etag, oldCollection, tombstone, key);
        LastEtag = etag;
        _changes.Add(new DocumentChange(etag, deletedId, oldCollection, DocumentChangeKind.Delete, ChangeVector: changeVector));
        return true;
    }

    /// <summary>Records a deletion of an id that has no document here: a tombstone under a new etag.</summary>
    private void WriteTombstoneOnly(string id, string? collection, string? changeVector, long ticks)
    {
        if (collection is { Length: 0 })
        {
            collection = null;
        }
        var etag = LastEtag + 1;
        Span<byte> key = stackalloc byte[DocumentIds.MaxKeyBytes];
        key = key[..DocumentIds.GetKeyOrThrow(id, key)];
        changeVector ??= ChangeVectors.Update(TryGetTombstoneChangeVector(key), _nodeTag, etag, _databaseId);
        var length = TombstoneRecord.Write(ticks, Encoding.UTF8.GetBytes(id), collection is null ? [] : Encoding.UTF8.GetBytes(collection), changeVector, ref _scratch);
        AddTombstone(etag, collection, length, key);
        LastEtag = etag;
        _changes.Add(new DocumentChange(etag, id, collection, DocumentChangeKind.Delete, ChangeVector: changeVector));
    }

    /// <summary>The change vector of the id's newest tombstone (by its storage key); null when it has none.</summary>
    private string? TryGetTombstoneChangeVector(ReadOnlySpan<byte> key)
    {
        if (_tombstoneIds.Count == 0 || !_tombstoneIds.TryGet(key, out var etagBytes))
        {
            return null;
        }
        var etag = StorageKeys.ReadEtag(etagBytes);
        if (!_tombstones.TryGet(etagBytes, out var value))
        {
            return null;
        }
        return new TombstoneRecord(etag, value).ChangeVectorOr(_databaseId);
    }

    /// <summary>The newest tombstone of a deleted id, as this transaction sees it: its change vector and time; false when there is none.</summary>
    public bool TryGetTombstone(string id, out string changeVector, out long deletedAtTicks)
    {
        _lookupKey ??= new byte[DocumentIds.MaxKeyBytes];
        var key = _lookupKey.AsSpan(0, DocumentIds.GetKeyOrThrow(id, _lookupKey));
        changeVector = "";
        deletedAtTicks = 0;
        if (_tombstoneIds.Count == 0 || !_tombstoneIds.TryGet(key, out var etagBytes) || !_tombstones.TryGet(etagBytes, out var value))
        {
            return false;
        }
        var record = new TombstoneRecord(StorageKeys.ReadEtag(etagBytes), value);
        changeVector = record.ChangeVectorOr(_databaseId);
        deletedAtTicks = record.DeletedAtTicks;
        return true;
    }

    /// <summary>
    /// A deletion that happened elsewhere (a tombstone of an imported dump): deletes the document
    /// when it exists and was last written at or before <paramref name="keepAfterEtag"/> (one
    /// written after it, by the import itself or since it began, is newer than the deletion and
    /// stays); when there is no such document, records a tombstone for the id alone, so that whoever
    /// reads this database's tombstones (an export of them, an index) sees the deletion too.
    /// Returns whether a document was deleted.
    /// </summary>
    /// <param name="collection">The deleted document's collection, at most 255 bytes lowercased; null when it had none.</param>
    public bool ApplyDeletion(string id, string? collection, long keepAfterEtag)
    {
        if (TryGet(id, out var existing))
        {
            return existing.Etag <= keepAfterEtag && Delete(id, expectedChangeVector: null);
        }
        WriteTombstoneOnly(id, collection, changeVector: null, UtcNow().Ticks);
        return false;
    }

    /// <summary>Writes the tombstone held in <c>_scratch</c> under <paramref name="etag"/>, its collection and its id's storage key.</summary>
    private void AddTombstone(long etag, string? collection, int length, ReadOnlySpan<byte> idKey)
    {
        Span<byte> etagKey = stackalloc byte[StorageKeys.EtagSize];
        StorageKeys.WriteEtag(etagKey, etag);
        _tombstones.Put(etagKey, _scratch.AsSpan(0, length));
        _tombstoneIds.Put(idKey, etagKey);
        var lower = collection is null ? [] : CountChangeOf(collection).Lower;
        Span<byte> collectionKey = stackalloc byte[1 + StorageKeys.MaxCollectionBytes + StorageKeys.EtagSize];
        _tombstonesByCollection.Put(collectionKey[..StorageKeys.WriteCollectionEtag(collectionKey, lower, etag)], []);
    }

    /// <summary>
    /// Removes the tombstones of one collection (lowercased UTF-8; empty for documents without one)
    /// whose etag is at most <paramref name="upToEtag"/>, oldest first, at most <paramref name="max"/>
    /// of them. Returns how many were removed.
    /// </summary>
    internal int RemoveTombstones(ReadOnlySpan<byte> lowerCollection, long upToEtag, int max)
    {
        var prefixLength = 1 + lowerCollection.Length;
        var keys = new List<byte[]>();
        using (var iterator = _tombstonesByCollection.Iterate())
        {
            if (StorageKeys.SeekAfter(iterator, lowerCollection, afterEtag: 0, byCollection: true))
            {
                do
                {
                    var key = iterator.Key;
                    if (!StorageKeys.IsCollectionEtagKey(key, lowerCollection) || StorageKeys.ReadEtag(key[prefixLength..]) > upToEtag)
                    {
                        break;
                    }
                    keys.Add(key.ToArray());
                }
                while (keys.Count < max && iterator.MoveNext());
            }
        }
        Span<byte> idKey = stackalloc byte[DocumentIds.MaxKeyBytes];
        foreach (var key in keys)
        {
            _tombstonesByCollection.Delete(key);
            var etagKey = key.AsSpan(prefixLength);
            if (_tombstones.TryGet(etagKey, out var value))
            {
                // The id's entry goes with its newest tombstone only (a later one keeps it).
                var length = DocumentIds.GetKey(new TombstoneRecord(StorageKeys.ReadEtag(etagKey), value).Id, idKey);
                if (length > 0 && _tombstoneIds.TryGet(idKey[..length], out var newest) && newest.SequenceEqual(etagKey))
                {
                    _tombstoneIds.Delete(idKey[..length]);
                }
            }
            _tombstones.Delete(etagKey);
        }
        if (keys.Count > 0)
        {
            MarkWritten();
        }
        return keys.Count;
    }

    /// <summary>Ends the transaction; the task completes once its journal write is on disk.</summary>
    internal Task CommitPipelined()
    {
        WriteCountChanges();
        if (Changes > 0)
        {
            DocumentsStorage.WriteLastEtag(_meta, LastEtag);
        }
        return _transaction.CommitPipelined().Durable;
    }

    public void Dispose() => _transaction.Dispose();

    /// <summary>
    /// The next value of the identity <paramref name="prefix"/> (a collection's id prefix, without
    /// its <c>|</c>; case-insensitive): one more than the last one handed out or seeded, 1 for a new one.
    /// </summary>
    public long NextIdentity(ReadOnlySpan<char> prefix)
    {
        var lower = IdentityKey(prefix);
        var value = checked((_identities.TryGet(lower, out var current) ? BinaryPrimitives.ReadInt64LittleEndian(current) : 0) + 1);
        WriteIdentity(lower, value);
        return value;
    }

    /// <summary>
    /// Sets the identity <paramref name="prefix"/> to <paramref name="value"/> when that is higher
    /// than its value, or in any case when <paramref name="force"/> is set (RavenDB's seed); returns
    /// the identity's value afterwards.
    /// </summary>
    public long SeedIdentity(ReadOnlySpan<char> prefix, long value, bool force)
    {
        var lower = IdentityKey(prefix);
        var current = _identities.TryGet(lower, out var stored) ? BinaryPrimitives.ReadInt64LittleEndian(stored) : 0;
        if (!force && value <= current)
        {
            return current;
        }
        WriteIdentity(lower, value);
        return value;
    }

    private static byte[] IdentityKey(ReadOnlySpan<char> prefix)
    {
        var key = Encoding.UTF8.GetBytes(prefix.ToString().ToLowerInvariant());
        if (key.Length == 0 || key.Length > DocumentIds.MaxKeyBytes)
        {
            throw new BadRequestException($"An identity name is 1 to {DocumentIds.MaxKeyBytes} bytes of UTF-8 ('users' for ids users/1, users/2, ...), not {key.Length}.");
        }
        return key;
    }

    private void WriteIdentity(byte[] key, long value)
    {
        Span<byte> buffer = stackalloc byte[sizeof(long)];
        BinaryPrimitives.WriteInt64LittleEndian(buffer, value);
        _identities.Put(key, buffer);
        MarkWritten();
    }

    /// <summary>An empty expected change vector (<c>""</c>) means "the document must not exist yet".</summary>
    private static bool MustNotExist(string? expected) =>
        expected is not null && expected.AsSpan().Trim().Trim('"').IsEmpty;

    private static void CheckChangeVector(string id, string? expected, string actual)
    {
        if (expected is null)
        {
            return;
        }
        if (MustNotExist(expected))
        {
            throw new ConcurrencyException(id, $"Optimistic concurrency violation on document '{id}': it was expected not to exist, but its change vector is {actual}.");
        }
        if (!ChangeVectors.Matches(expected, actual))
        {
            ThrowConcurrency(id, expected, actual);
        }
    }

    private static void ThrowConcurrency(string id, string expected, string? actual) =>
        throw new ConcurrencyException(id, actual is null
            ? $"Optimistic concurrency violation on document '{id}': expected change vector {expected}, but the document does not exist."
            : $"Optimistic concurrency violation on document '{id}': expected change vector {expected}, but it is {actual}.");

    /// <summary>Removes the by-etag and by-collection entries of the current version of a document.</summary>
    private void RemoveSecondaries(long etag, string? collection)
    {
        Span<byte> etagKey = stackalloc byte[StorageKeys.EtagSize];
        StorageKeys.WriteEtag(etagKey, etag);
        _byEtag.Delete(etagKey);
        if (collection is null)
        {
            return;
        }

        var change = CountChangeOf(collection);
        Span<byte> collectionKey = stackalloc byte[1 + StorageKeys.MaxCollectionBytes + StorageKeys.EtagSize];
        var length = StorageKeys.WriteCollectionEtag(collectionKey, change.Lower, etag);
        _collections.Delete(collectionKey[..length]);
        change.Delta--;
    }
}
