namespace Jackdaw.Server.Cluster;

/// <summary>
/// Cluster settings (<c>Cluster:*</c>, and RavenDB's <c>PublicServerUrl</c>). A server given none
/// is a lone node, as before clusters: tag A, no Raft, until a node is added to it.
/// </summary>
public sealed record ClusterOptions
{
    /// <summary>
    /// How the other nodes reach this one (RavenDB's <c>PublicServerUrl</c>); null: the first
    /// address it listens on (a wildcard host read as 127.0.0.1).
    /// </summary>
    public string? PublicServerUrl { get; init; }

    /// <summary>
    /// A fresh node waits to be added by a member (<c>PUT /admin/cluster/node</c> there) instead of
    /// becoming a cluster of its own when a node is added to it (<c>Cluster:Passive</c>).
    /// </summary>
    public bool Passive { get; init; }

    /// <summary>
    /// A member's URL: a fresh node asks it to add this node, until it is a member
    /// (<c>Cluster:Join</c>; implies <see cref="Passive"/>). Forms a cluster from settings alone.
    /// </summary>
    public string? Join { get; init; }

    /// <summary>
    /// The lower bound of Raft's election timeout (the upper is twice it); a leader that stops
    /// answering is replaced after about this long (<c>Cluster:ElectionTimeoutMs</c>, default 1000).
    /// </summary>
    public int ElectionTimeoutMs { get; init; } = 1000;

    /// <summary>Applied commands between two snapshots of the state, after which the log before it is dropped (<c>Cluster:SnapshotEvery</c>, default 64).</summary>
    public int SnapshotEvery { get; init; } = 64;

    /// <summary>True when the node starts passive (waiting to be added).</summary>
    public bool StartsPassive => Passive || Join is not null;
}
