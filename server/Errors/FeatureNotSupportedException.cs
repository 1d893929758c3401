namespace Jackdaw.Server.Errors;

/// <summary>
/// A request that is well formed but asks for something Jackdaw does not do (yet): a RavenDB
/// feature such as cluster-wide transactions, attachments, queries before they are built. Answered
/// 501, so RavenDB's clients report it instead of reading it as "not found".
/// </summary>
public sealed class FeatureNotSupportedException : Exception
{
    public FeatureNotSupportedException(string message)
        : base(message)
    {
    }
}
