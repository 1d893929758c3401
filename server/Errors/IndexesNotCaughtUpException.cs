namespace Jackdaw.Server.Errors;

/// <summary>
/// A batch that asked to wait for its indexes (<c>waitForIndexesTimeout</c>, with
/// <c>waitForIndexThrow</c>) was saved, but some index had not indexed it in time or cannot (stopped,
/// disabled, in error). Answered 408 with RavenDB's type name, <c>TimeoutException</c>.
/// </summary>
public sealed class IndexesNotCaughtUpException : Exception
{
    public IndexesNotCaughtUpException(string message)
        : base(message)
    {
    }
}
