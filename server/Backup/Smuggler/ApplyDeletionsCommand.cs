using Jackdaw.Server.Documents;

namespace Jackdaw.Server.Backup.Smuggler;

/// <summary>
/// The tombstones of a dump, applied in one transaction (see <see cref="DocumentsTransaction.ApplyDeletion"/>):
/// a document written after <paramref name="keepAfterEtag"/> (the database's last etag when the import
/// began, so by the import itself or since) is newer than the deletion and stays.
/// </summary>
internal sealed class ApplyDeletionsCommand(IReadOnlyList<(string Id, string? Collection)> deletions, long keepAfterEtag) : IMergedCommand<DocumentsTransaction>
{
    /// <summary>How many documents were deleted (the rest were recorded as tombstones alone).</summary>
    public int Deleted { get; private set; }

    public void Execute(DocumentsTransaction transaction)
    {
        Deleted = 0;
        foreach (var (id, collection) in deletions)
        {
            if (transaction.ApplyDeletion(id, collection, keepAfterEtag))
            {
                Deleted++;
            }
        }
    }
}
