using System.Text;
using Jackdaw.Storage.Blittable;

namespace Jackdaw.Server.Documents;

// Replication's writes: a version made elsewhere with its attachments, a revision made elsewhere.
public partial class DocumentsTransaction
{
    /// <summary>
    /// Set while a replicated version is stored: its attachments list is the one its entries were
    /// just set to (even for a new document), its <c>HasRevisions</c> flag is kept as it came, and
    /// no revision of it is made here when <see cref="_replicatedRevisionsFromSource"/> is set.
    /// </summary>
    private bool _replicatedPut;

    /// <summary>Set while a replicated version is stored whose revisions come from its source, not from this node.</summary>
    private bool _replicatedRevisionsFromSource;

    /// <summary>
    /// Stores a version written elsewhere (replication) with its attachments exactly as its source
    /// had them. <paramref name="attachments"/> null keeps this node's entries (this node's own
    /// version stored again, after it won a conflict); otherwise the document's entries become these
    /// (each content gets its reference before the old entries release theirs, so one both hold never
    /// drops to 0). With <paramref name="revisionsFromSource"/> no revision is made here: the
    /// source's revision of this version travels in the feed (a version made here, a conflict's
    /// resolution, is revisioned as a local put is).
    /// </summary>
    public PutResult PutReplicated(string id, ReadOnlySpan<byte> document, string? collection, string changeVector, long lastModifiedTicks,
        IReadOnlyList<ReplicatedAttachment>? attachments, bool revisionsFromSource, JsonOperationContext context)
    {
        if (attachments is not null)
        {
            SetReplicatedAttachments(DocumentIds.GetKey(id), attachments);
        }
        _replicatedPut = true;
        _replicatedRevisionsFromSource = revisionsFromSource;
        try
        {
            return PutReplicated(id, document, collection, changeVector, lastModifiedTicks, context);
        }
        finally
        {
            _replicatedPut = false;
            _replicatedRevisionsFromSource = false;
        }
    }

    /// <summary>
    /// A deletion made elsewhere; with <paramref name="revisionsFromSource"/> its delete revision is
    /// not made here (it comes from the source; when it came already, the document goes to the bin).
    /// </summary>
    public bool DeleteReplicated(string id, string? collection, string changeVector, long deletedAtTicks, bool revisionsFromSource)
    {
        _replicatedRevisionsFromSource = revisionsFromSource;
        try
        {
            return DeleteReplicated(id, collection, changeVector, deletedAtTicks);
        }
        finally
        {
            _replicatedRevisionsFromSource = false;
        }
    }

    /// <summary>Whether a content (SHA-256) is stored, as this transaction sees it.</summary>
    public bool HasAttachmentContent(ReadOnlySpan<byte> hash) => AttachmentContents.TryGet(hash, out _);

    /// <summary>
    /// Stores a revision made elsewhere (replication) as it came, unless one of its change vector is
    /// here already or was removed here (its tombstone is kept), then applies this node's policy to
    /// the document's revisions (which may remove it again, leaving a tombstone). Contents it lists that <paramref name="contents"/> carries (by base64 hash) and
    /// that are not stored are stored first, so the revision holds its references; they get one
    /// extra reference each, listed in <paramref name="extraReferences"/>, which the caller releases
    /// once every item of its batch is applied (<see cref="ReleaseContents"/>), so a content two
    /// revisions of the batch list is not made an orphan between them. Returns whether it was stored.
    /// </summary>
    public bool PutReplicatedRevision(string id, string? collection, string changeVector, long lastModifiedTicks, DocumentFlags flags, ReadOnlySpan<byte> document,
        IReadOnlyDictionary<string, AttachmentSource> contents, List<byte[]> extraReferences)
    {
        if (HasRevisionTombstone(Encoding.ASCII.GetBytes(changeVector)))
        {
            // Removed here (or on a node whose removal came first): never stored again.
            return false;
        }
        foreach (var listed in AttachmentsMetadata.Read(document))
        {
            var hash = Convert.FromBase64String(listed.Hash);
            if (!AttachmentContents.TryGet(hash, out _) && contents.TryGetValue(listed.Hash, out var source))
            {
                AcquireContent(source);
                extraReferences.Add(hash);
            }
        }
        if (!PutRevision(id, collection, changeVector, new DateTime(lastModifiedTicks, DateTimeKind.Utc), flags, document))
        {
            return false;
        }
        // This node's policy for the document, as a local put applies it: with the same configuration
        // everywhere (the cluster's record), every node keeps the same revisions.
        EnforcePolicy(DocumentIds.GetKey(id), _revisionsConfiguration.For(collection));
        return true;
    }

    /// <summary>Releases one reference per hash (the extra ones <see cref="PutReplicatedRevision"/> took).</summary>
    public void ReleaseReplicatedContents(List<byte[]> hashes) => ReleaseContents(hashes);

    /// <summary>Sets a document's attachment entries to <paramref name="attachments"/>, under the etag the put takes next.</summary>
    private void SetReplicatedAttachments(byte[] documentKey, IReadOnlyList<ReplicatedAttachment> attachments)
    {
        foreach (var attachment in attachments)
        {
            AcquireContent(attachment.Source);
        }
        RemoveAttachmentsOf(documentKey);
        var etag = LastEtag + 1;
        foreach (var attachment in attachments)
        {
            var key = EntryKey(documentKey, attachment.Name);
            if (ReadEntry(key) is { } duplicate)
            {
                // Two entries of one name (any casing) cannot come from a source; the last one stays.
                ReleaseContent(duplicate.Hash);
            }
            AttachmentsTree.Put(key, AttachmentEntry.Create(attachment.Source.Hash, attachment.Source.Size, etag, attachment.Name, attachment.ContentType));
        }
        MarkWritten();
    }

    /// <summary>The server flags a replicated body came with that this node cannot decide alone: <c>HasRevisions</c> (its revisions may still be on their way).</summary>
    private static DocumentFlags ReplicatedRevisionFlag(ReadOnlySpan<byte> document) =>
        RevisionFlagsText.Read(document) is { } flags && flags.Contains(nameof(DocumentFlags.HasRevisions), StringComparison.Ordinal)
            ? DocumentFlags.HasRevisions
            : DocumentFlags.None;

    /// <summary>A replicated deletion whose delete revision came already: the document goes to the bin.</summary>
    private void BinReplicatedDeleteRevision(ReadOnlySpan<byte> documentKey, string tombstoneChangeVector)
    {
        var changeVector = Encoding.ASCII.GetBytes(tombstoneChangeVector);
        if (!Revisions.ByChangeVector.TryGet(changeVector, out var revisionKey))
        {
            return;
        }
        var key = revisionKey.ToArray();
        if (!Revisions.Revisions.TryGet(key, out var value) || !new RevisionRecord(value).IsDeleteRevision)
        {
            return;
        }
        Revisions.Bin.Put(key.AsSpan(key.Length - StorageKeys.EtagSize), documentKey);
        MarkWritten();
    }
}
