using Jackdaw.Client.Attachments;

namespace Jackdaw.Client;

/// <summary>
/// Reads an attachment outside a session (RavenDB's <c>GetAttachmentOperation</c>): a document's
/// (<see cref="AttachmentType.Document"/>), or the one a revision kept (<see cref="AttachmentType.Revision"/>,
/// named by the revision's <paramref name="changeVector"/>). Answers an <see cref="AttachmentResult"/>
/// streaming the bytes (dispose it), or null when the document or the attachment does not exist.
/// </summary>
public sealed class GetAttachmentOperation(string documentId, string name, AttachmentType type, string? changeVector) : IOperation<AttachmentResult?>
{
    Task<AttachmentResult?> IOperation<AttachmentResult?>.ExecuteAsync(OperationContext context, CancellationToken token) =>
        AttachmentCommands.GetAsync(context.Executor, context.DatabasePath, documentId, name, type, changeVector, null, null, token);
}
