namespace Jackdaw.Client;

/// <summary>
/// One attachment of a bulk read: its details and a stream over its bytes in the shared answer.
/// The stream is valid until the enumeration moves on; what it left unread is skipped then.
/// </summary>
public sealed class AttachmentEnumeratorResult
{
    internal AttachmentEnumeratorResult(Stream stream, AttachmentDetails details)
    {
        Stream = stream;
        Details = details;
    }

    public Stream Stream { get; }

    public AttachmentDetails Details { get; }
}
