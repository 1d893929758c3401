namespace Jackdaw.Client;

/// <summary>One attachment of a bulk read (<see cref="IAttachmentsSessionOperations.GetAsync(IEnumerable{AttachmentRequest}, CancellationToken)"/>).</summary>
public sealed class AttachmentRequest
{
    public AttachmentRequest(string documentId, string name)
    {
        ArgumentException.ThrowIfNullOrWhiteSpace(documentId);
        ArgumentException.ThrowIfNullOrWhiteSpace(name);
        DocumentId = documentId;
        Name = name;
    }

    public string DocumentId { get; }

    public string Name { get; }
}
