using Jackdaw.Client.Attachments;

namespace Jackdaw.Client;

/// <summary>
/// Stores an attachment of a document at once, outside a session (RavenDB's <c>PutAttachmentOperation</c>):
/// <c>PUT attachments</c> with the stream's bytes from its current position, streamed as the request
/// is written. A <paramref name="changeVector"/> makes it fail with <see cref="ConcurrencyException"/>
/// unless the document has it. Answers the attachment's details (the document's new change vector in
/// <see cref="AttachmentDetails.ChangeVector"/>). The stream is not disposed.
/// </summary>
/// <exception cref="DocumentDoesNotExistException">The document does not exist.</exception>
public sealed class PutAttachmentOperation(string documentId, string name, Stream stream, string? contentType = null, string? changeVector = null) : IOperation<AttachmentDetails>
{
    Task<AttachmentDetails> IOperation<AttachmentDetails>.ExecuteAsync(OperationContext context, CancellationToken token) =>
        AttachmentCommands.PutAsync(context.Executor, context.DatabasePath, documentId, name, stream, contentType, changeVector, token);
}
