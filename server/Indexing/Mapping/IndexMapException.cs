namespace Jackdaw.Server.Indexing.Mapping;

/// <summary>A map could not process one document (a script error, a sandbox limit): an index error, not a crash.</summary>
public sealed class IndexMapException : Exception
{
    public IndexMapException(string message, Exception? innerException = null)
        : base(message, innerException)
    {
    }
}
