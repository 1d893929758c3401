using Jackdaw.Server.Backup;

namespace Jackdaw.Server.Cluster;

/// <summary>
/// What a backup command of <see cref="ClusterCommand"/> carries (<see cref="ClusterCommand.Backup"/>):
/// the task's id (0 for a new one) and, depending on the kind, its configuration, the responsible
/// node, the disabled flag or a status.
/// </summary>
public sealed record ClusterBackupChange(long TaskId)
{
    public string? Name { get; init; }

    /// <summary>The configuration's JSON (<see cref="PeriodicBackupConfiguration.ToJson"/>) of a put.</summary>
    public string? Configuration { get; init; }

    public bool Disabled { get; init; }

    public string? MentorNode { get; init; }

    public bool PinToMentorNode { get; init; }

    /// <summary>The node the leader gives the task (a put with a mentor, a move); null on a create: chosen by a hash of the new id.</summary>
    public string? ResponsibleNode { get; init; }

    /// <summary>On a create: the nodes the leader saw down, which the hash choice skips.</summary>
    public IReadOnlyList<string>? Avoid { get; init; }

    /// <summary>The status a responsible node records after a run (its <c>NodeTag</c> says which node), or a founding server's.</summary>
    public PeriodicBackupStatus? Status { get; init; }
}
