namespace Jackdaw.Server.Errors;

/// <summary>An operation that needs an existing document found none.</summary>
public sealed class DocumentDoesNotExistException : Exception
{
    public DocumentDoesNotExistException(string id)
        : base($"Document '{id}' does not exist.")
    {
        Id = id;
    }

    /// <param name="message">What needed the document, naming it.</param>
    public DocumentDoesNotExistException(string id, string message)
        : base(message)
    {
        Id = id;
    }

    private DocumentDoesNotExistException(DocumentDoesNotExistException inner)
        : base(inner.Message, inner)
    {
        Id = inner.Id;
        InBatch = true;
    }

    public string Id { get; }

    /// <summary>
    /// Whether a command of a batch named the missing document (an attachment's command, a forced
    /// revision): the batch as a whole is refused, not a document looked up (see ErrorMapping).
    /// </summary>
    public bool InBatch { get; }

    /// <summary>The same error, raised for a command of a batch.</summary>
    public DocumentDoesNotExistException ForBatch() => InBatch ? this : new DocumentDoesNotExistException(this);
}
