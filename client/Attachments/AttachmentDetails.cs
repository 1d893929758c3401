namespace Jackdaw.Client;

/// <summary>An attachment as a read or a write answered it: its <see cref="AttachmentName"/> and the document's id and change vector.</summary>
public sealed class AttachmentDetails : AttachmentName
{
    /// <summary>The change vector the document has with this attachment (for a read, the attachment's <c>ETag</c>).</summary>
    public string? ChangeVector { get; init; }

    public string DocumentId { get; init; } = "";
}
