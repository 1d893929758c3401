namespace Jackdaw.Server.Cluster;

/// <summary>
/// What the leader changes in the databases' topologies when nodes stop answering (a pure function;
/// <c>ClusterNode.Promotables.cs</c> commits the commands): a promotable or rehab whose mentor has not
/// answered for <c>mentorDownAfter</c> gets the first member of its database that answers
/// (<see cref="ClusterCommandKind.SetDatabaseNodeMentor"/>); a member that has not answered for
/// <c>rehabAfter</c> becomes a rehab mentored by that member (<see cref="ClusterCommandKind.DemoteDatabaseNode"/>).
/// A database none of whose members has answered for <c>rehabAfter</c> has its first rehab that answers
/// made a member (<see cref="ClusterCommandKind.PromoteAnsweringRehab"/>, RavenDB's move too: the rehab
/// holds everything up to its demotion, and without a member clients find no node); the members
/// that did not answer are demoted on a later round, once a member answers. Never a promotable:
/// its copy was never whole. With no rehab that answers, the database is left alone.
/// </summary>
public static class DatabaseNodesWatch
{
    /// <param name="downFor">How long each member has not answered the leader (null: it answers).</param>
    public static IReadOnlyList<ClusterCommand> Plan(ClusterState state, Func<string, TimeSpan?> downFor, TimeSpan mentorDownAfter, TimeSpan rehabAfter)
    {
        var commands = new List<ClusterCommand>();
        foreach (var record in state.Databases.Values)
        {
            var up = record.Members.Where(t => downFor(t) is null).ToList();
            if (up.Count == 0)
            {
                if (record.Members.All(t => downFor(t) >= rehabAfter) && record.Rehabs.Keys.FirstOrDefault(t => downFor(t) is null) is { } rescued)
                {
                    commands.Add(new ClusterCommand(ClusterCommand.NewId(), ClusterCommandKind.PromoteAnsweringRehab) { Database = record.Name, Tag = rescued });
                }
                continue;
            }
            foreach (var (tag, mentor) in record.Promotables.Concat(record.Rehabs))
            {
                if (downFor(mentor) >= mentorDownAfter)
                {
                    commands.Add(new ClusterCommand(ClusterCommand.NewId(), ClusterCommandKind.SetDatabaseNodeMentor) { Database = record.Name, Tag = tag, Mentor = up[0] });
                }
            }
            foreach (var tag in record.Members)
            {
                if (downFor(tag) >= rehabAfter)
                {
                    commands.Add(new ClusterCommand(ClusterCommand.NewId(), ClusterCommandKind.DemoteDatabaseNode) { Database = record.Name, Tag = tag, Mentor = up[0] });
                }
            }
        }
        return commands;
    }
}
