using System.Collections.Immutable;
using System.Globalization;

namespace Jackdaw.Server.Cluster;

// The periodic backup tasks of a database record: put, delete, disable, move, status; decided alike
// on every node from the record and the command alone.
public sealed partial class ClusterState
{
    /// <summary>Whether <paramref name="kind"/> is a periodic backup command.</summary>
    public static bool IsBackupCommand(ClusterCommandKind kind) => kind is ClusterCommandKind.PutBackupTask or ClusterCommandKind.DeleteBackupTask
        or ClusterCommandKind.SetBackupTaskDisabled or ClusterCommandKind.SetBackupResponsibleNode or ClusterCommandKind.UpdateBackupStatus;

    /// <summary>
    /// The node that runs task <paramref name="taskId"/> among <paramref name="nodes"/> (RavenDB's
    /// rule): its mentor when it holds the database and is up (or, pinned, even when down); else a
    /// stable choice by a hash of the id (as a subscription's mentor), skipping the nodes
    /// <paramref name="usable"/> refuses, unless all are.
    /// </summary>
    public static string ChooseBackupNode(long taskId, string? mentor, bool pinned, IReadOnlyList<string> nodes, Func<string, bool> usable)
    {
        if (mentor is not null && nodes.Contains(mentor) && (pinned || usable(mentor)))
        {
            return mentor;
        }
        return ClusterSubscriptions.ChooseMentor(taskId.ToString(CultureInfo.InvariantCulture), nodes, usable);
    }

    /// <summary>
    /// The leader's plan for task <paramref name="task"/> of a record on <paramref name="nodes"/>:
    /// null when it stays; else the node it goes to (a responsible node <paramref name="down"/> for
    /// long enough: the same choice among the nodes <paramref name="usable"/> says answer; a mentor
    /// that answers again: back to it, unless pinned elsewhere), and whether the move waits for a run
    /// in progress on the current node: true when that node is not down (a move back to the mentor),
    /// so that a node that answers is never made to drop a run for it.
    /// </summary>
    public static (string Next, bool WaitsForRun)? PlanBackupMove(ClusterBackupTask task, IReadOnlyList<string> nodes, Func<string, bool> down, Func<string, bool> usable)
    {
        var mentorBack = task.MentorNode is { } mentor && mentor != task.ResponsibleNode && nodes.Contains(mentor) && usable(mentor);
        if (!mentorBack && (!down(task.ResponsibleNode) || (task.PinToMentorNode && task.MentorNode == task.ResponsibleNode)))
        {
            return null;
        }
        var next = ChooseBackupNode(task.TaskId, task.MentorNode, task.PinToMentorNode, nodes, usable);
        if (next == task.ResponsibleNode || !usable(next))
        {
            return null;
        }
        return (next, !down(task.ResponsibleNode));
    }

    private static (ClusterDatabaseRecord Record, string? Refused) ApplyBackup(ClusterCommand command, ClusterDatabaseRecord record, ClusterBackupChange change, long index)
    {
        var backups = record.Backups;
        backups.TryGetValue(change.TaskId, out var existing);
        if (existing is null && (command.Kind != ClusterCommandKind.PutBackupTask || change.TaskId != 0))
        {
            return (record, $"There is no periodic backup task {change.TaskId} in database '{record.Name}'.");
        }
        ClusterBackupTask? next;
        switch (command.Kind)
        {
            case ClusterCommandKind.PutBackupTask when change is { Configuration.Length: > 0, Name: { } name }:
                if (change.MentorNode is { } mentor && !record.Nodes.Contains(mentor))
                {
                    return (record, $"MentorNode '{mentor}' does not hold database '{record.Name}' ({string.Join(", ", record.Nodes)}).");
                }
                var id = existing?.TaskId ?? index;
                var avoid = change.Avoid ?? [];
                var responsible = change.ResponsibleNode is { } given && record.Nodes.Contains(given) ? given
                    : existing is not null && record.Nodes.Contains(existing.ResponsibleNode) ? existing.ResponsibleNode
                    : ChooseBackupNode(id, change.MentorNode, change.PinToMentorNode, record.Nodes, n => !avoid.Contains(n));
                next = new ClusterBackupTask(id, name, change.Configuration, responsible)
                {
                    Disabled = change.Disabled,
                    MentorNode = change.MentorNode,
                    PinToMentorNode = change.PinToMentorNode,
                    CreatedBy = existing?.CreatedBy ?? command.Id,
                    Status = existing is null ? change.Status : existing.Status,
                };
                break;
            case ClusterCommandKind.DeleteBackupTask:
                next = null;
                break;
            case ClusterCommandKind.SetBackupTaskDisabled:
                next = existing! with { Disabled = change.Disabled };
                break;
            case ClusterCommandKind.SetBackupResponsibleNode when change.ResponsibleNode is { } node:
                if (!record.Nodes.Contains(node))
                {
                    return (record, $"Node {node} does not hold database '{record.Name}'.");
                }
                next = existing! with { ResponsibleNode = node };
                break;
            case ClusterCommandKind.UpdateBackupStatus when change.Status is { } status:
                // A node that lost the task (the leader thought it down) does not overwrite the
                // status its successor's schedule counts from.
                if (status.NodeTag != existing!.ResponsibleNode)
                {
                    return (record, $"Node {status.NodeTag} no longer runs periodic backup task {existing.TaskId}: node {existing.ResponsibleNode} does.");
                }
                next = existing with { Status = status with { TaskId = existing.TaskId } };
                break;
            default:
                return (record, $"The command {command.Kind} lacks a field it needs.");
        }
        backups = next is null ? backups.Remove(existing!.TaskId) : backups.SetItem(next.TaskId, next);
        return (record with { Backups = backups }, null);
    }

    /// <summary>
    /// The records after their nodes changed: a task whose responsible node no longer holds its
    /// database gets another (the same choice on every node), a member when there is one: a node
    /// still catching up would back up an incomplete copy. Unchanged records stay the same objects.
    /// </summary>
    private static ImmutableSortedDictionary<string, ClusterDatabaseRecord> FitBackups(ImmutableSortedDictionary<string, ClusterDatabaseRecord> databases)
    {
        foreach (var record in databases.Values)
        {
            if (record.Backups.IsEmpty || record.Backups.Values.All(t => record.Nodes.Contains(t.ResponsibleNode)))
            {
                continue;
            }
            var backups = record.Backups;
            foreach (var task in record.Backups.Values.Where(t => !record.Nodes.Contains(t.ResponsibleNode)))
            {
                backups = backups.SetItem(task.TaskId, task with { ResponsibleNode = ChooseBackupNode(task.TaskId, task.MentorNode, task.PinToMentorNode, record.Nodes, t => !record.IsCatchingUp(t)) });
            }
            databases = databases.SetItem(record.Name, record with { Backups = backups });
        }
        return databases;
    }
}
