using Jackdaw.Server.Documents;
using Jackdaw.Storage.Blittable;

namespace Jackdaw.Server.Patching;

/// <summary>
/// One batch of a patch or delete by query: its documents, patched (or deleted) in one merged
/// transaction, all or none. A document deleted since the query found it is passed over. Every
/// document of the batch is patched in one engine, whose compiled script is reused.
/// </summary>
internal sealed class QueryBatchCommand(IReadOnlyList<string> ids, DocumentPatch? patch, JsonOperationContext context, bool keepDetails) : IMergedCommand<DocumentsTransaction>
{
    private readonly List<(string Id, string? ChangeVector, string Status, long Etag)> _details = [];

    /// <summary>Documents patched or deleted (those that still existed).</summary>
    public int Processed { get; private set; }

    public IReadOnlyList<(string Id, string? ChangeVector, string Status, long Etag)> Details => _details;

    public void Execute(DocumentsTransaction transaction)
    {
        // The merger may run a command again in a fresh transaction: nothing is kept from a run before.
        Processed = 0;
        _details.Clear();
        if (patch is null)
        {
            Delete(transaction);
            return;
        }

        var engine = PatchEngine.Rent();
        try
        {
            foreach (var id in ids)
            {
                var outcome = patch.Apply(engine, transaction, id, null, context, returnDocument: false);
                if (outcome.Status == "DocumentDoesNotExist")
                {
                    continue;
                }
                Processed++;
                if (keepDetails)
                {
                    _details.Add((id, outcome.Put?.ChangeVector, outcome.Status, outcome.Put?.Etag ?? 0));
                }
            }
        }
        finally
        {
            PatchEngine.Return(engine);
        }
    }

    private void Delete(DocumentsTransaction transaction)
    {
        foreach (var id in ids)
        {
            if (!transaction.TryGet(id, out var record))
            {
                continue;
            }
            var etag = record.Etag;
            transaction.Delete(id, null);
            Processed++;
            if (keepDetails)
            {
                _details.Add((id, null, "Deleted", etag));
            }
        }
    }
}
