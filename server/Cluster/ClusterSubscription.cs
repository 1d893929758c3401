namespace Jackdaw.Server.Cluster;

/// <summary>
/// A subscription as the cluster knows it (one per name per database). <see cref="Mentor"/> is the
/// node that serves it. <see cref="Position"/> is where its workers got to, as the node that
/// stored it (<see cref="PositionBy"/>) saw it, keyed by the database id of each node's copy: that
/// node's own entry is its acknowledged local etag; another copy's entry is the last etag of that
/// copy's replication feed the node had applied when everything up to that etag was acknowledged.
/// A node that takes the subscription over resumes after its own entry (0 when it has none): every
/// document of its feed up to there had reached the old mentor and been acknowledged (at least
/// once), whatever order the documents arrived in on either node.
/// </summary>
public sealed record ClusterSubscription(
    long Id,
    string Name,
    string Query,
    string Mentor,
    IReadOnlyDictionary<string, long> Position)
{
    public bool Disabled { get; init; }

    /// <summary>The tag of the node whose acknowledgement stored <see cref="Position"/> (null: set at creation).</summary>
    public string? PositionBy { get; init; }

    public DateTime CreatedAt { get; init; }

    public DateTime? LastAckAt { get; init; }
}
