using Jackdaw.Storage.Blittable;

namespace Jackdaw.Server.Documents.Commands;

/// <summary>A document parsed from a request, ready to be stored.</summary>
/// <param name="Id">The id as given (may end in <c>/</c> or <c>|</c>).</param>
/// <param name="Document">Disk-mode blittable, owned by the request's context.</param>
/// <param name="Collection">From <c>@metadata.@collection</c>; null when none.</param>
/// <param name="ExpectedChangeVector">Optimistic concurrency: null, or the change vector the stored document must have.</param>
public sealed record DocumentToPut(string Id, BlittableDocument Document, string? Collection, string? ExpectedChangeVector);

/// <summary><c>PUT /databases/*/docs</c>: one document.</summary>
public sealed class PutDocumentCommand(DocumentToPut document, JsonOperationContext context) : IMergedCommand<DocumentsTransaction>
{
    public PutResult Result { get; private set; }

    public long EstimatedBytes => document.Document.Length;

    public void Execute(DocumentsTransaction transaction) =>
        Result = transaction.Put(document.Id, document.Document.Span, document.Collection, document.ExpectedChangeVector, context);
}

/// <summary><c>DELETE /databases/*/docs</c>: one document.</summary>
public sealed class DeleteDocumentCommand(string id, string? expectedChangeVector) : IMergedCommand<DocumentsTransaction>
{
    public bool Deleted { get; private set; }

    public void Execute(DocumentsTransaction transaction) => Deleted = transaction.Delete(id, expectedChangeVector);
}
