using System.Collections.Immutable;

namespace Jackdaw.Server.Cluster;

// Promotables and rehabs (RavenDB's DatabaseTopology): a node added to a database enters it as a
// promotable with a mentor, a member that did not answer for long is demoted to a rehab, and
// either becomes a member when its mentor, through the leader, shows it caught up
// (PromotionCriterion). A database created fresh has only members.
public sealed partial class ClusterState
{
    /// <summary><paramref name="record"/> with <paramref name="tag"/> added as a promotable of <paramref name="mentor"/> (the first member when that is none of its members).</summary>
    private static ClusterDatabaseRecord WithPromotable(ClusterDatabaseRecord record, string tag, string? mentor, long index)
    {
        var members = record.Members;
        var chosen = mentor is not null && members.Contains(mentor) ? mentor : members.FirstOrDefault();
        var added = record with { Nodes = [.. record.Nodes, tag], TopologyEtag = index };
        // A record with no member left (only rehabs) has no one to catch up with: a member at once.
        return chosen is null ? added : added with { Promotables = record.Promotables.SetItem(tag, chosen) };
    }

    /// <summary>
    /// <paramref name="record"/> after nodes left it: promotables and rehabs no longer among its nodes
    /// go, one whose mentor left is mentored by the first member, and when no member is left they
    /// become members (the copies there are the most there is).
    /// </summary>
    private static ClusterDatabaseRecord FitPromotables(ClusterDatabaseRecord record)
    {
        if (record.Promotables.IsEmpty && record.Rehabs.IsEmpty)
        {
            return record;
        }
        var promotables = record.Promotables.RemoveRange(record.Promotables.Keys.Where(t => !record.Nodes.Contains(t)).ToList());
        var rehabs = record.Rehabs.RemoveRange(record.Rehabs.Keys.Where(t => !record.Nodes.Contains(t)).ToList());
        var members = record.Nodes.Where(n => !promotables.ContainsKey(n) && !rehabs.ContainsKey(n)).ToList();
        if (members.Count == 0)
        {
            return record with { Promotables = ClusterDatabaseRecord.NoPromotables, Rehabs = ClusterDatabaseRecord.NoPromotables };
        }
        static ImmutableSortedDictionary<string, string> Rementor(ImmutableSortedDictionary<string, string> mentored, List<string> members)
        {
            foreach (var (tag, mentor) in mentored)
            {
                if (!members.Contains(mentor))
                {
                    mentored = mentored.SetItem(tag, members[0]);
                }
            }
            return mentored;
        }
        return record with { Promotables = Rementor(promotables, members), Rehabs = Rementor(rehabs, members) };
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
        if (!record.Promotables.TryGetValue(tag, out var recorded) && !record.Rehabs.TryGetValue(tag, out recorded))
        {
            return (databases, $"Node '{tag}' is not a promotable of database '{name}'.");
        }
        if (recorded != mentor)
        {
            return (databases, $"Node '{mentor}' is not the mentor of promotable '{tag}' of database '{name}' (node '{recorded}' is).");
        }
        if (PromotionCriterion.NotReady(progress, record.Indexes.Keys) is var (status, reason))
        {
            return (databases, $"Promotable '{tag}' of database '{name}' has not caught up ({status}): {reason}");
        }
        return (databases.SetItem(record.Name, record with { Promotables = record.Promotables.Remove(tag), Rehabs = record.Rehabs.Remove(tag), TopologyEtag = index }), null);
    }

    /// <summary>The record and node tag a database-node command names; null when it names none or no such database.</summary>
    private static (ClusterDatabaseRecord Record, string Tag)? NodeOfRecord(ClusterCommand command, ImmutableSortedDictionary<string, ClusterDatabaseRecord> databases) =>
        command.Database is { } name && command.Tag is { } tag && databases.TryGetValue(name, out var record) ? (record, tag) : null;

    private static string NodeOfRecordRefusal(ClusterCommand command, ImmutableSortedDictionary<string, ClusterDatabaseRecord> databases) =>
        command.Database is not { } name || command.Tag is null ? $"A {command.Kind} names its database and node." : $"Database '{name}' does not exist.";

    /// <summary>
    /// <see cref="ClusterCommandKind.PromoteAnsweringRehab"/>: the rehab becomes a member (the leader
    /// saw no member answer; that is not in the state, so only the node's being a rehab is checked).
    /// The members that did not answer stay members until the leader demotes them, now that one answers.
    /// </summary>
    private static (ImmutableSortedDictionary<string, ClusterDatabaseRecord> Databases, string? Refused) ApplyRehabRescue(
        ClusterCommand command, ImmutableSortedDictionary<string, ClusterDatabaseRecord> databases, long index)
    {
        if (NodeOfRecord(command, databases) is not ({ } record, { } tag))
        {
            return (databases, NodeOfRecordRefusal(command, databases));
        }
        var name = record.Name;
        if (!record.Rehabs.ContainsKey(tag))
        {
            return (databases, $"Node '{tag}' is not a rehab of database '{name}'.");
        }
        return (databases.SetItem(record.Name, record with { Rehabs = record.Rehabs.Remove(tag), TopologyEtag = index }), null);
    }

    /// <summary><see cref="ClusterCommandKind.SetDatabaseNodeMentor"/> and <see cref="ClusterCommandKind.DemoteDatabaseNode"/>.</summary>
    private static (ImmutableSortedDictionary<string, ClusterDatabaseRecord> Databases, string? Refused) ApplyMentorOrDemotion(
        ClusterCommand command, ImmutableSortedDictionary<string, ClusterDatabaseRecord> databases, long index)
    {
        if (NodeOfRecord(command, databases) is not ({ } record, { } tag))
        {
            return (databases, NodeOfRecordRefusal(command, databases));
        }
        var name = record.Name;
        var members = record.Members;
        if (command.Kind == ClusterCommandKind.SetDatabaseNodeMentor)
        {
            if (command.Mentor is not { } mentor || !members.Contains(mentor))
            {
                return (databases, $"The mentor of a node of database '{name}' must be one of its members ({string.Join(", ", members)}).");
            }
            return record.Promotables.ContainsKey(tag) ? (databases.SetItem(record.Name, record with { Promotables = record.Promotables.SetItem(tag, mentor) }), null)
                : record.Rehabs.ContainsKey(tag) ? (databases.SetItem(record.Name, record with { Rehabs = record.Rehabs.SetItem(tag, mentor) }), null)
                : (databases, $"Node '{tag}' is not a promotable of database '{name}'.");
        }
        if (!members.Contains(tag))
        {
            return (databases, $"Node '{tag}' is not a member of database '{name}'.");
        }
        var others = members.Where(m => m != tag).ToList();
        if (others.Count == 0)
        {
            return (databases, $"Node '{tag}' is the last member of database '{name}': it stays one.");
        }
        var chosen = command.Mentor is { } given && others.Contains(given) ? given : others[0];
        // Those it mentored are mentored by the first member left.
        return (databases.SetItem(record.Name, FitPromotables(record with { Rehabs = record.Rehabs.SetItem(tag, chosen), TopologyEtag = index })), null);
    }
}
