namespace Jackdaw.Server.Errors;

/// <summary>An operation that needs an existing attachment (a move, a copy, a read) found none under that name.</summary>
public sealed class AttachmentDoesNotExistException : Exception
{
    public AttachmentDoesNotExistException(string documentId, string name)
        : this(documentId, name, $"Document '{documentId}' has no attachment named '{name}'.")
    {
    }

    /// <param name="message">What was looked for where (a revision's attachment names the revision).</param>
    public AttachmentDoesNotExistException(string documentId, string name, string message)
        : base(message)
    {
        DocumentId = documentId;
        Name = name;
    }

    public string DocumentId { get; }

    public string Name { get; }
}
