using System.Buffers.Binary;
using System.Text;
using Jackdaw.Storage.Engine;

namespace Jackdaw.Server.Documents;

/// <summary>
/// The on-disk schema of a database's documents: every tree, key and value layout is declared here,
/// and only the documents' write and read views (<see cref="DocumentsTransaction"/>,
/// <see cref="DocumentsReader"/>) touch these trees. Other features keep their own trees, registered
/// through the database (<c>DocumentDatabase.RegisterTrees</c>), never by editing this schema.
/// </summary>
/// <remarks>
/// <code>
/// tree                     key                                            value
/// Docs                     lowercased id, UTF-8                           DocumentRecord (DocumentRecord.cs)
/// DocsByEtag               etag (8, big endian)                           lowercased id
/// Collections              [len: 1][lowercased collection][etag: 8 BE]    lowercased id
/// CollectionCounts         lowercased collection                          [count: 8 LE][name as first written]
/// Tombstones               etag (8, big endian)                           TombstoneRecord (TombstoneRecord.cs)
/// TombstonesByCollection   [len: 1][lowercased collection][etag: 8 BE]    empty (the record is in Tombstones)
/// TombstoneIds             lowercased id, UTF-8                           etag of the id's newest tombstone (8, big endian)
/// Conflicts                [lowercased id][0x1E][change vector, ASCII]    ConflictRecord (ConflictRecord.cs): a kept concurrent version
/// Identities               lowercased prefix, UTF-8                       last value (int64 LE)
/// Attachments              [lowercased id][0x1E][lowercased name], UTF-8  AttachmentEntry (AttachmentEntry.cs)
/// AttachmentContents       SHA-256 of the bytes (32)                      [stream id: 8 LE][size: 8 LE][refcount: 8 LE] (entries + revisions)
/// AttachmentChunks         [stream id: 8 BE][chunk number: 4 BE]          the chunk's bytes (AttachmentStreams.ChunkSize, the last shorter)
/// AttachmentStaging        [stream id: 8 BE]                              [state: 1] 0 = being written, 1 = orphan (to delete)
/// Revisions                [id prefix][0x1E][revision etag: 8 BE]         RevisionRecord (Revisions/RevisionRecord.cs)
/// RevisionsByEtag          revision etag (8, big endian)                  the Revisions key
/// RevisionsByChangeVector  change vector, ASCII                           the Revisions key
/// RevisionCounts           lowercased id, UTF-8                           count (int64 LE)
/// RevisionsBin             etag of a delete revision (8, big endian)      lowercased id (a deleted document that has revisions)
/// RevisionTombstones       revision etag of the removal (8, big endian)   [removed-at ticks: 8 LE][change vector, ASCII]: a removed revision
/// RevisionTombstonesByChangeVector  change vector, ASCII                  the tombstone's revision etag (8, big endian)
/// Meta                     "database-id"                                  22 ASCII characters
///                          "last-etag"                                    int64 LE: the etag of the last change
///                          "last-stream-id"                               int64 LE: the last attachment stream id handed out
///                          "schema-version"                               int32 LE: SchemaVersion
///                          "last-revision-etag"                           int64 LE: the revisions' own counter
///                          "revisions-config"                             RevisionsConfiguration, UTF-8 JSON
///                          "revisions-conflicts-config"                   RevisionsCollectionConfiguration, UTF-8 JSON
///                          "revisions-config-index"                       int64 LE: configurations written (RaftCommandIndex)
/// </code>
/// Etags are big endian in keys so that byte order is etag order. A document without a collection
/// has no <c>Collections</c> entry; its tombstone is under the empty collection (<c>[0][etag]</c>).
/// Schema versions: 1 (no <c>schema-version</c> key) kept tombstones in <c>Tombstones</c> and
/// <c>TombstonesById</c> and dropped a tombstone when its document was created again; 2 keeps every
/// tombstone until the consumers have passed it and indexes them by collection. A version-1
/// database is migrated when it opens, in the same transaction that writes the new version.
/// Version 3 adds the four attachment trees and <c>last-stream-id</c>, and the revisions' trees: a
/// version-2 database is migrated by writing the new version (the trees are created empty).
/// Version 4: a revision holds a reference on the content of each attachment it lists (counted in
/// <c>AttachmentContents</c>, flagged in its record); a version-3 database is migrated by writing
/// the new version, its revisions flagged as holding none (a build that reads up to version 3 would
/// never release those references, so it refuses a version-4 folder). Version 5 (replication):
/// a tombstone record ends with the deletion's change vector, and <c>TombstoneIds</c> finds an
/// id's newest tombstone (a put of a deleted id, or a replicated write of it, compares its change
/// vector with the deletion's); <c>Conflicts</c> keeps concurrent versions under the keep policy; a version-4 database is
/// migrated by indexing its tombstones by id
/// (their records, without a change vector, keep the single-node one of their etag). Version 6
/// (revisions in a cluster): <c>RevisionTombstones</c> and <c>RevisionTombstonesByChangeVector</c>
/// record each removed revision's change vector under a revision etag, so removals travel in the
/// revisions feed; a version-5 database is migrated by writing the new version (the trees are
/// created empty), and a build that reads up to version 5 refuses a version-6 folder, whose
/// removals it would neither send nor clean up. At every open, staging entries still being written (state 0) are left-overs of an upload a crash or a closed
/// database cut off: nothing references them, so the open marks them orphans and the database's
/// clean-up deletes them. The revisions' <c>[id prefix]</c> is the lowercased id, or for an id
/// of more than <see cref="RevisionKeys.MaxIdPrefix"/> bytes its first bytes, 0x1F and the SHA-256
/// of the whole (see <see cref="RevisionKeys"/>); revision etags are their own counter, so the
/// documents' etags, feeds and change vectors are the same with revisions on or off.
/// </remarks>
public static class DocumentsStorage
{
    public const int SchemaVersion = 6;

    internal const string DocsTree = "Docs";
    internal const string DocsByEtagTree = "DocsByEtag";
    internal const string CollectionsTree = "Collections";
    internal const string CollectionCountsTree = "CollectionCounts";
    internal const string TombstonesTree = "Tombstones";
    internal const string TombstonesByCollectionTree = "TombstonesByCollection";
    internal const string TombstoneIdsTree = "TombstoneIds";
    internal const string ConflictsTree = "Conflicts";
    internal const string IdentitiesTree = "Identities";
    internal const string MetaTree = "Meta";
    internal const string AttachmentsTree = "Attachments";
    internal const string AttachmentContentsTree = "AttachmentContents";
    internal const string AttachmentChunksTree = "AttachmentChunks";
    internal const string AttachmentStagingTree = "AttachmentStaging";
    internal const string RevisionsTree = "Revisions";
    internal const string RevisionsByEtagTree = "RevisionsByEtag";
    internal const string RevisionsByChangeVectorTree = "RevisionsByChangeVector";
    internal const string RevisionCountsTree = "RevisionCounts";
    internal const string RevisionsBinTree = "RevisionsBin";
    internal const string RevisionTombstonesTree = "RevisionTombstones";
    internal const string RevisionTombstonesByChangeVectorTree = "RevisionTombstonesByChangeVector";

    /// <summary>Schema version 1's id → tombstone etag index, dropped by the migration to 2.</summary>
    private const string LegacyTombstonesByIdTree = "TombstonesById";

    internal static readonly byte[] DatabaseIdKey = "database-id"u8.ToArray();
    internal static readonly byte[] LastEtagKey = "last-etag"u8.ToArray();
    internal static readonly byte[] SchemaVersionKey = "schema-version"u8.ToArray();
    internal static readonly byte[] LastStreamIdKey = "last-stream-id"u8.ToArray();
    internal static readonly byte[] LastRevisionEtagKey = "last-revision-etag"u8.ToArray();
    internal static readonly byte[] RevisionsConfigKey = "revisions-config"u8.ToArray();
    internal static readonly byte[] RevisionsConflictsConfigKey = "revisions-conflicts-config"u8.ToArray();
    internal static readonly byte[] RevisionsConfigIndexKey = "revisions-config-index"u8.ToArray();

    /// <summary>Every tree of this schema; no other feature may register a tree of these names.</summary>
    public static IReadOnlyList<string> TreeNames { get; } =
    [
        DocsTree, DocsByEtagTree, CollectionsTree, CollectionCountsTree, TombstonesTree,
        TombstonesByCollectionTree, TombstoneIdsTree, ConflictsTree, IdentitiesTree, MetaTree, LegacyTombstonesByIdTree,
        AttachmentsTree, AttachmentContentsTree, AttachmentChunksTree, AttachmentStagingTree,
        RevisionsTree, RevisionsByEtagTree, RevisionsByChangeVectorTree, RevisionCountsTree, RevisionsBinTree,
        RevisionTombstonesTree, RevisionTombstonesByChangeVectorTree,
    ];

    /// <summary>What a database's documents hold when it opens.</summary>
    /// <param name="OrphanAttachmentStreams">Attachment streams waiting to be deleted (cut-off uploads among them).</param>
    public readonly record struct OpenState(string DatabaseId, long LastEtag, bool Migrated, int OrphanAttachmentStreams = 0);

    /// <summary>
    /// Creates the trees of a new database, or checks and migrates those of an existing one, in
    /// <paramref name="transaction"/> (the caller commits it).
    /// </summary>
    /// <exception cref="InvalidDataException">The data was written by a newer schema.</exception>
    public static OpenState Open(WriteTransaction transaction, Func<string> newDatabaseId)
    {
        var meta = transaction.CreateTree(MetaTree);
        var isNew = !meta.TryGet(DatabaseIdKey, out var idBytes);
        string databaseId;
        if (isNew)
        {
            databaseId = newDatabaseId();
            meta.Put(DatabaseIdKey, Encoding.UTF8.GetBytes(databaseId));
        }
        else
        {
            databaseId = Encoding.UTF8.GetString(idBytes);
        }

        var version = meta.TryGet(SchemaVersionKey, out var versionBytes) ? BinaryPrimitives.ReadInt32LittleEndian(versionBytes) : isNew ? SchemaVersion : 1;
        if (version > SchemaVersion)
        {
            throw new InvalidDataException($"The database was written by a newer Jackdaw (documents schema version {version}; this build reads up to {SchemaVersion}).");
        }

        foreach (var name in TreeNames)
        {
            if (name != LegacyTombstonesByIdTree)
            {
                transaction.CreateTree(name);
            }
        }

        var migrated = false;
        if (version < 2)
        {
            MigrateTombstonesToVersion2(transaction);
            migrated = true;
        }
        Span<byte> versionValue = stackalloc byte[sizeof(int)];
        BinaryPrimitives.WriteInt32LittleEndian(versionValue, SchemaVersion);
        if (version != SchemaVersion || isNew)
        {
            meta.Put(SchemaVersionKey, versionValue);
        }

        // 2 → 3 creates the attachment and revision trees (above); 3 → 4 only writes the version;
        // 5 → 6 too (the revision tombstones' trees are created above).
        if (version < 5 && !isNew)
        {
            IndexTombstonesById(transaction);
        }
        if (version < SchemaVersion)
        {
            migrated = true;
        }
        var orphans = AttachmentStreams.OrphanUnfinishedUploads(transaction.CreateTree(AttachmentStagingTree));

        var lastEtag = meta.TryGet(LastEtagKey, out var etag) ? BinaryPrimitives.ReadInt64LittleEndian(etag) : 0;
        return new OpenState(databaseId, lastEtag, migrated, orphans);
    }

    /// <summary>
    /// Gives the database a new id (the suffix of the change vectors it writes from now on): a
    /// database restored from a backup is another database than the one backed up, with a history
    /// of its own from there, and backup chains tell the two apart by it.
    /// </summary>
    public static void ReplaceDatabaseId(WriteTransaction transaction, string databaseId)
    {
        var meta = transaction.OpenTree(MetaTree) ?? throw new InvalidDataException("The database has no documents schema.");
        meta.Put(DatabaseIdKey, Encoding.UTF8.GetBytes(databaseId));
    }

    /// <summary>
    /// What a database's documents hold, read without writing (an environment opened read-only):
    /// the schema must be current already, since a migration would have to write.
    /// </summary>
    /// <exception cref="InvalidDataException">The schema is not this build's, or the database was never initialized.</exception>
    public static OpenState ReadOnly(ReadTransaction transaction)
    {
        var meta = transaction.OpenTree(MetaTree);
        if (meta is null || !meta.TryGet(DatabaseIdKey, out var idBytes))
        {
            throw new InvalidDataException("The database has no documents schema yet and cannot be created read-only.");
        }
        var version = meta.TryGet(SchemaVersionKey, out var versionBytes) ? BinaryPrimitives.ReadInt32LittleEndian(versionBytes) : 1;
        if (version != SchemaVersion)
        {
            throw new InvalidDataException($"The database's documents schema is version {version}; opening it read-only needs version {SchemaVersion} (a migration has to write).");
        }
        return new OpenState(Encoding.UTF8.GetString(idBytes), ReadLastEtag(meta), Migrated: false, (int)(transaction.OpenTree(AttachmentStagingTree)?.Count ?? 0));
    }

    /// <summary>Indexes every existing tombstone by collection and drops the id index of version 1.</summary>
    private static void MigrateTombstonesToVersion2(WriteTransaction transaction)
    {
        var tombstones = transaction.CreateTree(TombstonesTree);
        var byCollection = transaction.CreateTree(TombstonesByCollectionTree);
        var keys = new List<byte[]>();
        using (var iterator = tombstones.Iterate())
        {
            if (iterator.SeekFirst())
            {
                do
                {
                    var record = new TombstoneRecord(StorageKeys.ReadEtag(iterator.Key), iterator.Value);
                    var lower = Encoding.UTF8.GetBytes(Encoding.UTF8.GetString(record.CollectionUtf8).ToLowerInvariant());
                    var key = new byte[1 + lower.Length + StorageKeys.EtagSize];
                    StorageKeys.WriteCollectionEtag(key, lower, record.Etag);
                    keys.Add(key);
                }
                while (iterator.MoveNext());
            }
        }
        foreach (var key in keys)
        {
            byCollection.Put(key, []);
        }
        transaction.DeleteTree(LegacyTombstonesByIdTree);
    }

    /// <summary>Version 5: points each id that has tombstones at its newest one.</summary>
    private static void IndexTombstonesById(WriteTransaction transaction)
    {
        var tombstones = transaction.CreateTree(TombstonesTree);
        var byId = transaction.CreateTree(TombstoneIdsTree);
        var newest = new Dictionary<string, long>(StringComparer.Ordinal);
        using (var iterator = tombstones.Iterate())
        {
            if (iterator.SeekFirst())
            {
                do
                {
                    var record = new TombstoneRecord(StorageKeys.ReadEtag(iterator.Key), iterator.Value);
                    // Etag order: a later tombstone of the same id replaces the earlier one.
                    newest[Encoding.UTF8.GetString(record.IdUtf8).ToLowerInvariant()] = record.Etag;
                }
                while (iterator.MoveNext());
            }
        }
        Span<byte> etagValue = stackalloc byte[StorageKeys.EtagSize];
        foreach (var (id, etag) in newest)
        {
            StorageKeys.WriteEtag(etagValue, etag);
            byId.Put(DocumentIds.GetKey(id), etagValue);
        }
    }

    /// <summary>Writes the last etag into <c>Meta</c>.</summary>
    internal static void WriteLastEtag(Tree meta, long etag)
    {
        Span<byte> value = stackalloc byte[sizeof(long)];
        BinaryPrimitives.WriteInt64LittleEndian(value, etag);
        meta.Put(LastEtagKey, value);
    }

    /// <summary>Reads the last etag from <c>Meta</c>; 0 when nothing was ever written.</summary>
    internal static long ReadLastEtag(Tree? meta) =>
        meta is not null && meta.TryGet(LastEtagKey, out var value) ? BinaryPrimitives.ReadInt64LittleEndian(value) : 0;
}
