namespace Jackdaw.Server.Documents;

/// <summary>
/// What storing (or moving, or copying) an attachment did: RavenDB's <c>AttachmentDetails</c>, plus
/// the change vector the document got when it was stored again with its list of attachments.
/// </summary>
/// <param name="DocumentId">The document's id as stored.</param>
/// <param name="ChangeVector">The attachment's change vector.</param>
/// <param name="DocumentChangeVector">The document's new change vector (the same etag, right after the put).</param>
public readonly record struct AttachmentPutResult(string DocumentId, string Name, string ContentType, string Hash, long Size, string ChangeVector, string DocumentChangeVector);
