using Jackdaw.Server.Databases;

namespace Jackdaw.Server.Backup;

/// <summary>Restores a chain into a new database, or into a throw-away folder to verify it.</summary>
public static class DatabaseRestore
{
    public static Task<RestoreResult> RestoreAsync(DatabasesLandlord landlord, RestoreRequest request, BackupRun progress, CancellationToken cancel) =>
        throw new NotImplementedException("issue 29: in progress");

    public static Task<RestoreResult> VerifyAsync(string backupLocation, string? lastFileNameToRestore, BackupRun progress, CancellationToken cancel) =>
        throw new NotImplementedException("issue 29: in progress");
}
