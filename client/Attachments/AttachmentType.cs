namespace Jackdaw.Client;

/// <summary>Whose attachment <see cref="GetAttachmentOperation"/> reads: the document's, or one a revision of it kept (named by the revision's change vector).</summary>
public enum AttachmentType
{
    Document,
    Revision,
}
