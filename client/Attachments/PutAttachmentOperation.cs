using Jackdaw.Client.Attachments;

namespace Jackdaw.Client;

/// <summary>
/// Stores an attachment of a document at once, outside a session (RavenDB's <c>PutAttachmentOperation</c>):
/// <c>PUT attachments</c> with the stream's bytes from its current position, streamed as the request
/// is written. A <paramref name="changeVector"/> makes it fail with <see cref="ConcurrencyException"/>
/// unless the attachment exists with that change vector (RavenDB's rule: the attachment's, see
/// <see cref="AttachmentDetails.ChangeVector"/>, not the document's). Answers the stored attachment's
/// details. The stream is not disposed.
/// </summary>
/// <exception cref="DocumentDoesNotExistException">The document does not exist.</exception>
public sealed class PutAttachmentOperation(string documentId, string name, Stream stream, string? contentType = null, string? changeVector = null) : IOperation<AttachmentDetails>
{
    Task<AttachmentDetails> IOperation<AttachmentDetails>.ExecuteAsync(OperationContext context, CancellationToken token) =>
        AttachmentCommands.PutAsync(context.Executor, context.DatabasePath, documentId, name, stream, contentType, changeVector, token);
}
