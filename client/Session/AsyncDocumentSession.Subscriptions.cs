namespace Jackdaw.Client.Session;

/// <summary>A subscription batch's session: the batch's documents, received already, answer loads without a request.</summary>
internal sealed partial class AsyncDocumentSession
{
    /// <summary>
    /// Keeps a document received outside the session (a subscription batch) as a query's include is
    /// kept: the first load of <paramref name="id"/> tracks it from these bytes, with no request.
    /// </summary>
    internal void RegisterReceivedDocument(string id, ReadOnlyMemory<byte> document)
    {
        if (_byId.ContainsKey(id) || _deletes.ContainsKey(id))
        {
            return;
        }

        _included[id] = document;
        _knownMissing.Remove(id);
    }
}
