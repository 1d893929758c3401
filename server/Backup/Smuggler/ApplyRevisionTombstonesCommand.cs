using Jackdaw.Server.Documents;

namespace Jackdaw.Server.Backup.Smuggler;

/// <summary>
/// A dump's revision tombstones (<c>"Type":"Revision"</c>), applied in one transaction as replication
/// applies them (<see cref="DocumentsTransaction.ApplyReplicatedRevisionTombstone"/>): the revision of
/// each change vector is removed when stored, and its tombstone recorded, so a revision the source
/// removed is removed here too and never stored again by a later import.
/// </summary>
internal sealed class ApplyRevisionTombstonesCommand(IReadOnlyList<(string ChangeVector, long RemovedAtTicks)> tombstones) : IMergedCommand<DocumentsTransaction>
{
    /// <summary>How many were new here (the others were known already).</summary>
    public int Applied { get; private set; }

    public void Execute(DocumentsTransaction transaction)
    {
        Applied = 0;
        foreach (var (changeVector, removedAtTicks) in tombstones)
        {
            if (transaction.ApplyReplicatedRevisionTombstone(changeVector, removedAtTicks))
            {
                Applied++;
            }
        }
    }
}
