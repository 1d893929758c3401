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
/// <param name="stream">
/// For the batches of one <c>bulk_insert</c> stream, several of which may be queued at once: once one
/// fails, the later ones fail too instead of committing after the gap.
/// </param>
public sealed class BatchCommand(IReadOnlyList<BatchOperation> operations, JsonOperationContext context, BatchStream? stream = null) : IMergedCommand<DocumentsTransaction>
{
    private readonly BatchOperationResult[] _results = new BatchOperationResult[operations.Count];

    public IReadOnlyList<BatchOperationResult> Results => _results;

    public long EstimatedBytes { get; } = operations.Sum(o => (long)(o.Put?.Document.Length ?? 0));

    public void Execute(DocumentsTransaction transaction)
    {
        if (stream is { Failed: true })
            throw new InvalidOperationException("An earlier batch of this stream failed; nothing after it is committed.");
        try
        {
            for (var i = 0; i < operations.Count; i++)
            {
                var operation = operations[i];
                _results[i] = operation.Put is { } put
                    ? new BatchOperationResult(transaction.Put(put.Id, put.Document.Span, put.Collection, put.ExpectedChangeVector, context), false)
                    : new BatchOperationResult(null, transaction.Delete(operation.Id, operation.ExpectedChangeVector));
            }
        }
        catch when (stream is not null)
        {
            stream.Failed = true;
            throw;
        }
    }
}

/// <summary>Shared by the batches of one stream; only the merger's thread writes it.</summary>
public sealed class BatchStream
{
    private volatile bool _failed;

    public bool Failed { get => _failed; set => _failed = value; }
}
