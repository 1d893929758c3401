namespace Jackdaw.Server.Errors;

/// <summary>An optimistic-concurrency check failed: the expected change vector does not match the stored document (or its absence). Nothing of the command was applied.</summary>
public sealed class ConcurrencyException : Exception
{
    public ConcurrencyException(string id, string message)
        : base(message)
    {
        Id = id;
    }

    /// <summary>The document whose change vector did not match.</summary>
    public string Id { get; }
}
