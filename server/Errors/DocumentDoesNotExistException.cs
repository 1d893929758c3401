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

    public string Id { get; }
}
