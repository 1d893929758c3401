using Microsoft.Extensions.Logging;

namespace Jackdaw.Server.Backup;

/// <summary>What <see cref="PeriodicBackups"/> does in the task's folder besides the backup: leftovers of killed runs, retention.</summary>
public sealed partial class PeriodicBackups
{
    /// <summary>
    /// What runs killed while writing a chain's first snapshot left (<c>*.in-progress</c> in a chain
    /// folder that the task never recorded, so never wrote into again): deleted, and the folder when
    /// that left it empty. The folder this run writes into is cleaned by the backup itself.
    /// </summary>
    private void DeleteLeftoversOfKilledRuns(PeriodicBackupConfiguration configuration, string current)
    {
        try
        {
            foreach (var folder in PeriodicBackupRetention.ChainFolders(configuration, ChainLabel))
            {
                if (string.Equals(folder, current, StringComparison.Ordinal) || BackupChain.DeleteLeftovers(folder) == 0)
                {
                    continue;
                }
                _logger.LogInformation("Periodic backup task {Task} of database {Database} deleted what a killed run left in {Folder}", configuration.TaskId, _database.Name, folder);
                DeleteIfEmpty(folder);
            }
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException)
        {
            _logger.LogWarning(e, "Periodic backup task {Task} of database {Database} could not delete what killed runs left in {Folder}", configuration.TaskId, _database.Name, configuration.FolderPath);
        }
    }

    private void ApplyRetention(PeriodicBackupConfiguration configuration, string currentChain)
    {
        try
        {
            foreach (var deleted in PeriodicBackupRetention.Apply(configuration, ChainLabel, currentChain, Now))
            {
                _logger.LogInformation("Periodic backup task {Task} of database {Database} deleted the expired chain {Folder}", configuration.TaskId, _database.Name, deleted);
            }
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException)
        {
            _logger.LogError(e, "Periodic backup task {Task} of database {Database} could not apply its retention policy in {Folder}", configuration.TaskId, _database.Name, configuration.FolderPath);
        }
    }

    private static void DeleteIfEmpty(string folder)
    {
        try
        {
            if (Directory.Exists(folder) && !Directory.EnumerateFileSystemEntries(folder).Any())
            {
                Directory.Delete(folder);
            }
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException)
        {
            // Left as it is: an empty folder is no backup, and retention removes it later.
        }
    }
}
