namespace Jackdaw.Client;

/// <summary>
/// What <see cref="RevertRevisionsOperation"/> reverts (RavenDB's <c>RevertRevisionsRequest</c>): every
/// document (of <see cref="Collections"/>, or of all) back to its revision at <see cref="Time"/>.
/// </summary>
public sealed class RevertRevisionsRequest
{
    /// <summary>The point in time to go back to (sent in UTC).</summary>
    public DateTime Time { get; set; }

    /// <summary>
    /// How far past <see cref="Time"/> the server keeps looking at older revisions once it met one
    /// older than it, in seconds (RavenDB's window for clocks of several nodes).
    /// </summary>
    public long WindowInSec { get; set; }

    /// <summary>The collections to revert; null or empty for every collection.</summary>
    public string[]? Collections { get; set; }
}
