using System.Buffers.Binary;
using System.Text;
using Jackdaw.Server.Errors;
using Jackdaw.Storage.Blittable;
using Jackdaw.Storage.Engine;

namespace Jackdaw.Server.Documents;

/// <summary>
/// The revisions' part of the documents' write view. The rule (RavenDB's): with revisions enabled
/// for a document's collection, every put stores the new version as a revision too (the newest
/// revision equals the document), and a document that had no revision yet but existed stores its
/// previous version first; a delete stores a <c>DeleteRevision</c> and puts the document in the
/// revisions bin, or with <c>PurgeOnDelete</c> removes every revision. The policy (count, age, at
/// most so many per put) is applied in the same transaction, from the oldest revision on, so a put
/// costs what it removes. A document that has revisions carries <c>HasRevisions</c> in its <c>@flags</c>.
/// A revision holds a reference on the content of each attachment its version lists, released when
/// it is removed; a revert restores the attachments the revision lists.
/// </summary>
public partial class DocumentsTransaction
{
    private RevisionsConfiguration _revisionsConfiguration = RevisionsConfiguration.None;
    private TimeProvider _clock = TimeProvider.System;
    private RevisionTrees? _revisionTrees;
    private bool? _anyRevisions;
    private bool _forcingRevision;
    private bool _restoringRevision;
    private long _lastRevisionEtag = -1;

    /// <summary>
    /// The revisions configuration this transaction applies: the database's when it began, or the
    /// one a command of this transaction set (<see cref="SetRevisionsConfiguration"/>).
    /// </summary>
    public RevisionsConfiguration RevisionsConfiguration
    {
        get => _revisionsConfiguration;
        internal set => _revisionsConfiguration = value;
    }

    /// <summary>Whether a command set a new configuration: the database caches it once this transaction commits.</summary>
    public bool RevisionsConfigurationChanged { get; private set; }

    /// <summary>
    /// The database's clock: it stamps <c>@last-modified</c> and measures revisions' age
    /// (<c>MinimumRevisionAgeToKeep</c>) alike, so a test that moves it ages both together.
    /// </summary>
    internal TimeProvider Clock
    {
        set => _clock = value;
    }

    /// <summary>Now, by <see cref="Clock"/>.</summary>
    private DateTime UtcNow() => _clock.GetUtcNow().UtcDateTime;

    private RevisionTrees Revisions => _revisionTrees ??= new RevisionTrees(EngineTransaction);

    /// <summary>Whether the database has any revision (looked up once per transaction).</summary>
    private bool AnyRevisions => _anyRevisions ??= (_revisionTrees?.Counts ?? EngineTransaction.CreateTree(DocumentsStorage.RevisionCountsTree)).Count > 0;

    /// <summary>Replaces the revisions configuration (stored in <c>Meta</c>); returns the configuration index (RavenDB's <c>RaftCommandIndex</c>).</summary>
    public long SetRevisionsConfiguration(RevisionsConfiguration configuration)
    {
        _meta.Put(DocumentsStorage.RevisionsConfigKey, configuration.Json);
        _revisionsConfiguration = configuration;
        RevisionsConfigurationChanged = true;
        return NextConfigurationIndex();
    }

    /// <summary>Stores the conflict revisions configuration (kept and answered; Jackdaw has no conflicts to apply it to).</summary>
    public long SetRevisionsConflictsConfiguration(ReadOnlySpan<byte> json)
    {
        _meta.Put(DocumentsStorage.RevisionsConflictsConfigKey, json);
        return NextConfigurationIndex();
    }

    private long NextConfigurationIndex()
    {
        var index = (_meta.TryGet(DocumentsStorage.RevisionsConfigIndexKey, out var value) ? BinaryPrimitives.ReadInt64LittleEndian(value) : 0) + 1;
        Span<byte> buffer = stackalloc byte[sizeof(long)];
        BinaryPrimitives.WriteInt64LittleEndian(buffer, index);
        _meta.Put(DocumentsStorage.RevisionsConfigIndexKey, buffer);
        MarkWritten();
        return index;
    }

    /// <summary>
    /// The revisions' part of a put, before the new version is stamped: takes the document out of
    /// the bin when it comes back, stores its previous version when it is its first revision, and
    /// stamps <c>@flags</c> in <paramref name="metadata"/>: <c>HasRevisions</c> and <paramref name="otherServerFlags"/> (the attachments'). Returns
    /// whether the new version is stored as a revision (<see cref="StoreRevisionOfPut"/>).
    /// With no revisions anywhere and none configured, it only reads the body's <c>@flags</c>.
    /// </summary>
    private bool PrepareRevisionsForPut(ReadOnlySpan<byte> key, string? collection, bool existed, ReadOnlySpan<byte> document, BlittablePatch metadata, DocumentFlags otherServerFlags)
    {
        var sent = RevisionFlagsText.Read(document);
        // Map-reduce outputs (Artificial) are rewritten by their index, never revisioned (as RavenDB).
        // A replicated version's revision comes from its source (_replicatedRevisionsFromSource).
        var store = _forcingRevision || (_revisionsConfiguration.IsEnabled(collection) && !RevisionFlagsText.IsArtificial(sent) && !_replicatedRevisionsFromSource);
        long count = 0;
        if (store || AnyRevisions)
        {
            count = RevisionCountOf(key);
            if (count > 0 && !existed)
            {
                LeaveBin(key);
            }
            if (store && existed && count == 0 && !_forcingRevision)
            {
                StorePreviousVersion(key);
            }
        }

        // The attachments' flags (otherServerFlags) and HasRevisions in one stamp: two would overwrite each other.
        // A replicated version keeps the HasRevisions it came with: its revisions may arrive after it.
        var replicated = _replicatedPut ? ReplicatedRevisionFlag(document) : DocumentFlags.None;
        DocumentFlagsMetadata.Stamp(document, metadata, otherServerFlags | replicated | (store || count > 0 ? DocumentFlags.HasRevisions : DocumentFlags.None));
        return store;
    }

    /// <summary>Stores the version a put just wrote as a revision, then applies the collection's policy.</summary>
    private void StoreRevisionOfPut(ReadOnlySpan<byte> key, ReadOnlySpan<byte> id, ReadOnlySpan<byte> collectionBytes, string? collection, string changeVector, long ticks, ReadOnlySpan<byte> stamped, bool existed)
    {
        var origin = _forcingRevision ? RevisionOrigin.Forced : existed ? RevisionOrigin.Put : RevisionOrigin.Created;
        StoreRevision(key, id, collectionBytes, changeVector, ticks, DocumentFlags.HasRevisions | DocumentFlags.Revision, origin, stamped);
        if (!_forcingRevision)
        {
            EnforcePolicy(key, _revisionsConfiguration.For(collection));
        }
    }

    /// <summary>
    /// The revisions' part of a delete, called before anything of the document is removed (its
    /// record is still readable): a <c>DeleteRevision</c> and a bin entry, or with
    /// <c>PurgeOnDelete</c> the removal of every revision.
    /// </summary>
    private void DeleteRevisionsOnDelete(ReadOnlySpan<byte> key, DocumentRecord existing, string tombstoneChangeVector, string? collection)
    {
        var configuration = _revisionsConfiguration.For(collection);
        var enabled = _revisionsConfiguration.AnyEnabled && configuration is { Disabled: false };
        if (!enabled && !AnyRevisions)
        {
            return;
        }
        var count = RevisionCountOf(key);
        if (!enabled && count == 0)
        {
            return;
        }
        if (_replicatedRevisionsFromSource && !(enabled && configuration!.PurgeOnDelete))
        {
            // The delete revision comes from the source; when it came already, into the bin.
            BinReplicatedDeleteRevision(key, tombstoneChangeVector);
            return;
        }
        if (enabled && configuration!.PurgeOnDelete)
        {
            if (count > 0)
            {
                RemoveRevisions(key, long.MaxValue, long.MaxValue);
            }
            return;
        }

        // Copied before the first write: the record's spans die with it.
        var id = existing.IdUtf8.ToArray();
        var collectionBytes = existing.CollectionUtf8.ToArray();
        if (enabled && count == 0)
        {
            var document = existing.Document.ToArray();
            StoreRevision(key, id, collectionBytes, existing.ChangeVectorOr(_databaseId), existing.LastModifiedTicks,
                DocumentFlags.HasRevisions | DocumentFlags.Revision, RevisionOrigin.PreviousVersion, document);
        }
        var etag = StoreRevision(key, id, collectionBytes, tombstoneChangeVector, UtcNow().Ticks,
            DocumentFlags.HasRevisions | DocumentFlags.DeleteRevision, RevisionOrigin.Delete, []);
        Span<byte> etagKey = stackalloc byte[StorageKeys.EtagSize];
        StorageKeys.WriteEtag(etagKey, etag);
        Revisions.Bin.Put(etagKey, key);
        if (enabled)
        {
            EnforcePolicy(key, configuration);
        }
    }

    /// <summary>
    /// RavenDB's <c>ForceRevisionCreation</c>: stores the document's current version as a revision,
    /// configured or not, unless its newest revision is that version already. A document without
    /// revisions is stored again first, to carry <c>HasRevisions</c> (a new change vector, as in RavenDB).
    /// </summary>
    /// <exception cref="DocumentDoesNotExistException">There is no such document.</exception>
    /// <param name="expectedChangeVector">
    /// When given, the document must have it (else <see cref="ConcurrencyException"/>): a client that
    /// forces the revision of a document it then changes in the same batch checks its change vector
    /// here, since the forced revision may re-store the document before the PUT runs.
    /// </param>
    public ForceRevisionResult ForceRevisionCreation(string id, string? expectedChangeVector, JsonOperationContext context)
    {
        if (!TryGet(id, out var record))
        {
            throw new DocumentDoesNotExistException(id);
        }
        CheckChangeVector(id, expectedChangeVector, record.ChangeVectorOr(_databaseId));
        Span<byte> key = stackalloc byte[DocumentIds.MaxKeyBytes];
        key = key[..DocumentIds.GetKeyOrThrow(id, key)];
        var changeVector = record.ChangeVectorOr(_databaseId);
        var lastModified = new DateTime(record.LastModifiedTicks, DateTimeKind.Utc);
        var storedId = record.Id;
        if (RevisionCountOf(key) > 0)
        {
            if (NewestRevisionChangeVector(key) == changeVector)
            {
                return new ForceRevisionResult(false, storedId, changeVector, lastModified);
            }
            var document = record.Document.ToArray();
            var idBytes = record.IdUtf8.ToArray();
            var collectionBytes = record.CollectionUtf8.ToArray();
            StoreRevision(key, idBytes, collectionBytes, changeVector, record.LastModifiedTicks, DocumentFlags.HasRevisions | DocumentFlags.Revision, RevisionOrigin.Forced, document);
            return new ForceRevisionResult(true, storedId, changeVector, lastModified);
        }

        var body = record.Document.ToArray();
        var collection = record.CollectionUtf8.IsEmpty ? null : Encoding.UTF8.GetString(record.CollectionUtf8);
        _forcingRevision = true;
        try
        {
            var put = Put(storedId, body, collection, expectedChangeVector: null, context);
            return new ForceRevisionResult(true, put.Id, put.ChangeVector, put.LastModified);
        }
        finally
        {
            _forcingRevision = false;
        }
    }

    /// <summary>
    /// RavenDB's PUT with <c>"ForceRevisionCreationStrategy":"Before"</c> (a session that forces the
    /// revision of a document it also changes), called before that PUT in the same transaction:
    /// stores the document's current version as a revision, configured or not, unless its newest
    /// revision is that version already. The document is not stored again: the PUT that follows
    /// carries <c>HasRevisions</c>, and checks its own expected change vector.
    /// </summary>
    /// <exception cref="DocumentDoesNotExistException">
    /// There is no such document: a version that was never saved has no "before" (RavenDB refuses
    /// it too; a new document's forced revision is a <c>ForceRevisionCreation</c> after its PUT).
    /// </exception>
    public void ForceRevisionBeforePut(string id)
    {
        if (!TryGet(id, out var record))
        {
            throw new DocumentDoesNotExistException(id, $"Cannot force a revision of document '{id}' before its PUT: the document was not saved yet. Save it first, or force its revision after the PUT with a ForceRevisionCreation command.");
        }
        Span<byte> key = stackalloc byte[DocumentIds.MaxKeyBytes];
        key = key[..DocumentIds.GetKeyOrThrow(id, key)];
        var changeVector = record.ChangeVectorOr(_databaseId);
        if (RevisionCountOf(key) > 0 && NewestRevisionChangeVector(key) == changeVector)
        {
            return;
        }
        StoreRevision(key, record.IdUtf8.ToArray(), record.CollectionUtf8.ToArray(), changeVector, record.LastModifiedTicks,
            DocumentFlags.HasRevisions | DocumentFlags.Revision, RevisionOrigin.Forced, record.Document.ToArray());
    }

    /// <summary>
    /// Stores a revision that was kept elsewhere (an import, a restore) as it was: its change vector,
    /// time and flags. Nothing is stored when a revision of that change vector exists, or was
    /// removed here (its tombstone is kept: an import never brings back a removed revision). A delete
    /// revision of a document that does not exist puts it in the bin. The revision holds references
    /// on the attachments its document lists only when every listed content is stored: an import
    /// stores the attachments' contents first. Returns whether it was stored.
    /// </summary>
    public bool PutRevision(string id, string? collection, string changeVector, DateTime lastModified, DocumentFlags flags, ReadOnlySpan<byte> document)
    {
        Span<byte> key = stackalloc byte[DocumentIds.MaxKeyBytes];
        key = key[..DocumentIds.GetKeyOrThrow(id, key)];
        Span<byte> changeVectorBytes = stackalloc byte[Encoding.ASCII.GetMaxByteCount(changeVector.Length)];
        changeVectorBytes = changeVectorBytes[..Encoding.ASCII.GetBytes(changeVector, changeVectorBytes)];
        if (Revisions.ByChangeVector.TryGet(changeVectorBytes, out _) || HasRevisionTombstone(changeVectorBytes))
        {
            return false;
        }
        var delete = (flags & DocumentFlags.DeleteRevision) != 0;
        var etag = StoreRevision(key, Encoding.UTF8.GetBytes(id), collection is null ? [] : Encoding.UTF8.GetBytes(collection), changeVector,
            lastModified.ToUniversalTime().Ticks, flags | DocumentFlags.Revision | DocumentFlags.HasRevisions, delete ? RevisionOrigin.Delete : RevisionOrigin.Put, delete ? [] : document);
        if (delete && !_docs.TryGet(key, out _))
        {
            LeaveBin(key, exceptEtag: etag);
            Span<byte> etagKey = stackalloc byte[StorageKeys.EtagSize];
            StorageKeys.WriteEtag(etagKey, etag);
            Revisions.Bin.Put(etagKey, key);
        }
        return true;
    }

    /// <summary>
    /// Stores one revision, holding a reference on the contents of the attachments its document
    /// lists; the spans must not point into a tree. Returns its etag.
    /// </summary>
    private long StoreRevision(ReadOnlySpan<byte> documentKey, ReadOnlySpan<byte> id, ReadOnlySpan<byte> collection, string changeVector, long ticks,
        DocumentFlags flags, RevisionOrigin origin, ReadOnlySpan<byte> document)
    {
        var holdsAttachments = HoldRevisionAttachments(document);
        var trees = Revisions;
        var etag = NextRevisionEtag();
        Span<byte> key = stackalloc byte[RevisionKeys.MaxKeySize];
        key = key[..RevisionKeys.Write(key, documentKey, etag)];
        Span<byte> changeVectorBytes = stackalloc byte[Encoding.ASCII.GetMaxByteCount(changeVector.Length)];
        changeVectorBytes = changeVectorBytes[..Encoding.ASCII.GetBytes(changeVector, changeVectorBytes)];

        var value = trees.Revisions.Reserve(key, RevisionRecord.SizeOf(id.Length, collection.Length, changeVectorBytes.Length, document.Length));
        RevisionRecord.Write(value, etag, ticks, flags, origin, holdsAttachments, id, collection, changeVectorBytes, document);
        Span<byte> etagKey = stackalloc byte[StorageKeys.EtagSize];
        StorageKeys.WriteEtag(etagKey, etag);
        trees.ByEtag.Put(etagKey, key);
        trees.ByChangeVector.Put(changeVectorBytes, key);
        AdjustRevisionCount(documentKey, 1);
        _anyRevisions = true;
        MarkWritten();
        return etag;
    }

    /// <summary>Stores the version <c>Docs</c> holds for <paramref name="key"/> (a put is about to replace it) as its first revision.</summary>
    private void StorePreviousVersion(ReadOnlySpan<byte> key)
    {
        if (!_docs.TryGet(key, out var value))
        {
            return;
        }
        var existing = new DocumentRecord(value);
        var id = existing.IdUtf8.ToArray();
        var collection = existing.CollectionUtf8.ToArray();
        var document = existing.Document.ToArray();
        StoreRevision(key, id, collection, existing.ChangeVectorOr(_databaseId), existing.LastModifiedTicks,
            DocumentFlags.HasRevisions | DocumentFlags.Revision, RevisionOrigin.PreviousVersion, document);
    }

    /// <summary>
    /// Applies a collection's policy to a document's revisions: removes the oldest beyond
    /// <c>MinimumRevisionsToKeep</c> that are older than <c>MinimumRevisionAgeToKeep</c>, at most
    /// <c>MaximumRevisionsToDeleteUponDocumentUpdate</c>. Reads one revision more than it removes.
    /// </summary>
    private void EnforcePolicy(ReadOnlySpan<byte> documentKey, RevisionsCollectionConfiguration? configuration)
    {
        if (configuration is not { Disabled: false, Limits: true })
        {
            return;
        }
        var toRemove = long.MaxValue;
        if (configuration.MinimumRevisionsToKeep is { } keep)
        {
            toRemove = RevisionCountOf(documentKey) - keep;
        }
        if (toRemove <= 0)
        {
            return;
        }
        if (configuration.MaximumRevisionsToDeleteUponDocumentUpdate is { } most)
        {
            toRemove = Math.Min(toRemove, most);
        }
        var olderThan = configuration.MinimumRevisionAgeToKeep is { } age
            ? OlderThanTicks(UtcNow().Ticks, age)
            : long.MaxValue;
        RemoveRevisions(documentKey, toRemove, olderThan);
    }

    /// <summary>
    /// <c>now - age</c> in ticks; 0 (nothing is older) for an age that reaches back past
    /// <see cref="DateTime.MinValue"/>, such as <see cref="TimeSpan.MaxValue"/> for "keep forever".
    /// </summary>
    private static long OlderThanTicks(long nowTicks, TimeSpan age) => age.Ticks >= nowTicks ? 0 : nowTicks - age.Ticks;

    /// <summary>
    /// Removes a document's oldest revisions, up to <paramref name="max"/>, stopping at the first one
    /// not older than <paramref name="olderThanTicks"/>, and releases the attachment contents they
    /// held; each leaves a revision tombstone (replication carries the removal to the other nodes).
    /// </summary>
    private void RemoveRevisions(ReadOnlySpan<byte> documentKey, long max, long olderThanTicks)
    {
        var trees = Revisions;
        Span<byte> range = stackalloc byte[RevisionKeys.MaxKeySize];
        range = range[..RevisionKeys.WriteRange(range, documentKey)];
        var victims = new List<(byte[] Key, byte[] ChangeVector, bool Delete)>();
        var heldContents = new List<byte[]>();
        using (var iterator = trees.Revisions.Iterate())
        {
            if (iterator.Seek(range))
            {
                do
                {
                    if (!iterator.Key.StartsWith(range))
                    {
                        break;
                    }
                    var revision = new RevisionRecord(iterator.Value);
                    if (revision.LastModifiedTicks >= olderThanTicks)
                    {
                        break;
                    }
                    victims.Add((iterator.Key.ToArray(), revision.ChangeVectorUtf8.ToArray(), revision.IsDeleteRevision));
                    if (revision.HoldsAttachmentReferences)
                    {
                        AddRevisionAttachmentHashes(revision.Document, heldContents);
                    }
                }
                while (victims.Count < max && iterator.MoveNext());
            }
        }
        if (victims.Count == 0)
        {
            return;
        }
        foreach (var (key, changeVector, delete) in victims)
        {
            DeleteRevisionEntries(key, changeVector, delete);
        }
        AdjustRevisionCount(documentKey, -victims.Count);
        ReleaseContents(heldContents);
        MarkWritten();
    }

    /// <summary>A document comes back (or a newer delete revision arrives): its newest delete revision leaves the bin.</summary>
    private void LeaveBin(ReadOnlySpan<byte> documentKey, long exceptEtag = -1)
    {
        var trees = Revisions;
        Span<byte> last = stackalloc byte[RevisionKeys.MaxKeySize];
        var rangeLength = RevisionKeys.WriteRange(last, documentKey);
        var range = last[..rangeLength];
        StorageKeys.WriteEtag(last[rangeLength..], long.MaxValue);
        Span<byte> etagKey = stackalloc byte[StorageKeys.EtagSize];
        var found = false;
        using (var iterator = trees.Revisions.Iterate())
        {
            if (!iterator.SeekLastLessOrEqual(last[..(rangeLength + StorageKeys.EtagSize)]))
            {
                return;
            }
            do
            {
                if (!iterator.Key.StartsWith(range))
                {
                    return;
                }
                var revision = new RevisionRecord(iterator.Value);
                if (revision.Etag == exceptEtag)
                {
                    continue;
                }
                if (!revision.IsDeleteRevision)
                {
                    return;
                }
                StorageKeys.WriteEtag(etagKey, revision.Etag);
                found = true;
                break;
            }
            while (iterator.MovePrev());
        }
        if (found && trees.Bin.Delete(etagKey))
        {
            MarkWritten();
        }
    }

    /// <summary>The change vector of a document's newest revision; null when it has none.</summary>
    private string? NewestRevisionChangeVector(ReadOnlySpan<byte> documentKey)
    {
        Span<byte> last = stackalloc byte[RevisionKeys.MaxKeySize];
        var rangeLength = RevisionKeys.WriteRange(last, documentKey);
        var range = last[..rangeLength].ToArray();
        StorageKeys.WriteEtag(last[rangeLength..], long.MaxValue);
        using var iterator = Revisions.Revisions.Iterate();
        if (!iterator.SeekLastLessOrEqual(last[..(rangeLength + StorageKeys.EtagSize)]) || !iterator.Key.StartsWith(range))
        {
            return null;
        }
        return new RevisionRecord(iterator.Value).ChangeVector;
    }

    private long RevisionCountOf(ReadOnlySpan<byte> documentKey) =>
        Revisions.Counts.TryGet(documentKey, out var value) ? BinaryPrimitives.ReadInt64LittleEndian(value) : 0;

    private void AdjustRevisionCount(ReadOnlySpan<byte> documentKey, long delta)
    {
        var count = RevisionCountOf(documentKey) + delta;
        if (count <= 0)
        {
            Revisions.Counts.Delete(documentKey);
            return;
        }
        Span<byte> value = stackalloc byte[sizeof(long)];
        BinaryPrimitives.WriteInt64LittleEndian(value, count);
        Revisions.Counts.Put(documentKey, value);
    }

    /// <summary>The next revision etag, written to <c>Meta</c> at once (a rolled-back transaction takes it back with it).</summary>
    private long NextRevisionEtag()
    {
        if (_lastRevisionEtag < 0)
        {
            _lastRevisionEtag = _meta.TryGet(DocumentsStorage.LastRevisionEtagKey, out var stored) ? BinaryPrimitives.ReadInt64LittleEndian(stored) : 0;
        }
        _lastRevisionEtag++;
        Span<byte> value = stackalloc byte[sizeof(long)];
        BinaryPrimitives.WriteInt64LittleEndian(value, _lastRevisionEtag);
        _meta.Put(DocumentsStorage.LastRevisionEtagKey, value);
        return _lastRevisionEtag;
    }

    /// <summary>The revisions' trees, opened on the first revision work of a transaction.</summary>
    private sealed class RevisionTrees(WriteTransaction transaction)
    {
        private Tree? _tombstones;
        private Tree? _tombstonesByChangeVector;

        public Tree Revisions { get; } = transaction.CreateTree(DocumentsStorage.RevisionsTree);

        public Tree ByEtag { get; } = transaction.CreateTree(DocumentsStorage.RevisionsByEtagTree);

        public Tree ByChangeVector { get; } = transaction.CreateTree(DocumentsStorage.RevisionsByChangeVectorTree);

        public Tree Counts { get; } = transaction.CreateTree(DocumentsStorage.RevisionCountsTree);

        public Tree Bin { get; } = transaction.CreateTree(DocumentsStorage.RevisionsBinTree);

        public Tree Tombstones => _tombstones ??= transaction.CreateTree(DocumentsStorage.RevisionTombstonesTree);

        public Tree TombstonesByChangeVector => _tombstonesByChangeVector ??= transaction.CreateTree(DocumentsStorage.RevisionTombstonesByChangeVectorTree);
    }
}
