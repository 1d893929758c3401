namespace Jackdaw.Server.Documents;

/// <summary>Whether a change stored a document or deleted it.</summary>
public enum DocumentChangeKind : byte
{
    Put,
    Delete,
}

/// <summary>One change of a committed transaction: the etag it took, the document and what happened to it.</summary>
/// <param name="Etag">The etag of this version (or of the tombstone).</param>
/// <param name="Id">The id as stored (the casing first written).</param>
/// <param name="Collection">The collection, as written; null when the document has none.</param>
/// <param name="AttachmentName">
/// When the document was stored again because one of its attachments was put or deleted (moved and
/// copied ones included): that attachment's name; null for any other change.
/// </param>
/// <param name="AttachmentKind">Whether that attachment was put or deleted.</param>
/// <param name="ChangeVector">The version's (or the deletion's) change vector.</param>
public readonly record struct DocumentChange(long Etag, string Id, string? Collection, DocumentChangeKind Kind, string? AttachmentName = null, DocumentChangeKind AttachmentKind = DocumentChangeKind.Put, string? ChangeVector = null);
