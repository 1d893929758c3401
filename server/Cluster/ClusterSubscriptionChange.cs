namespace Jackdaw.Server.Cluster;

/// <summary>
/// What a subscription command of <see cref="ClusterCommand"/> carries (<see cref="ClusterCommand.Subscription"/>):
/// the subscription's name and, depending on the kind, its query, the mentor, the position and the time.
/// </summary>
public sealed record ClusterSubscriptionChange(string Name)
{
    public string? Query { get; init; }

    public bool Disabled { get; init; }

    /// <summary>The mentor (chosen by the leader) for a create or a new mentor; the acknowledging node for an acknowledgement.</summary>
    public string? Mentor { get; init; }

    public IReadOnlyDictionary<string, long>? Position { get; init; }

    /// <summary>The proposer's clock (creation or acknowledgement): commands carry their time so that applying them stays pure.</summary>
    public DateTime? Time { get; init; }
}
