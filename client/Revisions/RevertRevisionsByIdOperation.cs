using Jackdaw.Client.Revisions;

namespace Jackdaw.Client;

/// <summary>
/// Writes documents back as given revisions of them (<c>POST /databases/{db}/revisions/revert/docs</c>
/// with <c>{"IdToChangeVector":{id: change vector}}</c>, RavenDB's <c>RevertRevisionsByIdOperation</c>):
/// <c>await store.Operations.SendAsync(new RevertRevisionsByIdOperation("orders/1", changeVector))</c>.
/// A deleted document comes back. The server refuses a change vector that is not a revision of that document.
/// </summary>
public sealed class RevertRevisionsByIdOperation : IOperation
{
    private readonly Dictionary<string, string> _idToChangeVector;

    public RevertRevisionsByIdOperation(string id, string changeVector)
        : this(new Dictionary<string, string> { [id ?? throw new ArgumentNullException(nameof(id))] = changeVector })
    {
    }

    public RevertRevisionsByIdOperation(Dictionary<string, string> idToChangeVector)
    {
        ArgumentNullException.ThrowIfNull(idToChangeVector);
        if (idToChangeVector.Count == 0)
        {
            throw new ArgumentException("Name at least one document and the change vector of the revision to revert it to.", nameof(idToChangeVector));
        }

        foreach (var (id, changeVector) in idToChangeVector)
        {
            if (string.IsNullOrWhiteSpace(id) || string.IsNullOrWhiteSpace(changeVector))
            {
                throw new ArgumentException($"Document '{id}' is given the change vector '{changeVector}': both must be non-empty.", nameof(idToChangeVector));
            }
        }

        _idToChangeVector = new Dictionary<string, string>(idToChangeVector, StringComparer.OrdinalIgnoreCase);
    }

    async Task IOperation.ExecuteAsync(OperationContext context, CancellationToken token)
    {
        using var answer = await RevisionsWire.PostAsync(context, "/revisions/revert/docs", new Dictionary<string, object> { ["IdToChangeVector"] = _idToChangeVector }, token).ConfigureAwait(false);
    }
}
