namespace Jackdaw.Server.Backup;

/// <summary>A restore of a chain into a new database.</summary>
public sealed class RestoreRequest
{
    /// <summary>The chain's folder.</summary>
    public required string BackupLocation { get; init; }

    public required string DatabaseName { get; init; }

    /// <summary>The last file to apply (a file name in the folder); null for all.</summary>
    public string? LastFileNameToRestore { get; init; }
}
