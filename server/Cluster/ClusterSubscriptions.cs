using System.Collections.Immutable;

namespace Jackdaw.Server.Cluster;

/// <summary>
/// The subscriptions of the cluster's databases, part of <see cref="ClusterState"/> and immutable
/// like it: <see cref="Apply"/> is a pure function of the subscriptions, the database records, the
/// command and its log index.
/// </summary>
public sealed class ClusterSubscriptions
{
    private ClusterSubscriptions(ImmutableSortedDictionary<string, ImmutableSortedDictionary<string, ClusterSubscription>> byDatabase)
    {
        ByDatabase = byDatabase;
    }

    public static ClusterSubscriptions Empty { get; } = new(ImmutableSortedDictionary.Create<string, ImmutableSortedDictionary<string, ClusterSubscription>>(StringComparer.OrdinalIgnoreCase));

    private static ImmutableSortedDictionary<string, ClusterSubscription> NoSubscriptions { get; } =
        ImmutableSortedDictionary.Create<string, ClusterSubscription>(StringComparer.OrdinalIgnoreCase);

    /// <summary>Database name → subscription name → subscription (names ignore case).</summary>
    public ImmutableSortedDictionary<string, ImmutableSortedDictionary<string, ClusterSubscription>> ByDatabase { get; }

    /// <summary>The subscriptions of <paramref name="database"/> (none when it has none).</summary>
    public ImmutableSortedDictionary<string, ClusterSubscription> Of(string database) =>
        ByDatabase.TryGetValue(database, out var subscriptions) ? subscriptions : NoSubscriptions;

    public static bool Handles(ClusterCommandKind kind) => kind is ClusterCommandKind.PutSubscription or ClusterCommandKind.DeleteSubscription
        or ClusterCommandKind.SetSubscriptionDisabled or ClusterCommandKind.AcknowledgeSubscription or ClusterCommandKind.SetSubscriptionMentor;

    /// <summary>
    /// The mentor a subscription named <paramref name="name"/> gets among <paramref name="nodes"/>:
    /// spread by a hash of the name, skipping the nodes <paramref name="usable"/> refuses (down), unless all are.
    /// </summary>
    public static string ChooseMentor(string name, IReadOnlyList<string> nodes, Func<string, bool> usable)
    {
        var sorted = nodes.Order(StringComparer.Ordinal).ToList();
        var start = (int)(Fnv(name.ToLowerInvariant()) % (uint)sorted.Count);
        for (var i = 0; i < sorted.Count; i++)
        {
            var candidate = sorted[(start + i) % sorted.Count];
            if (usable(candidate))
            {
                return candidate;
            }
        }
        return sorted[start];
    }

    private static uint Fnv(string text)
    {
        var hash = 2166136261u;
        foreach (var c in text)
        {
            hash = (hash ^ c) * 16777619u;
        }
        return hash;
    }

    /// <summary>The subscriptions after a subscription command, and why it changed nothing (null when it applied).</summary>
    public (ClusterSubscriptions Subscriptions, string? Refused) Apply(
        ClusterCommand command, long index, ImmutableSortedDictionary<string, ClusterDatabaseRecord> databases)
    {
        if (command.Database is not { } database || command.Subscription is not { } change)
        {
            return (this, $"The command {command.Kind} lacks a field it needs.");
        }
        if (!databases.TryGetValue(database, out var record))
        {
            return (this, $"Database '{database}' does not exist.");
        }
        var subscriptions = Of(record.Name);
        subscriptions.TryGetValue(change.Name, out var existing);
        if (existing is null && command.Kind != ClusterCommandKind.PutSubscription)
        {
            return (this, $"Subscription '{change.Name}' of database '{record.Name}' does not exist.");
        }
        ClusterSubscription? next;
        switch (command.Kind)
        {
            case ClusterCommandKind.PutSubscription when change.Query is { } query:
                if (existing is not null)
                {
                    return (this, $"Subscription '{change.Name}' of database '{record.Name}' already exists.");
                }
                if (change.Mentor is not { } mentor || !record.Nodes.Contains(mentor))
                {
                    return (this, $"Subscription '{change.Name}' needs a mentor among the nodes of database '{record.Name}' ({string.Join(", ", record.Nodes)}).");
                }
                next = new ClusterSubscription(index, change.Name, query, mentor, change.Position ?? new Dictionary<string, long>())
                {
                    CreatedAt = change.Time ?? default,
                    Disabled = change.Disabled,
                };
                break;
            case ClusterCommandKind.DeleteSubscription:
                next = null;
                break;
            case ClusterCommandKind.SetSubscriptionDisabled:
                next = existing! with { Disabled = change.Disabled };
                break;
            case ClusterCommandKind.AcknowledgeSubscription when change.Position is { } position && change.Mentor is { } by:
                // A node that lost the subscription (the leader thought it dead) does not move the
                // position its successor resumes from.
                if (existing!.Mentor != by)
                {
                    return (this, $"Node {by} no longer serves subscription '{change.Name}': node {existing.Mentor} does.");
                }
                next = existing with { Position = position, PositionBy = by, LastAckAt = change.Time ?? existing.LastAckAt };
                break;
            case ClusterCommandKind.SetSubscriptionMentor when change.Mentor is { } newMentor:
                if (!record.Nodes.Contains(newMentor))
                {
                    return (this, $"Node {newMentor} does not hold database '{record.Name}'.");
                }
                next = existing! with { Mentor = newMentor };
                break;
            default:
                return (this, $"The command {command.Kind} lacks a field it needs.");
        }
        subscriptions = next is null ? subscriptions.Remove(existing!.Name) : subscriptions.SetItem(existing?.Name ?? next.Name, next);
        return (new ClusterSubscriptions(subscriptions.IsEmpty ? ByDatabase.Remove(record.Name) : ByDatabase.SetItem(record.Name, subscriptions)), null);
    }

    /// <summary>
    /// The subscriptions after the database records changed: those of a deleted database go; one
    /// whose mentor no longer holds its database gets another (the same choice on every node), a
    /// member when there is one, not a node still catching up.
    /// </summary>
    public ClusterSubscriptions Fit(ImmutableSortedDictionary<string, ClusterDatabaseRecord> databases)
    {
        var byDatabase = ByDatabase;
        foreach (var (database, subscriptions) in ByDatabase)
        {
            if (!databases.TryGetValue(database, out var record))
            {
                byDatabase = byDatabase.Remove(database);
                continue;
            }
            var fitted = subscriptions;
            foreach (var subscription in subscriptions.Values)
            {
                if (!record.Nodes.Contains(subscription.Mentor))
                {
                    fitted = fitted.SetItem(subscription.Name, subscription with { Mentor = ChooseMentor(subscription.Name, record.Nodes, t => !record.IsCatchingUp(t)) });
                }
            }
            if (!ReferenceEquals(fitted, subscriptions))
            {
                byDatabase = byDatabase.SetItem(database, fitted);
            }
        }
        return ReferenceEquals(byDatabase, ByDatabase) ? this : new ClusterSubscriptions(byDatabase);
    }

    /// <summary>Every subscription, for a snapshot.</summary>
    public IEnumerable<(string Database, ClusterSubscription Subscription)> All() =>
        ByDatabase.SelectMany(d => d.Value.Values.Select(s => (d.Key, s)));

    /// <summary>The subscriptions a snapshot holds.</summary>
    public static ClusterSubscriptions From(IEnumerable<(string Database, ClusterSubscription Subscription)> all)
    {
        var byDatabase = Empty.ByDatabase;
        foreach (var (database, subscription) in all)
        {
            var subscriptions = byDatabase.TryGetValue(database, out var existing) ? existing : NoSubscriptions;
            byDatabase = byDatabase.SetItem(database, subscriptions.SetItem(subscription.Name, subscription));
        }
        return new ClusterSubscriptions(byDatabase);
    }
}
