using System.Text;
using Jackdaw.Server.Databases;
using Jackdaw.Server.Documents;
using Jackdaw.Storage.Blittable;

namespace Jackdaw.Server.Replication;

/// <summary>
/// Applies one batch from a source in one merged transaction, with the source's new position.
/// Per item, its change vector against this node's version of the id (the document, else the
/// id's newest tombstone):
/// <list type="bullet">
/// <item>none here, or the incoming one is newer: stored as it came (its change vector and time; a
/// new local etag, so it goes on in this node's own feed);</item>
/// <item>equal or older (already merged here): skipped, which is what stops a write echoing round
/// the nodes;</item>
/// <item>concurrent: a conflict, resolved by <see cref="ConflictSolver"/> (the latest write wins,
/// stored with the merge of both change vectors), or kept for the user (see
/// <see cref="ConflictPolicy"/>).</item>
/// </list>
/// Items at or before the stored position were applied already (a sender that resent them) and
/// are skipped, so the command is idempotent.
/// </summary>
/// <remarks>
/// A document is stored with its attachments exactly as its source had them, linking the contents
/// the batch carried (<paramref name="contents"/>, staged before) or stored here already; one
/// neither carried nor stored refuses the batch (<see cref="MissingAttachmentsException"/>), unless
/// the batch carries every content its source has. Revisions follow the documents, each stored as
/// it came unless one of its change vector is here or was removed here (then this node's policy for
/// the document applies), and revision tombstones among them in revision-etag order, each removing
/// the revision of its change vector; a version stored as it came makes no revision here (its
/// source's comes in the feed), a conflict's resolution does.
/// </remarks>
public sealed class ApplyReplicationBatchCommand(string sourceDatabaseId, ReplicationBatch batch, ConflictPolicy policy, JsonOperationContext context,
    IReadOnlyDictionary<string, AttachmentSource>? contents = null)
    : IMergedCommand<DatabaseTransaction>
{
    private readonly IReadOnlyDictionary<string, AttachmentSource> _contents = contents ?? new Dictionary<string, AttachmentSource>();

    public long Position { get; private set; }

    /// <summary>The source's revision etag this node holds everything up to once the batch is applied.</summary>
    public long RevisionPosition { get; private set; }

    public long Applied { get; private set; }

    public long AlreadyMerged { get; private set; }

    public long Repeated { get; private set; }

    public long Conflicts { get; private set; }

    public long EstimatedBytes => batch.Items.Sum(i => (long)i.Document.Length) + batch.Revisions.Sum(r => (long)r.Document.Length);

    public void Execute(DatabaseTransaction transaction)
    {
        Applied = AlreadyMerged = Repeated = Conflicts = 0;
        var position = ReplicationPositions.Read(transaction, sourceDatabaseId);
        foreach (var item in batch.Items)
        {
            if (item.Etag <= position)
            {
                Repeated++;
                continue;
            }
            Apply(transaction, item);
        }
        Position = Math.Max(position, batch.LastEtag);
        if (Position != position)
        {
            ReplicationPositions.Write(transaction, sourceDatabaseId, Position);
        }
        ApplyRevisions(transaction);
        foreach (var source in _contents.Values)
        {
            // A staged content no item linked (its version was older here, or lost a conflict).
            if (source.IsStaged)
            {
                transaction.AbandonAttachmentStream(source.StagedStreamId);
            }
        }
    }

    private void ApplyRevisions(DatabaseTransaction transaction)
    {
        if (batch.Revisions.Count == 0 && batch.LastRevisionEtag == 0)
        {
            // A source without revisions (its batches never move past its Hello's position, 0 here).
            return;
        }
        var position = ReplicationPositions.ReadRevisions(transaction, sourceDatabaseId);
        var extraReferences = new List<byte[]>();
        // Revisions and revision tombstones share the source's revision etags: applied in that order.
        var tombstones = batch.RevisionTombstones;
        var nextTombstone = 0;
        foreach (var revision in batch.Revisions)
        {
            for (; nextTombstone < tombstones.Count && tombstones[nextTombstone].Etag < revision.Etag; nextTombstone++)
            {
                ApplyRevisionTombstone(transaction, tombstones[nextTombstone], position);
            }
            if (revision.Etag <= position)
            {
                Repeated++;
                continue;
            }
            RequireContentsOf(transaction, revision);
            if (transaction.PutReplicatedRevision(revision.Id, revision.Collection, revision.ChangeVector, revision.LastModifiedTicks, revision.Flags, revision.Document, _contents, extraReferences))
            {
                Applied++;
            }
            else
            {
                AlreadyMerged++;
            }
        }
        for (; nextTombstone < tombstones.Count; nextTombstone++)
        {
            ApplyRevisionTombstone(transaction, tombstones[nextTombstone], position);
        }
        transaction.ReleaseReplicatedContents(extraReferences);
        RevisionPosition = Math.Max(position, batch.LastRevisionEtag);
        if (RevisionPosition != position)
        {
            ReplicationPositions.WriteRevisions(transaction, sourceDatabaseId, RevisionPosition);
        }
    }

    /// <summary>A revision the source removed: removed here too, its tombstone kept (so a copy that comes later from another node is not stored).</summary>
    private void ApplyRevisionTombstone(DatabaseTransaction transaction, RevisionTombstone tombstone, long position)
    {
        if (tombstone.Etag <= position)
        {
            Repeated++;
            return;
        }
        if (transaction.ApplyReplicatedRevisionTombstone(tombstone.ChangeVector, tombstone.RemovedAtTicks))
        {
            Applied++;
        }
        else
        {
            AlreadyMerged++;
        }
    }

    private void Apply(DatabaseTransaction transaction, ReplicationItem item)
    {
        string? localChangeVector = null;
        long localTicks = 0;
        var localExists = false;
        if (transaction.TryGet(item.Id, out var record))
        {
            localChangeVector = record.ChangeVectorOr(transaction.DatabaseId);
            localTicks = record.LastModifiedTicks;
            localExists = true;
        }
        else if (transaction.TryGetTombstone(item.Id, out var tombstoneChangeVector, out var deletedAt))
        {
            localChangeVector = tombstoneChangeVector;
            localTicks = deletedAt;
        }

        if (policy == ConflictPolicy.Keep && transaction.GetConflicts(item.Id) is { Count: > 0 } kept)
        {
            // Already in conflict: compared with every kept version at once.
            var all = kept.Aggregate((string?)null, (merged, version) => ChangeVectors.Merge(merged, version.ChangeVector))!;
            switch (ChangeVectors.Compare(item.ChangeVector, all))
            {
                case ChangeVectorOrder.Newer:
                    Store(transaction, item, item.ChangeVector);
                    transaction.ClearConflicts(item.Id);
                    return;
                case ChangeVectorOrder.Conflict when !kept.Any(k => k.ChangeVector == item.ChangeVector):
                    Conflicts++;
                    transaction.AddConflict(item.Id, item.Collection, item.ChangeVector, item.LastModifiedTicks, item.IsTombstone ? null : item.Document,
                        null, 0, null, null);
                    Applied++;
                    return;
                default:
                    AlreadyMerged++;
                    return;
            }
        }

        if (localChangeVector is null)
        {
            Store(transaction, item, item.ChangeVector);
            return;
        }
        switch (ChangeVectors.Compare(item.ChangeVector, localChangeVector))
        {
            case ChangeVectorOrder.Equal:
            case ChangeVectorOrder.Older:
                AlreadyMerged++;
                return;
            case ChangeVectorOrder.Newer:
                Store(transaction, item, item.ChangeVector);
                return;
        }

        Conflicts++;
        // Only a conflict needs the local version's body (copied: the record's span dies with the
        // next change); an item already merged, or newer, never copies it.
        byte[]? localDocument = null;
        string? localCollection = null;
        if (localExists && transaction.TryGet(item.Id, out record))
        {
            localDocument = record.Document.ToArray();
            localCollection = record.CollectionUtf8.IsEmpty ? null : Encoding.UTF8.GetString(record.CollectionUtf8);
        }
        var merged = ChangeVectors.Merge(localChangeVector, item.ChangeVector);
        if (policy == ConflictPolicy.Keep)
        {
            transaction.AddConflict(item.Id, item.Collection, item.ChangeVector, item.LastModifiedTicks, item.IsTombstone ? null : item.Document,
                localChangeVector, localTicks, localDocument, localCollection);
            Applied++;
            return;
        }
        // A resolution is a version made here (every node that resolves makes the same one): revisioned here.
        if (ConflictSolver.IncomingWins(item.LastModifiedTicks, item.Document, item.IsTombstone, localTicks, localDocument, localDocument is null))
        {
            Store(transaction, item, merged, revisionsFromSource: false);
            return;
        }
        // This node's version wins: stored again with the merged change vector (and its own time,
        // and its attachments: Attachments null keeps them), which the other nodes reach by
        // resolving the same way or skip as already merged.
        var local = new ReplicationItem(item.Etag, localDocument is null, item.Id, localCollection ?? item.Collection, localChangeVector, localTicks, localDocument ?? []);
        Store(transaction, local, merged, revisionsFromSource: false);
    }

    private void Store(DatabaseTransaction transaction, ReplicationItem item, string changeVector, bool revisionsFromSource = true)
    {
        if (item.IsTombstone)
        {
            transaction.DeleteReplicated(item.Id, item.Collection, changeVector, item.LastModifiedTicks, revisionsFromSource);
        }
        else
        {
            transaction.PutReplicated(item.Id, item.Document, item.Collection, changeVector, item.LastModifiedTicks, AttachmentsOf(transaction, item), revisionsFromSource, context);
        }
        Applied++;
    }

    /// <summary>The contents an incoming version's attachments link: carried by the batch, or stored here.</summary>
    /// <summary>
    /// A revision listing a content that is neither stored here nor carried refuses the batch, as a
    /// document's does: the sender then sends every content (it left this one out, having sent it
    /// on this connection before, and this node released it since).
    /// </summary>
    private void RequireContentsOf(DatabaseTransaction transaction, ReplicatedRevision revision)
    {
        if (batch.CarriesAllContents)
        {
            return;
        }
        foreach (var listed in AttachmentsMetadata.Read(revision.Document))
        {
            if (!_contents.ContainsKey(listed.Hash) && !transaction.HasAttachmentContent(Convert.FromBase64String(listed.Hash)))
            {
                throw new MissingAttachmentsException($"Attachment '{listed.Name}' of a revision of document '{revision.Id}' has content {listed.Hash}, which this node does not store and the batch did not carry.");
            }
        }
    }

    private List<ReplicatedAttachment>? AttachmentsOf(DatabaseTransaction transaction, ReplicationItem item)
    {
        if (item.Attachments is null)
        {
            return null;
        }
        var attachments = new List<ReplicatedAttachment>(item.Attachments.Count);
        foreach (var attachment in item.Attachments)
        {
            if (_contents.TryGetValue(attachment.Hash, out var source))
            {
                attachments.Add(new ReplicatedAttachment(attachment.Name, attachment.ContentType, source));
                continue;
            }
            var hash = Convert.FromBase64String(attachment.Hash);
            if (transaction.HasAttachmentContent(hash))
            {
                attachments.Add(new ReplicatedAttachment(attachment.Name, attachment.ContentType, AttachmentSource.FromStored(hash, attachment.Size)));
                continue;
            }
            if (!batch.CarriesAllContents)
            {
                throw new MissingAttachmentsException($"Attachment '{attachment.Name}' of document '{item.Id}' has content {attachment.Hash}, which this node does not store and the batch did not carry.");
            }
            // The source does not hold it either: nothing can be linked.
        }
        return attachments;
    }
}
