using Jackdaw.Server.Backup;

namespace Jackdaw.Server.Cluster;

/// <summary>
/// The cluster as each database's <see cref="PeriodicBackups"/> sees it (<see cref="IPeriodicBackupCluster"/>,
/// set by the server): the tasks in the database's record, with each one's responsible node and its
/// URL, and a run's status proposed as a command.
/// </summary>
public sealed class PeriodicBackupClusterSink(ClusterNode node) : IPeriodicBackupCluster
{
    public string NodeTag => node.NodeTag;

    public bool Keeps(string database) => node.IsClustered && node.State.Databases.ContainsKey(database);

    public bool IsLoading(string database) => node.IsMember && !node.State.Databases.ContainsKey(database);

    public IReadOnlyList<ClusteredBackupTask> Current(string database)
    {
        var state = node.State;
        if (!state.Databases.TryGetValue(database, out var record))
        {
            return [];
        }
        return [.. record.Backups.Values.Select(t => new ClusteredBackupTask(t.TaskId, t.Configuration, t.ResponsibleNode, state.Members.GetValueOrDefault(t.ResponsibleNode))
        {
            Disabled = t.Disabled,
            MentorNode = t.MentorNode,
            PinToMentorNode = t.PinToMentorNode,
            Status = t.Status,
        })];
    }

    public Task ProposeStatusAsync(string database, PeriodicBackupStatus status, CancellationToken token) =>
        node.ProposeBackupStatusAsync(database, status, token);
}
