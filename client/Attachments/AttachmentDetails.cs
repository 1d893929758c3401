namespace Jackdaw.Client;

/// <summary>An attachment as a read or a write answered it: its <see cref="AttachmentName"/> and the document's id and change vector.</summary>
public sealed class AttachmentDetails : AttachmentName
{
    /// <summary>
    /// The attachment's change vector: as in RavenDB, the one its document got when the attachment
    /// was stored (a read's <c>ETag</c>). It is what a PUT or DELETE of the attachment expects when
    /// given one; the document's own change vector moves on with every later change.
    /// </summary>
    public string? ChangeVector { get; init; }

    public string DocumentId { get; init; } = "";
}
