using Jackdaw.Client.Attachments;

namespace Jackdaw.Client;

/// <summary>
/// Deletes an attachment at once, outside a session (RavenDB's <c>DeleteAttachmentOperation</c>).
/// A <paramref name="changeVector"/> makes it fail with <see cref="ConcurrencyException"/> unless the
/// attachment has it (<see cref="AttachmentDetails.ChangeVector"/>). An attachment that is not there is not an error.
/// </summary>
public sealed class DeleteAttachmentOperation(string documentId, string name, string? changeVector = null) : IOperation
{
    Task IOperation.ExecuteAsync(OperationContext context, CancellationToken token) =>
        AttachmentCommands.DeleteAsync(context.Executor, context.DatabasePath, documentId, name, changeVector, token);
}
