namespace Jackdaw.Server.Backup;

/// <summary>
/// A periodic backup task as a clustered database's record holds it: its configuration as JSON
/// (<see cref="PeriodicBackupConfiguration.ToJson"/>; <see cref="Disabled"/>, the mentor and the id
/// are the record's), the node that runs it (with its URL) and the status of the last run, whichever
/// node ran it.
/// </summary>
public sealed record ClusteredBackupTask(long TaskId, string Configuration, string ResponsibleNode, string? ResponsibleUrl)
{
    public bool Disabled { get; init; }

    public string? MentorNode { get; init; }

    public bool PinToMentorNode { get; init; }

    public PeriodicBackupStatus? Status { get; init; }
}
