using System.Buffers.Binary;
using System.Text;

namespace Jackdaw.Server.Documents;

// Revision tombstones (RavenDB's): every removed revision leaves its change vector under a new
// revision etag in RevisionTombstones (indexed by change vector), so that the removal travels in
// the revisions feed, a node that receives it removes the revision too, and a revision whose
// removal is known is never stored again (from a node that had not removed it yet). They go once
// every destination has them (TombstoneCleaner, RemoveRevisionTombstones).
public partial class DocumentsTransaction
{
    /// <summary>Tombstone value: <c>[removed-at ticks: 8 LE][change vector, ASCII]</c>.</summary>
    private const int RevisionTombstoneHeader = sizeof(long);

    /// <summary>Deletes one revision's entries (record, etag, change vector, bin) and records its tombstone; the caller adjusts the count and releases contents.</summary>
    private void DeleteRevisionEntries(byte[] key, byte[] changeVector, bool delete)
    {
        var trees = Revisions;
        Span<byte> etagKey = stackalloc byte[StorageKeys.EtagSize];
        trees.Revisions.Delete(key);
        key.AsSpan(key.Length - StorageKeys.EtagSize).CopyTo(etagKey);
        trees.ByEtag.Delete(etagKey);
        trees.ByChangeVector.Delete(changeVector);
        if (delete)
        {
            trees.Bin.Delete(etagKey);
        }
        PutRevisionTombstone(changeVector, UtcNow().Ticks);
    }

    /// <summary>Records a removed revision's change vector under the next revision etag, unless it is recorded already.</summary>
    private bool PutRevisionTombstone(ReadOnlySpan<byte> changeVector, long removedAtTicks)
    {
        var trees = Revisions;
        if (trees.TombstonesByChangeVector.TryGet(changeVector, out _))
        {
            return false;
        }
        var etag = NextRevisionEtag();
        Span<byte> etagKey = stackalloc byte[StorageKeys.EtagSize];
        StorageKeys.WriteEtag(etagKey, etag);
        var value = trees.Tombstones.Reserve(etagKey, RevisionTombstoneHeader + changeVector.Length);
        BinaryPrimitives.WriteInt64LittleEndian(value, removedAtTicks);
        changeVector.CopyTo(value[RevisionTombstoneHeader..]);
        trees.TombstonesByChangeVector.Put(changeVector, etagKey);
        MarkWritten();
        return true;
    }

    /// <summary>Whether the revision of this change vector was removed here (its tombstone is still kept).</summary>
    private bool HasRevisionTombstone(ReadOnlySpan<byte> changeVector) => Revisions.TombstonesByChangeVector.TryGet(changeVector, out _);

    /// <summary>
    /// A revision removed on another node (replication) or in the database a dump or backup was
    /// taken of (an import's <c>"Type":"Revision"</c> tombstone): the revision of that change vector
    /// goes here too (releasing the contents it held), and its tombstone is recorded here under a new
    /// revision etag (so it goes on in this node's feed, and a copy of the revision that arrives later
    /// is not stored). Returns false when this node knew the removal already.
    /// </summary>
    public bool ApplyReplicatedRevisionTombstone(string changeVector, long removedAtTicks)
    {
        var changeVectorBytes = Encoding.ASCII.GetBytes(changeVector);
        if (HasRevisionTombstone(changeVectorBytes))
        {
            return false;
        }
        var trees = Revisions;
        if (trees.ByChangeVector.TryGet(changeVectorBytes, out var found))
        {
            var key = found.ToArray();
            if (trees.Revisions.TryGet(key, out var value))
            {
                var revision = new RevisionRecord(value);
                var documentKey = DocumentIds.GetKey(revision.Id);
                var delete = revision.IsDeleteRevision;
                var held = new List<byte[]>();
                if (revision.HoldsAttachmentReferences)
                {
                    AddRevisionAttachmentHashes(revision.Document, held);
                }
                trees.Revisions.Delete(key);
                Span<byte> etagKey = stackalloc byte[StorageKeys.EtagSize];
                key.AsSpan(key.Length - StorageKeys.EtagSize).CopyTo(etagKey);
                trees.ByEtag.Delete(etagKey);
                trees.ByChangeVector.Delete(changeVectorBytes);
                if (delete)
                {
                    trees.Bin.Delete(etagKey);
                }
                AdjustRevisionCount(documentKey, -1);
                ReleaseContents(held);
            }
        }
        PutRevisionTombstone(changeVectorBytes, removedAtTicks);
        return true;
    }

    /// <summary>
    /// Removes the revision tombstones at or below <paramref name="upToEtag"/> (those every
    /// destination has), oldest first, at most <paramref name="max"/>; returns how many.
    /// </summary>
    public int RemoveRevisionTombstones(long upToEtag, int max)
    {
        var tombstones = EngineTransaction.CreateTree(DocumentsStorage.RevisionTombstonesTree);
        var victims = new List<(byte[] Key, byte[] ChangeVector)>();
        using (var iterator = tombstones.Iterate())
        {
            if (iterator.SeekFirst())
            {
                do
                {
                    if (StorageKeys.ReadEtag(iterator.Key) > upToEtag)
                    {
                        break;
                    }
                    victims.Add((iterator.Key.ToArray(), iterator.Value[RevisionTombstoneHeader..].ToArray()));
                }
                while (victims.Count < max && iterator.MoveNext());
            }
        }
        if (victims.Count == 0)
        {
            return 0;
        }
        var byChangeVector = EngineTransaction.CreateTree(DocumentsStorage.RevisionTombstonesByChangeVectorTree);
        foreach (var (key, changeVector) in victims)
        {
            tombstones.Delete(key);
            byChangeVector.Delete(changeVector);
        }
        MarkWritten();
        return victims.Count;
    }
}
