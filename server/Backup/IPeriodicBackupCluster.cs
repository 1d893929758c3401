namespace Jackdaw.Server.Backup;

/// <summary>
/// The cluster as the periodic backups see it (set by the server; the backup layer does not call
/// the cluster's): on a clustered database the task configurations, the node responsible for each
/// task and the last status are kept in the database's record, and a status is proposed to it after
/// each run.
/// </summary>
public interface IPeriodicBackupCluster
{
    /// <summary>This node's tag.</summary>
    string NodeTag { get; }

    /// <summary>True when the cluster keeps the tasks of <paramref name="database"/> (it has a record of it).</summary>
    bool Keeps(string database);

    /// <summary>True while this node is a member whose state does not have <paramref name="database"/>'s record yet (starting): its tasks are not known.</summary>
    bool IsLoading(string database);

    /// <summary>The tasks of <paramref name="database"/> as this node last applied the cluster's state.</summary>
    IReadOnlyList<ClusteredBackupTask> Current(string database);

    /// <summary>Records the status of a run of this node (its <c>NodeTag</c>) in the cluster; returns once committed.</summary>
    /// <exception cref="Errors.ClusterException">Refused: this node is no longer responsible for the task, or the task is gone.</exception>
    /// <exception cref="Errors.NotLeaderException">No leader answered.</exception>
    Task ProposeStatusAsync(string database, PeriodicBackupStatus status, CancellationToken token);
}
