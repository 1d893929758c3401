namespace Jackdaw.Server.Errors;

/// <summary>
/// A query that asked for non-stale results did not get them in time: the index had not indexed
/// every change committed before the query arrived. Answered with RavenDB's type name,
/// <c>TimeoutException</c>, which its clients map to their own.
/// </summary>
public sealed class QueryTimeoutException : Exception
{
    public QueryTimeoutException(string message)
        : base(message)
    {
    }
}
