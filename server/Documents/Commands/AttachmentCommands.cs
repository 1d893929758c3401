using Jackdaw.Storage.Blittable;

namespace Jackdaw.Server.Documents.Commands;

/// <summary><c>PUT /databases/*/attachments</c>: links an uploaded content to a document's attachment.</summary>
public sealed class PutAttachmentCommand(string documentId, string name, string? contentType, AttachmentSource source, string? expectedChangeVector, JsonOperationContext context) : IMergedCommand<DocumentsTransaction>
{
    public AttachmentPutResult Result { get; private set; }

    public long EstimatedBytes => source.IsStaged ? 0 : source.Size;

    public void Execute(DocumentsTransaction transaction) =>
        Result = transaction.PutAttachment(documentId, name, contentType, source, expectedChangeVector, context);
}

/// <summary><c>DELETE /databases/*/attachments</c>: one attachment of a document.</summary>
public sealed class DeleteAttachmentCommand(string documentId, string name, string? expectedChangeVector, JsonOperationContext context) : IMergedCommand<DocumentsTransaction>
{
    public bool Deleted { get; private set; }

    public void Execute(DocumentsTransaction transaction) =>
        Deleted = transaction.DeleteAttachment(documentId, name, expectedChangeVector, context);
}
