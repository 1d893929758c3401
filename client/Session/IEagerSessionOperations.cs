namespace Jackdaw.Client;

/// <summary>Runs what <see cref="ILazySessionOperations"/> and the lazy queries left pending.</summary>
public interface IEagerSessionOperations
{
    /// <summary>
    /// Sends every pending lazy operation in one <c>multi_get</c> request (none when nothing is
    /// pending or the session can answer all of them) and completes their values. When one of them
    /// failed on the server it throws that operation's error (as its own value does); the others
    /// have their values all the same.
    /// </summary>
    Task ExecuteAllPendingLazyOperationsAsync(CancellationToken token = default);
}
