namespace Jackdaw.Server.Errors;

/// <summary>An operation that needs an existing document found none.</summary>
public sealed class DocumentDoesNotExistException : Exception
{
    public DocumentDoesNotExistException(string id)
        : base($"Document '{id}' does not exist.")
    {
        Id = id;
    }

    public string Id { get; }
}
