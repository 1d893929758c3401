namespace Jackdaw.Server.Backup;

/// <summary>
/// The retention policy of a periodic backup task: in its folder, a chain folder of the task's
/// database and kind (<see cref="PeriodicBackupSchedule.ChainFolderName"/>) whose newest file was
/// written longer than <c>MinimumBackupAgeToKeep</c> ago is deleted, whole. The current chain is
/// never deleted, however old; folders that are not chain folders of this task are never touched.
/// </summary>
public static class PeriodicBackupRetention
{
    /// <summary>Deletes the expired chains; returns the folders deleted.</summary>
    public static IReadOnlyList<string> Apply(PeriodicBackupConfiguration configuration, string database, string currentChain, DateTime now)
    {
        if (configuration.MinimumBackupAgeToKeep is not { } keep || !Directory.Exists(configuration.FolderPath))
        {
            return [];
        }
        var deleted = new List<string>();
        foreach (var folder in ChainFolders(configuration, database))
        {
            if (string.Equals(folder, currentChain, StringComparison.Ordinal))
            {
                continue;
            }
            var newest = Directory.EnumerateFiles(folder).Select(File.GetLastWriteTimeUtc).DefaultIfEmpty(Directory.GetLastWriteTimeUtc(folder)).Max();
            if (now - newest < keep)
            {
                continue;
            }
            Directory.Delete(folder, recursive: true);
            deleted.Add(folder);
        }
        return deleted;
    }

    /// <summary>The chain folders of the task's database and kind in its folder (none when the folder does not exist).</summary>
    public static IEnumerable<string> ChainFolders(PeriodicBackupConfiguration configuration, string database)
    {
        if (!Directory.Exists(configuration.FolderPath))
        {
            return [];
        }
        var suffix = $".jackdaw-{database}-{configuration.FolderKind}";
        return Directory.EnumerateDirectories(configuration.FolderPath, "*" + suffix).Where(f => IsChainFolder(Path.GetFileName(f), suffix)).ToList();
    }

    /// <summary>A name made by <see cref="PeriodicBackupSchedule.ChainFolderName"/>: a date, then the suffix.</summary>
    private static bool IsChainFolder(string name, string suffix) =>
        name.Length == 19 + suffix.Length
        && name.EndsWith(suffix, StringComparison.Ordinal)
        && DateTime.TryParseExact(name.AsSpan(0, 19), "yyyy-MM-dd-HH-mm-ss", System.Globalization.CultureInfo.InvariantCulture, System.Globalization.DateTimeStyles.None, out _);
}
