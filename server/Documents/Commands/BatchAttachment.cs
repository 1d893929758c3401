using Jackdaw.Storage.Blittable;

namespace Jackdaw.Server.Documents.Commands;

/// <summary>The attachment commands of a batch (RavenDB's <c>CommandType</c> names).</summary>
public enum BatchAttachmentKind
{
    Put,
    Delete,
    Move,
    Copy,
}

/// <summary>
/// An attachment command of a <c>bulk_docs</c> batch: <c>AttachmentPUT</c> (its content is the
/// batch's multipart part of the same rank among the PUTs, read into <see cref="Source"/> before the
/// batch runs), <c>AttachmentDELETE</c>, <c>AttachmentMOVE</c> and <c>AttachmentCOPY</c>
/// (<c>DestinationId</c>, <c>DestinationName</c>). It runs in the batch's transaction, all or none.
/// </summary>
public sealed class BatchAttachment(BatchAttachmentKind kind, string name, string? contentType, string? destinationId, string? destinationName)
{
    public BatchAttachmentKind Kind { get; } = kind;

    public string Name { get; } = name;

    public string? ContentType { get; } = contentType;

    public string? DestinationId { get; } = destinationId;

    public string? DestinationName { get; } = destinationName;

    /// <summary>An <c>AttachmentPUT</c>'s content, once its part was read.</summary>
    public AttachmentSource? Source { get; set; }

    internal BatchOperationResult Execute(DocumentsTransaction transaction, string id, string? expectedChangeVector, JsonOperationContext context) => Kind switch
    {
        BatchAttachmentKind.Put => new BatchOperationResult(null, false, Attachment: transaction.PutAttachment(
            id, Name, ContentType, Source ?? throw new InvalidOperationException($"The AttachmentPUT of '{id}', '{Name}' has no content: its multipart part was not read."), expectedChangeVector, context)),
        BatchAttachmentKind.Delete => new BatchOperationResult(null, transaction.DeleteAttachment(id, Name, expectedChangeVector, context)),
        BatchAttachmentKind.Move => new BatchOperationResult(null, false, Attachment: transaction.MoveAttachment(id, Name, DestinationId!, DestinationName!, expectedChangeVector, context)),
        _ => new BatchOperationResult(null, false, Attachment: transaction.CopyAttachment(id, Name, DestinationId!, DestinationName!, expectedChangeVector, context)),
    };

    /// <summary>
    /// After the whole batch ran: each attachment command's documents' change vectors as they are at
    /// its end (a later command of the batch may have stored a document again), as RavenDB answers.
    /// </summary>
    internal static void StampDocumentChangeVectors(DocumentsTransaction transaction, IReadOnlyList<BatchOperation> operations, BatchOperationResult[] results)
    {
        for (var i = 0; i < operations.Count; i++)
        {
            if (operations[i].Attachment is not { } attachment)
            {
                continue;
            }
            var documentId = attachment.Kind == BatchAttachmentKind.Copy ? attachment.DestinationId! : operations[i].Id;
            results[i] = results[i] with
            {
                DocumentChangeVector = CurrentChangeVector(transaction, documentId),
                DestinationDocumentChangeVector = attachment.Kind == BatchAttachmentKind.Move ? CurrentChangeVector(transaction, attachment.DestinationId!) : null,
            };
        }
    }

    private static string? CurrentChangeVector(DocumentsTransaction transaction, string id) =>
        transaction.TryGet(id, out var record) ? record.ChangeVectorOr(transaction.DatabaseId) : null;
}
