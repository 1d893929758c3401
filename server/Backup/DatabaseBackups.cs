using Jackdaw.Server.Databases;

namespace Jackdaw.Server.Backup;

/// <summary>Backups of a database into a chain folder: snapshots, incremental and minimal incremental files.</summary>
public static class DatabaseBackups
{
    /// <summary>Writes one file of the chain in <see cref="BackupRequest.Folder"/>.</summary>
    public static Task<BackupResult> RunAsync(DocumentDatabase database, BackupRequest request, BackupRun progress, CancellationToken cancel) =>
        throw new NotImplementedException("issue 29: in progress");

    /// <summary>Lets the database delete its journals once flushed again (no periodic task keeps them).</summary>
    public static void StopRetainingJournals(DocumentDatabase database) =>
        throw new NotImplementedException("issue 29: in progress");
}
