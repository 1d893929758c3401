namespace Jackdaw.Client;

/// <summary>
/// The answer to <see cref="ConfigureRevisionsOperation"/> (RavenDB's <c>ConfigureRevisionsOperationResult</c>).
/// RavenDB answers the index of the cluster command that stored it; a Jackdaw server answers the
/// number it gives the change, if any, and null when it answers none.
/// </summary>
public sealed class ConfigureRevisionsOperationResult
{
    public long? RaftCommandIndex { get; init; }
}
