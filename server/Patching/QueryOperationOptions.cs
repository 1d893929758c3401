namespace Jackdaw.Server.Patching;

/// <summary>
/// RavenDB's <c>QueryOperationOptions</c>, from the query string of <c>PATCH</c> and
/// <c>DELETE /queries</c>: whether a stale index may answer (<c>allowStale</c>; when not, the
/// operation waits up to <c>staleTimeout</c> for it and fails after), at most how many documents a
/// second (<c>maxOpsPerSec</c>), and whether the result lists every document (<c>details</c>).
/// </summary>
public sealed record QueryOperationOptions(bool AllowStale, TimeSpan? StaleTimeout, int? MaxOpsPerSecond, bool RetrieveDetails)
{
    /// <summary>How long a stale index is waited for when <c>staleTimeout</c> is not given (RavenDB's query default).</summary>
    public static readonly TimeSpan DefaultStaleTimeout = TimeSpan.FromSeconds(15);
}
