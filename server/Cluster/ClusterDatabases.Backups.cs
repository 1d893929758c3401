using Jackdaw.Server.Backup;
using Jackdaw.Server.Databases;

namespace Jackdaw.Server.Cluster;

// The periodic backup tasks of the records, handed to this node's copies: each copy takes the
// record's tasks, and runs those whose responsible node it is.
internal sealed partial class ClusterDatabases
{
    /// <summary>
    /// Brings database <paramref name="database"/>'s periodic backups in line with its record when
    /// its tasks changed (created, replaced, toggled, moved, a status recorded, deleted), or the copy
    /// is new here (or at start). A failure is logged and fails the step (tried again later): false.
    /// </summary>
    private async Task<bool> ApplyBackupsAsync(DatabasesLandlord landlord, ClusterDatabaseRecord? before, ClusterDatabaseRecord after, bool always)
    {
        if (!always && before is not null && ReferenceEquals(before.Backups, after.Backups))
        {
            return true;
        }
        try
        {
            await PeriodicBackups.Of(landlord.GetDatabase(after.Name)).RefreshFromClusterAsync().ConfigureAwait(false);
            return true;
        }
        catch (Exception e) when (e is not OperationCanceledException)
        {
            LogBackupsFailed(_logger, after.Name, e);
            return false;
        }
    }

    [LoggerMessage(EventId = 742, Level = LogLevel.Warning, Message = "Could not bring the periodic backup tasks of database {Database} in line with the cluster's record")]
    private static partial void LogBackupsFailed(ILogger logger, string database, Exception exception);
}
