namespace Jackdaw.Server.Errors;

/// <summary>An operation that needs an existing attachment (a move, a copy, a read) found none under that name.</summary>
public sealed class AttachmentDoesNotExistException : Exception
{
    public AttachmentDoesNotExistException(string documentId, string name)
        : base($"Document '{documentId}' has no attachment named '{name}'.")
    {
        DocumentId = documentId;
        Name = name;
    }

    public string DocumentId { get; }

    public string Name { get; }
}
