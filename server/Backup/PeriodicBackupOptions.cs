using Jackdaw.Server.Databases;

namespace Jackdaw.Server.Backup;

/// <summary>
/// What the periodic backups of every database run with: the clock and the backup itself, which
/// tests replace (a fake clock drives the schedule without waiting; a fake backup tests the
/// scheduler without the storage engine).
/// </summary>
public sealed record PeriodicBackupOptions
{
    public TimeProvider Time { get; init; } = TimeProvider.System;

    /// <summary>Writes one file of a chain (<see cref="DatabaseBackups.RunAsync"/>).</summary>
    public Func<DocumentDatabase, BackupRequest, BackupRun, CancellationToken, Task<BackupResult>> Run { get; init; } = DatabaseBackups.RunAsync;

    /// <summary>Called when the last enabled task of a database goes (<see cref="DatabaseBackups.StopRetainingJournals"/>).</summary>
    public Action<DocumentDatabase> StopRetainingJournals { get; init; } = DatabaseBackups.StopRetainingJournals;

    /// <summary>How a failed run is reported in its operation's state (the host's error table).</summary>
    public Func<Exception, OperationFailure> FailureOf { get; init; } = e => new OperationFailure(e.GetType().Name, e.Message, 500);

    /// <summary>How long after a database opens a run it missed while closed starts (its indexes and subscriptions open first).</summary>
    public TimeSpan CatchUpDelay { get; init; } = TimeSpan.FromSeconds(1);

    /// <summary>The longest a timer waits before the schedule is looked at again (timers cannot wait for months).</summary>
    public TimeSpan MaxTimerDelay { get; init; } = TimeSpan.FromHours(12);
}
