using Jackdaw.Server.Databases;

namespace Jackdaw.Server.Subscriptions;

/// <summary>
/// The cluster as the subscriptions see it (set by the server; the subscriptions layer does not
/// call the cluster's): on a clustered database the definitions, the mentor of each subscription
/// and its acknowledged position are kept by the cluster, and changes are proposed to it.
/// </summary>
public interface ISubscriptionCluster
{
    /// <summary>This node's tag.</summary>
    string NodeTag { get; }

    /// <summary>True when the cluster keeps the subscriptions of <paramref name="database"/> (it has a record of it).</summary>
    bool Keeps(string database);

    /// <summary>
    /// True while this node is a member of a cluster whose state it has not loaded as far as
    /// <paramref name="database"/>'s record (a node starting): its subscriptions are not known yet.
    /// </summary>
    bool IsLoading(string database);

    /// <summary>The subscriptions of <paramref name="database"/> as this node last applied the cluster's state.</summary>
    IReadOnlyList<ClusteredSubscription> Current(string database);

    /// <summary>
    /// Proposes a change and returns once the cluster committed it (and, unless it is an
    /// acknowledgement, this node applied it: <see cref="Current"/> has it).
    /// </summary>
    /// <exception cref="Errors.ClusterException">The cluster refused it (a create of a name taken meanwhile, an acknowledgement from a node that no longer serves it).</exception>
    /// <exception cref="Errors.NotLeaderException">No leader answered.</exception>
    Task ProposeAsync(SubscriptionProposal proposal, CancellationToken token);

    /// <summary>
    /// The last etag of each other copy's replication feed applied here (keyed by that copy's
    /// database id), as of <paramref name="reader"/>'s snapshot.
    /// </summary>
    IReadOnlyDictionary<string, long> FeedPositions(DatabaseReader reader);
}
