using Jackdaw.Server.Backup;

namespace Jackdaw.Server.Cluster;

/// <summary>
/// A periodic backup task as a database record holds it. <see cref="TaskId"/> is the log index of the
/// command that created it (unique in the cluster, as RavenDB's). <see cref="Configuration"/> is the
/// JSON each node reads (<see cref="PeriodicBackupConfiguration.ToJson"/>, with its creation time);
/// <see cref="Disabled"/>, <see cref="MentorNode"/> and <see cref="PinToMentorNode"/> are the
/// record's own (a toggle changes only them). <see cref="ResponsibleNode"/> is the one node of the
/// database that runs it, chosen by the leader; <see cref="Status"/> is the last run's, whichever
/// node ran it (its <c>NodeTag</c>).
/// </summary>
public sealed record ClusterBackupTask(long TaskId, string Name, string Configuration, string ResponsibleNode)
{
    public bool Disabled { get; init; }

    public string? MentorNode { get; init; }

    public bool PinToMentorNode { get; init; }

    /// <summary>The id of the command that created it: a create retried with its id answers the same task.</summary>
    public string? CreatedBy { get; init; }

    public PeriodicBackupStatus? Status { get; init; }
}
