using Jackdaw.Server.Databases;
using Jackdaw.Server.Replication;
using Jackdaw.Server.Subscriptions;

namespace Jackdaw.Server.Cluster;

/// <summary>
/// The cluster as each database's <see cref="SubscriptionStore"/> sees it (<see cref="ISubscriptionCluster"/>,
/// set by the server): the subscriptions in the cluster's state, proposals as commands, and the
/// replication positions a stored position is made of.
/// </summary>
public sealed class SubscriptionClusterSink(ClusterNode node) : ISubscriptionCluster
{
    public string NodeTag => node.NodeTag;

    public bool Keeps(string database) => node.IsClustered && node.State.Databases.ContainsKey(database);

    public bool IsLoading(string database) => node.IsMember && !node.State.Databases.ContainsKey(database);

    public IReadOnlyList<ClusteredSubscription> Current(string database)
    {
        var state = node.State;
        return [.. state.Subscriptions.Of(database).Values.Select(s => new ClusteredSubscription(
            s.Id, s.Name, s.Query, s.Disabled, s.Mentor, state.Members.GetValueOrDefault(s.Mentor), s.Position, s.CreatedAt, s.LastAckAt))];
    }

    public async Task ProposeAsync(SubscriptionProposal proposal, CancellationToken token)
    {
        var change = new ClusterSubscriptionChange(proposal.Name) { Time = proposal.Time };
        var (kind, filled) = proposal.Kind switch
        {
            SubscriptionProposalKind.Create => (ClusterCommandKind.PutSubscription, change with { Query = proposal.Query, Position = proposal.Position }),
            SubscriptionProposalKind.Delete => (ClusterCommandKind.DeleteSubscription, change),
            SubscriptionProposalKind.SetDisabled => (ClusterCommandKind.SetSubscriptionDisabled, change with { Disabled = proposal.Disabled }),
            SubscriptionProposalKind.Acknowledge => (ClusterCommandKind.AcknowledgeSubscription, change with { Position = proposal.Position, Mentor = node.NodeTag }),
            _ => throw new ArgumentOutOfRangeException(nameof(proposal), proposal.Kind, "Not a subscription change."),
        };
        await node.ProposeSubscriptionAsync(new ClusterCommand(ClusterCommand.NewId(), kind) { Database = proposal.Database, Subscription = filled }, token).ConfigureAwait(false);
    }

    public IReadOnlyDictionary<string, long> FeedPositions(DatabaseReader reader) => ReplicationPositions.ReadAll(reader);
}
