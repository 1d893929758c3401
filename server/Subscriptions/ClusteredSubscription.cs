namespace Jackdaw.Server.Subscriptions;

/// <summary>
/// A subscription as the cluster keeps it, for a node's <see cref="SubscriptionStore"/>: its
/// definition, the node that serves it (<see cref="Mentor"/>, reached at <see cref="MentorUrl"/>)
/// and the acknowledged <see cref="Position"/>: database id of a copy → etag of that copy (the
/// storing mentor's own entry is its acknowledged etag; the others, how far their replication
/// feeds had come in what was acknowledged). A node resumes after its own copy's entry.
/// </summary>
public sealed record ClusteredSubscription(
    long Id,
    string Name,
    string Query,
    bool Disabled,
    string Mentor,
    string? MentorUrl,
    IReadOnlyDictionary<string, long> Position,
    DateTime CreatedAt,
    DateTime? LastAckAt);
