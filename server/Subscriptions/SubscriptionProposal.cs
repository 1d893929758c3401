namespace Jackdaw.Server.Subscriptions;

/// <summary>A change of a clustered database's subscription, proposed to the cluster (<see cref="ISubscriptionCluster.ProposeAsync"/>).</summary>
public sealed record SubscriptionProposal(SubscriptionProposalKind Kind, string Database, string Name)
{
    public string? Query { get; init; }

    public bool Disabled { get; init; }

    /// <summary>The start position of a create; the acknowledged position of an acknowledgement.</summary>
    public IReadOnlyDictionary<string, long>? Position { get; init; }

    public DateTime Time { get; init; } = DateTime.UtcNow;
}
