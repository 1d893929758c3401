using System.Collections.Immutable;

namespace Jackdaw.Server.Cluster;

// Promotables (RavenDB's DatabaseTopology.Promotables): a node added to a database enters it as a
// promotable with a mentor, and becomes a member when its mentor, through the leader, shows it
// caught up (PromotionCriterion). A database created fresh has only members.
public sealed partial class ClusterState
{
    /// <summary><paramref name="record"/> with <paramref name="tag"/> added as a promotable of <paramref name="mentor"/> (the first member when that is none of its members).</summary>
    private static ClusterDatabaseRecord WithPromotable(ClusterDatabaseRecord record, string tag, string? mentor, long index)
    {
        var members = record.Members;
        var chosen = mentor is not null && members.Contains(mentor) ? mentor : members.FirstOrDefault();
        var added = record with { Nodes = [.. record.Nodes, tag], TopologyEtag = index };
        // A record with no member left (only promotables) has no one to catch up with: a member at once.
        return chosen is null ? added : added with { Promotables = record.Promotables.SetItem(tag, chosen) };
    }

    /// <summary>
    /// <paramref name="record"/> after nodes left it: promotables no longer among its nodes go, one
    /// whose mentor left is mentored by the first member, and when no member is left the promotables
    /// become members (the copies there are the most there is).
    /// </summary>
    private static ClusterDatabaseRecord FitPromotables(ClusterDatabaseRecord record)
    {
        if (record.Promotables.IsEmpty)
        {
            return record;
        }
        var promotables = record.Promotables.RemoveRange(record.Promotables.Keys.Where(t => !record.Nodes.Contains(t)).ToList());
        var members = record.Nodes.Where(n => !promotables.ContainsKey(n)).ToList();
        if (members.Count == 0)
        {
            return record with { Promotables = ClusterDatabaseRecord.NoPromotables };
        }
        foreach (var (tag, mentor) in promotables)
        {
            if (!members.Contains(mentor))
            {
                promotables = promotables.SetItem(tag, members[0]);
            }
        }
        return record with { Promotables = promotables };
    }

    private static (ImmutableSortedDictionary<string, ClusterDatabaseRecord> Databases, string? Refused) ApplyPromotion(
        ClusterCommand command, ImmutableSortedDictionary<string, ClusterDatabaseRecord> databases, long index)
    {
        if (command.Database is not { } name || command.Tag is not { } tag || command.Mentor is not { } mentor || command.Progress is not { } progress)
        {
            return (databases, "A promotion names its database, node, mentor and the progress the mentor saw.");
        }
        if (!databases.TryGetValue(name, out var record))
        {
            return (databases, $"Database '{name}' does not exist.");
        }
        if (!record.Promotables.TryGetValue(tag, out var recorded))
        {
            return (databases, $"Node '{tag}' is not a promotable of database '{name}'.");
        }
        if (recorded != mentor)
        {
            return (databases, $"Node '{mentor}' is not the mentor of promotable '{tag}' of database '{name}' (node '{recorded}' is).");
        }
        if (PromotionCriterion.NotReady(progress) is var (status, reason))
        {
            return (databases, $"Promotable '{tag}' of database '{name}' has not caught up ({status}): {reason}");
        }
        return (databases.SetItem(record.Name, record with { Promotables = record.Promotables.Remove(tag), TopologyEtag = index }), null);
    }
}
