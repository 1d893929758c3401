namespace Jackdaw.Server.Backup;

/// <summary>The next run of a periodic backup task: when, and whether it writes a snapshot.</summary>
public readonly record struct NextBackup(DateTime DateTime, bool IsFull);

/// <summary>
/// When a periodic backup task runs next, from its configuration and status alone (no clock of
/// its own: the caller says what time it is).
/// </summary>
/// <remarks>
/// Each schedule counts from the last attempt of its kind (<see cref="PeriodicBackupStatus.LastFullBackupInternal"/>;
/// an incremental from the last attempt of either kind), or from the task's creation before any:
/// the next occurrence of the cron expression strictly after it. An occurrence already past (the
/// server was down, or busy with another run) is due now, once: after that run the next
/// occurrence counts from it. When both kinds are due, the snapshot wins; without a chain to add
/// to, every run is a snapshot.
/// </remarks>
public static class PeriodicBackupSchedule
{
    /// <summary>The next run of a task of <paramref name="database"/>; null when the task is disabled.</summary>
    public static NextBackup? Next(PeriodicBackupConfiguration configuration, PeriodicBackupStatus status, string database, DateTime now)
    {
        if (configuration.Disabled)
        {
            return null;
        }
        var created = Utc(configuration.CreatedAt);
        var nextFull = configuration.FullSchedule?.GetNextOccurrence(Utc(status.LastFullBackupInternal ?? created), TimeZoneInfo.Utc);
        var lastAny = Max(status.LastFullBackupInternal, status.LastIncrementalBackupInternal);
        var nextIncremental = configuration.IncrementalSchedule?.GetNextOccurrence(Utc(lastAny ?? created), TimeZoneInfo.Utc);
        var hasChain = CurrentChain(configuration, status, database) is not null;
        if (nextFull is null && nextIncremental is null)
        {
            return null;
        }
        if (!hasChain)
        {
            return new NextBackup(Min(nextFull, nextIncremental)!.Value, true);
        }
        if (nextIncremental is null || (nextFull is { } full && (full <= nextIncremental || full <= now)))
        {
            return new NextBackup(nextFull!.Value, true);
        }
        return new NextBackup(nextIncremental.Value, false);
    }

    /// <summary>
    /// The folder of the chain the task's next incremental adds to: the last snapshot's, while it
    /// is in the configured folder and of the configured kind and database; null when the next run
    /// must start a chain (none yet, the configuration moved, or the status came with a restore
    /// from another database, whose chain this one must not add to).
    /// </summary>
    public static string? CurrentChain(PeriodicBackupConfiguration configuration, PeriodicBackupStatus status, string database) =>
        status.FolderName is { } folder
        && string.Equals(Path.GetDirectoryName(folder), configuration.FolderPath, StringComparison.Ordinal)
        && folder.EndsWith($".jackdaw-{database}-{configuration.FolderKind}", StringComparison.Ordinal)
            ? folder
            : null;

    /// <summary>
    /// The name of a chain folder started at <paramref name="started"/>:
    /// <c>{yyyy-MM-dd-HH-mm-ss}.jackdaw-{database}-{snapshot|backup}</c> (RavenDB's
    /// <c>….ravendb-{database}-{node}-{type}</c>, without a node: Jackdaw has one).
    /// </summary>
    public static string ChainFolderName(DateTime started, string database, string kind) =>
        $"{started.ToString("yyyy-MM-dd-HH-mm-ss", System.Globalization.CultureInfo.InvariantCulture)}.jackdaw-{database}-{kind}";

    private static DateTime Utc(DateTime time) => time.Kind == DateTimeKind.Utc ? time : DateTime.SpecifyKind(time.ToUniversalTime(), DateTimeKind.Utc);

    private static DateTime? Max(DateTime? a, DateTime? b) => a is null ? b : b is null ? a : a > b ? a : b;

    private static DateTime? Min(DateTime? a, DateTime? b) => a is null ? b : b is null ? a : a < b ? a : b;
}
