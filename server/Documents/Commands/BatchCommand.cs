using Jackdaw.Storage.Blittable;

namespace Jackdaw.Server.Documents.Commands;

/// <summary>One command of a batch: a PUT (with <see cref="Put"/>) or a DELETE.</summary>
public sealed record BatchOperation(string Id, DocumentToPut? Put, string? ExpectedChangeVector)
{
    public bool IsDelete => Put is null;
}

/// <summary>What one command of a batch did.</summary>
public readonly record struct BatchOperationResult(PutResult? Put, bool Deleted);

/// <summary>
/// <c>POST /databases/*/bulk_docs</c> and each batch of <c>bulk_insert</c>: every operation in the
/// same transaction, all or none. One failing operation (a concurrency conflict, say) throws, which
/// fails this request only; the merger retries the other requests of the transaction without it.
/// </summary>
public sealed class BatchCommand(IReadOnlyList<BatchOperation> operations, JsonOperationContext context) : IMergedCommand<DocumentsTransaction>
{
    private readonly BatchOperationResult[] _results = new BatchOperationResult[operations.Count];

    public IReadOnlyList<BatchOperationResult> Results => _results;

    public long EstimatedBytes { get; } = operations.Sum(o => (long)(o.Put?.Document.Length ?? 0));

    public void Execute(DocumentsTransaction transaction)
    {
        for (var i = 0; i < operations.Count; i++)
        {
            var operation = operations[i];
            _results[i] = operation.Put is { } put
                ? new BatchOperationResult(transaction.Put(put.Id, put.Document.Span, put.Collection, put.ExpectedChangeVector, context), false)
                : new BatchOperationResult(null, transaction.Delete(operation.Id, operation.ExpectedChangeVector));
        }
    }
}
