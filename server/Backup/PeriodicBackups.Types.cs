using System.Collections.Concurrent;
using System.Diagnostics;
using System.Text.Json;
using Jackdaw.Server.Databases;
using Jackdaw.Server.Documents;
using Jackdaw.Server.Errors;
using Microsoft.Extensions.Logging;

namespace Jackdaw.Server.Backup;

/// <summary>The state <see cref="PeriodicBackups"/> keeps per task and per run, and its timer and command types.</summary>
public sealed partial class PeriodicBackups
{
    private sealed class BackupTask(PeriodicBackupConfiguration configuration, PeriodicBackupStatus status)
    {
        public readonly Lock Lock = new();

        public PeriodicBackupConfiguration Configuration { get; set; } = configuration;

        public PeriodicBackupStatus Status { get; set; } = status;

        public ITimer? Timer { get; set; }

        public RunningBackup? Running { get; set; }

        public bool Deleted { get; set; }

        /// <summary>A task of a clustered database's record (else a lone server's, in the local trees).</summary>
        public bool FromCluster { get; init; }

        /// <summary>The node that runs a clustered task, and its URL (null for a lone server's task).</summary>
        public string? Responsible { get; set; }

        public string? ResponsibleUrl { get; set; }

        /// <summary>The task's registration with the tombstone cleaner (an enabled logical task), else null.</summary>
        public IDisposable? TombstoneHold { get; set; }

        /// <summary>While a logical run is in progress: the database's last etag when it started (its file starts at or after it).</summary>
        public long RunHoldAfter { get; set; } = long.MaxValue;

        /// <summary>As <see cref="RunHoldAfter"/>, the database's last revision etag when the run started.</summary>
        public long RunRevisionHoldAfter { get; set; } = long.MaxValue;
    }

    /// <summary>
    /// A logical task as a tombstone consumer: it has processed every tombstone up to its chain's last
    /// etag (the status's <c>LastEtag</c>, persisted with it), and, while a run is in progress, up to
    /// where that run started; with no chain and no run it needs none. The same for the revision
    /// tombstones, by revision etag (the status's <c>LastRevisionEtag</c>; a status without one, of a
    /// chain begun before it was recorded, holds them all until the next file, a full one).
    /// </summary>
    private sealed class ChainTombstones(PeriodicBackups owner, BackupTask task) : ITombstoneConsumer, IRevisionTombstoneConsumer
    {
        public string Name
        {
            get
            {
                lock (task.Lock)
                    return $"Periodic backup task {task.Configuration.TaskId} ('{task.Configuration.Name}')";
            }
        }

        public bool Consumes(string lowerCollection) => true;

        public long GetLastProcessedTombstoneEtag(string lowerCollection)
        {
            lock (task.Lock)
            {
                var chain = PeriodicBackupSchedule.CurrentChain(task.Configuration, task.Status, owner.ChainLabel) is not null ? task.Status.LastEtag : long.MaxValue;
                return Math.Min(chain, task.RunHoldAfter);
            }
        }

        public long GetLastProcessedRevisionTombstoneEtag()
        {
            lock (task.Lock)
            {
                var chain = PeriodicBackupSchedule.CurrentChain(task.Configuration, task.Status, owner.ChainLabel) is not null ? task.Status.LastRevisionEtag ?? 0 : long.MaxValue;
                return Math.Min(chain, task.RunRevisionHoldAfter);
            }
        }

        public string? HoldReason
        {
            get
            {
                lock (task.Lock)
                    return task.Status.Error is { } error ? $"its last run failed: {error}" : null;
            }
        }
    }

    private sealed class RunningBackup(DatabaseOperation operation, BackupOperationDetails details, DateTime started, bool isFull, BackupRun progress, CancellationTokenSource cancel)
    {
        public DatabaseOperation Operation { get; } = operation;

        public BackupOperationDetails Details { get; } = details;

        public DateTime Started { get; } = started;

        public bool IsFull { get; } = isFull;

        public BackupRun Progress { get; } = progress;

        public CancellationTokenSource Cancel { get; } = cancel;

        public Task? Completion { get; set; }

        /// <summary>Set (under the task's lock) when the run was cancelled because the cluster gave its task to another node: that node.</summary>
        public string? MovedTo { get; set; }
    }

    private sealed class TimerState(PeriodicBackups owner, BackupTask task)
    {
        public void Fire() => owner.OnTimer(task);
    }

    /// <summary>Removes a task's configuration and status in one transaction.</summary>
    private sealed class DeleteTaskCommand(string key) : IMergedCommand<DatabaseTransaction>
    {
        public void Execute(DatabaseTransaction transaction)
        {
            transaction.GetTree(ConfigurationTree).Delete(JsonRecords.Key(key));
            transaction.GetTree(StatusTree).Delete(JsonRecords.Key(key));
        }
    }
}
