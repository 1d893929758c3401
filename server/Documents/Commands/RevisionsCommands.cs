using Jackdaw.Storage.Blittable;

namespace Jackdaw.Server.Documents.Commands;

/// <summary><c>POST /databases/*/admin/revisions/config</c>: replaces the revisions configuration.</summary>
public sealed class ConfigureRevisionsCommand(RevisionsConfiguration configuration) : IMergedCommand<DocumentsTransaction>
{
    /// <summary>The configuration index (RavenDB's <c>RaftCommandIndex</c>).</summary>
    public long Index { get; private set; }

    public void Execute(DocumentsTransaction transaction) => Index = transaction.SetRevisionsConfiguration(configuration);
}

/// <summary><c>POST /databases/*/admin/revisions/conflicts/config</c>: stores the conflict revisions configuration.</summary>
public sealed class ConfigureRevisionsForConflictsCommand(byte[] json) : IMergedCommand<DocumentsTransaction>
{
    public long Index { get; private set; }

    public void Execute(DocumentsTransaction transaction) => Index = transaction.SetRevisionsConflictsConfiguration(json);
}

/// <summary>
/// <c>POST /databases/*/revisions/revert/docs</c> (RavenDB's RevertRevisionsByIdOperation): each
/// document to the revision of its change vector, all in one transaction, all or none.
/// </summary>
public sealed class RevertToRevisionsCommand(IReadOnlyList<KeyValuePair<string, string>> idToChangeVector, JsonOperationContext context) : IMergedCommand<DocumentsTransaction>
{
    /// <summary>How many documents changed (one already at its revision does not).</summary>
    public int Reverted { get; private set; }

    public void Execute(DocumentsTransaction transaction)
    {
        Reverted = 0;
        foreach (var (id, changeVector) in idToChangeVector)
        {
            if (transaction.RevertToRevision(id, changeVector, context))
            {
                Reverted++;
            }
        }
    }
}

/// <summary>
/// One batch of a revert to a point in time (RevertRevisionsOperation): each document back to its
/// state at <paramref name="time"/>, in one merged transaction.
/// </summary>
public sealed class RevertToTimeCommand(IReadOnlyList<string> ids, DateTime time, JsonOperationContext context) : IMergedCommand<DocumentsTransaction>
{
    public int Reverted { get; private set; }

    public void Execute(DocumentsTransaction transaction)
    {
        // The merger may run a command again in a fresh transaction: nothing is kept from a run before.
        Reverted = 0;
        foreach (var id in ids)
        {
            if (transaction.RevertToTime(id, time, context))
            {
                Reverted++;
            }
        }
    }
}
