using System.Collections.Concurrent;
using System.Diagnostics;
using System.Text.Json;
using Jackdaw.Server.Databases;
using Jackdaw.Server.Documents;
using Jackdaw.Server.Errors;
using Microsoft.Extensions.Logging;

namespace Jackdaw.Server.Backup;

/// <summary>
/// The periodic backup tasks of one database (a database component): their configurations in the
/// database's <c>PeriodicBackups</c> tree and their statuses in <c>PeriodicBackupStatus</c> (key:
/// the task id), written through the merger, and a timer per enabled task that starts its next run
/// (<see cref="PeriodicBackupSchedule"/>). A run that was missed while the database was closed is
/// run once as soon as it opens.
/// </summary>
/// <remarks>
/// A task runs one backup at a time: a run is started only under the task's lock when none is
/// running, and the timer is set again only once it ended. Every run, scheduled or asked for
/// (<see cref="StartNow"/>), is an operation of the database, which <c>operations/state</c> follows.
/// A failed run records its error (with the folder) in the status and the log, and the next
/// occurrence tries again; the database keeps serving.
/// </remarks>
public sealed partial class PeriodicBackups : IAsyncDisposable
{
    public const string ConfigurationTree = "PeriodicBackups";
    public const string StatusTree = "PeriodicBackupStatus";

    private readonly DocumentDatabase _database;
    private readonly PeriodicBackupOptions _options;
    private readonly ILogger _logger;
    private readonly ConcurrentDictionary<long, BackupTask> _tasks = new();
    private readonly SemaphoreSlim _changes = new(1, 1);
    private readonly CancellationTokenSource _closing = new();
    private long _lastId;
    private volatile bool _disposed;

    private PeriodicBackups(DocumentDatabase database, PeriodicBackupOptions options, ILoggerFactory loggerFactory, IPeriodicBackupCluster? cluster)
    {
        _database = database;
        _options = options;
        _cluster = cluster;
        _logger = loggerFactory.CreateLogger($"Jackdaw.Backup.{database.Name}");
        database.RegisterTrees("Periodic backups", ConfigurationTree, StatusTree);
        if (IsClustered)
        {
            // The cluster keeps this database's tasks (its record); the local trees are a lone server's.
            RefreshCore(opening: true);
        }
        else
        {
            OpenLocal();
        }
        // Journals kept for tasks that are gone (disabled while a run was finishing, say) are let go.
        if (database.Storage.JournalRetention is not null)
        {
            StopRetainingJournalsIfUnused();
        }
    }

    /// <summary>A lone server's tasks: read from the database's trees, their timers set (a missed run catches up).</summary>
    private void OpenLocal()
    {
        var database = _database;
        var statuses = new Dictionary<long, PeriodicBackupStatus>();
        JsonRecords.ReadAll(database, StatusTree, json =>
            {
                var status = PeriodicBackupStatus.FromJson(json);
                statuses[status.TaskId] = status;
            },
            e => _logger.LogError(e, "A periodic backup status of database {Database} cannot be read; its task starts afresh", database.Name));
        JsonRecords.ReadAll(database, ConfigurationTree, json =>
            {
                var taskId = json.GetProperty("TaskId").GetInt64();
                var configuration = PeriodicBackupConfiguration.Parse(json, taskId, Now);
                _tasks[taskId] = new BackupTask(configuration, statuses.GetValueOrDefault(taskId) ?? new PeriodicBackupStatus { TaskId = taskId });
                _lastId = Math.Max(_lastId, taskId);
            },
            e => _logger.LogError(e, "A periodic backup task of database {Database} cannot be read; it is skipped", database.Name));
        foreach (var task in _tasks.Values)
        {
            // Before any clean-up can run: the tombstones were kept while the database was closed.
            HoldTombstones(task);
            Schedule(task, opening: true);
        }
    }

    /// <param name="cluster">How a clustered database's tasks are read from and reported to the cluster; null: every database is a lone server's.</param>
    public static Func<DocumentDatabase, IAsyncDisposable> Component(PeriodicBackupOptions options, ILoggerFactory loggerFactory, IPeriodicBackupCluster? cluster = null) =>
        database => new PeriodicBackups(database, options, loggerFactory, cluster);

    public static PeriodicBackups Of(DocumentDatabase database) =>
        database.GetComponent<PeriodicBackups>() ?? throw new InvalidOperationException($"Database '{database.Name}' was opened without periodic backups.");

    /// <summary>The time by the backups' clock.</summary>
    public DateTime Now => _options.Time.GetUtcNow().UtcDateTime;

    public IReadOnlyList<PeriodicBackupConfiguration> Configurations => _tasks.Values.Select(t => t.Configuration).OrderBy(c => c.TaskId).ToList();

    /// <summary>The task's configuration and status, or false when there is no such task.</summary>
    public bool TryGet(long taskId, out PeriodicBackupConfiguration configuration, out PeriodicBackupStatus status)
    {
        if (_tasks.TryGetValue(taskId, out var task))
        {
            lock (task.Lock)
            {
                (configuration, status) = (task.Configuration, task.Status);
            }
            return true;
        }
        (configuration, status) = (null!, null!);
        return false;
    }

    /// <summary>The task's next run (null when disabled).</summary>
    public NextBackup? NextOf(long taskId) =>
        TryGet(taskId, out var configuration, out var status) ? PeriodicBackupSchedule.Next(configuration, status, ChainLabel, Now) : null;

    /// <summary>The run of the task in progress: its operation id, start and kind; null when none runs.</summary>
    public (long OperationId, DateTime Started, bool IsFull)? RunningOf(long taskId)
    {
        if (!_tasks.TryGetValue(taskId, out var task))
        {
            return null;
        }
        lock (task.Lock)
        {
            return task.Running is { } running ? (running.Operation.Id, running.Started, running.IsFull) : null;
        }
    }

    /// <summary>
    /// Creates a task (<c>TaskId</c> 0 or absent) or replaces the configuration of an existing one
    /// (its status stays); durable when it returns. A changed folder or kind starts a new chain.
    /// </summary>
    /// <exception cref="BadRequestException">A field is wrong, or <c>TaskId</c> names no task.</exception>
    public async Task<PeriodicBackupConfiguration> UpdateAsync(JsonElement json)
    {
        var asked = AskedTaskId(json);
        ThrowIfClustered();
        await _changes.WaitAsync().ConfigureAwait(false);
        try
        {
            ObjectDisposedException.ThrowIf(_disposed, this);
            var existing = asked == 0 ? null : _tasks.GetValueOrDefault(asked) ?? throw new BadRequestException($"There is no periodic backup task {asked} in database '{_database.Name}'; send TaskId 0 to create one.");
            var taskId = asked == 0 ? _lastId + 1 : asked;
            // The creation time is the server's (the schedule counts from it), never the client's.
            var configuration = PeriodicBackupConfiguration.Parse(json, taskId, Now) with { CreatedAt = existing?.Configuration.CreatedAt ?? Now };
            await _database.EnqueueAsync(new JsonRecords.StoreCommand(ConfigurationTree, Key(taskId), configuration.ToJson())).ConfigureAwait(false);
            _lastId = Math.Max(_lastId, taskId);
            if (existing is null)
            {
                var task = new BackupTask(configuration, new PeriodicBackupStatus { TaskId = taskId });
                _tasks[taskId] = task;
                HoldTombstones(task);
                Schedule(task);
                _logger.LogInformation("Periodic backup task {Task} ({Name}) of database {Database} created: full '{Full}', incremental '{Incremental}', into {Folder}",
                    taskId, configuration.Name, _database.Name, configuration.FullBackupFrequency, configuration.IncrementalBackupFrequency, configuration.FolderPath);
            }
            else
            {
                PeriodicBackupStatus? broken = null;
                lock (existing.Lock)
                {
                    existing.Configuration = configuration;
                    // A logical chain whose tombstones were not held meanwhile (the task was disabled,
                    // or wrote the binary chain) cannot take another incremental: the next run starts a chain.
                    if (existing.TombstoneHold is null && configuration.Logical && !configuration.Disabled && existing.Status.FolderName is not null)
                    {
                        broken = existing.Status with { FolderName = null, Note = "the task's tombstones were not kept while it was disabled: its next run starts a new chain" };
                    }
                }
                if (broken is not null)
                {
                    await SaveStatusAsync(existing, broken).ConfigureAwait(false);
                }
                HoldTombstones(existing);
                Schedule(existing);
                _logger.LogInformation("Periodic backup task {Task} ({Name}) of database {Database} updated", taskId, configuration.Name, _database.Name);
            }
            StopRetainingJournalsIfUnused();
            return configuration;
        }
        finally
        {
            _changes.Release();
        }
    }

    /// <summary>Deletes a task, its configuration and status (its backups stay on disk); a run in progress is cancelled.</summary>
    /// <exception cref="BadRequestException">No such task.</exception>
    public async Task DeleteAsync(long taskId)
    {
        ThrowIfClustered();
        await _changes.WaitAsync().ConfigureAwait(false);
        try
        {
            if (!_tasks.TryGetValue(taskId, out var task))
            {
                throw new BadRequestException($"There is no periodic backup task {taskId} in database '{_database.Name}'.");
            }
            await _database.EnqueueAsync(new DeleteTaskCommand(Key(taskId))).ConfigureAwait(false);
            _tasks.TryRemove(taskId, out _);
            Task? running;
            lock (task.Lock)
            {
                task.Deleted = true;
                task.Timer?.Dispose();
                task.Timer = null;
                running = task.Running?.Completion;
                task.Running?.Cancel.Cancel();
            }
            if (running is not null)
            {
                await running.ConfigureAwait(false);
            }
            HoldTombstones(task);
            _logger.LogInformation("Periodic backup task {Task} of database {Database} deleted", taskId, _database.Name);
            StopRetainingJournalsIfUnused();
        }
        finally
        {
            _changes.Release();
        }
    }

    /// <summary>
    /// Runs the task now (RavenDB's <c>StartBackupOperation</c>), a snapshot when <paramref name="isFull"/>
    /// (or when there is no chain yet); returns its operation. When a run of the task is in
    /// progress, that run's operation: a task never runs two backups at once.
    /// </summary>
    /// <exception cref="BadRequestException">No such task.</exception>
    /// <exception cref="DatabaseUnavailableException">The database closes, or the cluster gave the task to another node.</exception>
    public DatabaseOperation StartNow(long taskId, bool isFull)
    {
        if (!_tasks.TryGetValue(taskId, out var task))
        {
            throw new BadRequestException($"There is no periodic backup task {taskId} in database '{_database.Name}'.");
        }
        // A run asked of a node the task left (a request passed on before the node learnt it) would
        // run beside the new node's: that node takes it.
        if (!IsMine(task))
        {
            throw new DatabaseUnavailableException(_database.Name, $"periodic backup task {taskId} runs on node {task.Responsible}; retry there.");
        }
        return TryStart(task, isFull) ?? throw new DatabaseUnavailableException(_database.Name, "it is closing.");
    }

    /// <summary>
    /// Sets the task's timer for its next run, or starts the run now when it is due (the catch-up).
    /// While the database is <paramref name="opening"/>, a due run waits <see cref="PeriodicBackupOptions.CatchUpDelay"/>:
    /// the database's other parts are not all built yet.
    /// </summary>
    private void Schedule(BackupTask task, bool opening = false)
    {
        NextBackup? next;
        lock (task.Lock)
        {
            task.Timer?.Dispose();
            task.Timer = null;
            // On a clustered database only the task's responsible node runs it.
            if (_disposed || task.Deleted || task.Running is not null || !IsMine(task))
            {
                return;
            }
            var now = Now;
            next = PeriodicBackupSchedule.Next(task.Configuration, task.Status, ChainLabel, now);
            if (next is not { } due)
            {
                return;
            }
            if (due.DateTime > now || opening)
            {
                var delay = due.DateTime > now ? due.DateTime - now : _options.CatchUpDelay;
                task.Timer = _options.Time.CreateTimer(static state => ((TimerState)state!).Fire(), new TimerState(this, task),
                    delay < _options.MaxTimerDelay ? delay : _options.MaxTimerDelay, Timeout.InfiniteTimeSpan);
                return;
            }
        }
        _logger.LogInformation("Periodic backup task {Task} of database {Database} is due since {Due}; running it now", task.Configuration.TaskId, _database.Name, next.Value.DateTime.ToString("o", System.Globalization.CultureInfo.InvariantCulture));
        TryStart(task, next.Value.IsFull);
    }

    /// <summary>A timer went off: run the task if it is due, else look again later (a long wait is cut in pieces).</summary>
    private void OnTimer(BackupTask task) => ScheduleLogged(task);

    /// <summary>
    /// <see cref="Schedule"/> from a timer or the end of a run, where an exception would end the
    /// process (a timer callback) or leave the task without a timer: logged, and tried again later.
    /// </summary>
    private void ScheduleLogged(BackupTask task)
    {
        try
        {
            Schedule(task);
        }
        catch (Exception e)
        {
            _logger.LogError(e, "Periodic backup task {Task} of database {Database} could not be scheduled; trying again in a minute", task.Configuration.TaskId, _database.Name);
            lock (task.Lock)
            {
                if (_disposed || task.Deleted)
                {
                    return;
                }
                task.Timer?.Dispose();
                task.Timer = _options.Time.CreateTimer(static state => ((TimerState)state!).Fire(), new TimerState(this, task), TimeSpan.FromMinutes(1), Timeout.InfiniteTimeSpan);
            }
        }
    }

    private DatabaseOperation? TryStart(BackupTask task, bool isFull)
    {
        lock (task.Lock)
        {
            if (task.Running is { } running)
            {
                return running.Operation;
            }
            if (_disposed || task.Deleted)
            {
                return null;
            }
            task.Timer?.Dispose();
            task.Timer = null;
            var progress = new BackupRun();
            var details = new BackupOperationDetails(progress, restore: false);
            var operation = _database.Operations.StartNew(details);
            var run = new RunningBackup(operation, details, Now, isFull, progress, CancellationTokenSource.CreateLinkedTokenSource(_closing.Token, operation.Killed));
            task.Running = run;
            run.Completion = Task.Run(() => RunAsync(task, run));
            return operation;
        }
    }

    private async Task RunAsync(BackupTask task, RunningBackup run)
    {
        PeriodicBackupConfiguration configuration;
        PeriodicBackupStatus status;
        lock (task.Lock)
            (configuration, status) = (task.Configuration, task.Status);
        var chain = PeriodicBackupSchedule.CurrentChain(configuration, status, ChainLabel) is { } current && Directory.Exists(current) ? current : null;
        var full = run.IsFull || chain is null;
        var folder = full ? Path.Combine(configuration.FolderPath, PeriodicBackupSchedule.ChainFolderName(run.Started, ChainLabel, configuration.FolderKind)) : chain!;
        var createdFolder = full && !Directory.Exists(folder);
        var clock = Stopwatch.StartNew();
        DeleteLeftoversOfKilledRuns(configuration, folder);
        try
        {
            if (configuration.Logical)
            {
                // A full backup's next incremental needs the tombstones after the etag it starts at.
                long lastRevisionEtag;
                using (var reader = _database.BeginRead())
                {
                    lastRevisionEtag = reader.LastRevisionEtag;
                }
                lock (task.Lock)
                {
                    task.RunHoldAfter = _database.LastEtag;
                    task.RunRevisionHoldAfter = lastRevisionEtag;
                }
            }
            var request = new BackupRequest
            {
                Folder = folder,
                Full = full,
                Minimal = configuration.MinimalIncremental,
                RetainJournals = !configuration.Logical,
                OtherChainsNeedAfter = configuration.Logical ? null : OtherChainsNeedAfter(task),
                Logical = configuration.Logical,
                // The task's hold has kept every tombstone after its chain's last file.
                TombstonesKeptAfter = configuration.Logical && !full && task.TombstoneHold is not null ? status.LastEtag : null,
                RevisionTombstonesKeptAfter = configuration.Logical && !full && task.TombstoneHold is not null ? status.LastRevisionEtag : null,
            };
            var result = await _options.Run(_database, request, run.Progress, run.Cancel.Token).ConfigureAwait(false);
            var wroteFull = result.Kind == BackupKind.Full;
            var duration = (long)clock.Elapsed.TotalMilliseconds;
            status = status with
            {
                LastFullBackup = wroteFull ? run.Started : status.LastFullBackup,
                LastFullBackupInternal = full || wroteFull ? run.Started : status.LastFullBackupInternal,
                FullBackupDurationInMs = wroteFull ? duration : status.FullBackupDurationInMs,
                LastIncrementalBackup = wroteFull ? status.LastIncrementalBackup : run.Started,
                LastIncrementalBackupInternal = full ? status.LastIncrementalBackupInternal : run.Started,
                IncrementalBackupDurationInMs = wroteFull ? status.IncrementalBackupDurationInMs : duration,
                IsFull = wroteFull,
                DurationInMs = duration,
                FolderName = Path.GetDirectoryName(result.FilePath) ?? folder,
                FileName = result.FileName,
                SizeInBytes = result.SizeInBytes,
                TransactionId = result.TransactionId,
                LastEtag = result.Etag,
                LastRevisionEtag = result.Logical ? result.RevisionEtag : null,
                LastDatabaseChangeVector = result.ChangeVector,
                LastOperationId = run.Operation.Id,
                Error = null,
                ErrorAt = null,
                Note = result.Note,
            };
            await SaveStatusAsync(task, status).ConfigureAwait(false);
            _logger.LogInformation("Periodic backup task {Task} of database {Database} wrote {Kind} file {File} ({Size} bytes) in {Duration} ms",
                configuration.TaskId, _database.Name, result.Kind, result.FilePath, result.SizeInBytes, duration);
            ApplyRetention(configuration, status.FolderName!);
            run.Details.Complete(run.Operation, BackupOperationJson.Result(result));
        }
        catch (Exception e)
        {
            if (createdFolder)
            {
                DeleteIfEmpty(folder);
            }
            var closing = _closing.IsCancellationRequested && !run.Operation.Killed.IsCancellationRequested;
            string? movedTo;
            lock (task.Lock)
            {
                movedTo = closing || run.Operation.Killed.IsCancellationRequested ? null : run.MovedTo;
            }
            var message = run.Operation.Killed.IsCancellationRequested
                ? $"The backup into '{folder}' was killed (operations/kill)."
                : movedTo is not null
                    ? $"The backup into '{folder}' was stopped: periodic backup task {configuration.TaskId} now runs on node {movedTo}."
                    : $"The backup into '{folder}' failed: {e.Message}";
            if (closing)
            {
                // Not a failure of the backup: the database closed under it. The status keeps the
                // last attempt it had, so the run is caught up when the database opens again.
                _logger.LogInformation("Periodic backup task {Task} of database {Database} stopped: the database is closing", configuration.TaskId, _database.Name);
            }
            else if (movedTo is not null)
            {
                // The task is another node's now: the cluster would refuse this node's status.
                _logger.LogInformation("Periodic backup task {Task} of database {Database}: {Message}", configuration.TaskId, _database.Name, message);
            }
            else
            {
                _logger.LogError(e, "Periodic backup task {Task} of database {Database}: {Message}", configuration.TaskId, _database.Name, message);
                status = status with
                {
                    LastFullBackupInternal = full ? run.Started : status.LastFullBackupInternal,
                    LastIncrementalBackupInternal = full ? status.LastIncrementalBackupInternal : run.Started,
                    IsFull = full,
                    DurationInMs = (long)clock.Elapsed.TotalMilliseconds,
                    LastOperationId = run.Operation.Id,
                    Error = message,
                    ErrorAt = run.Started,
                };
                await SaveStatusAsync(task, status).ConfigureAwait(false);
            }
            run.Operation.Fail(_options.FailureOf(e is OperationCanceledException or BackupException ? new BackupException(message, e) : e), 0);
        }
        finally
        {
            lock (task.Lock)
            {
                task.Running = null;
                task.RunHoldAfter = long.MaxValue;
                task.RunRevisionHoldAfter = long.MaxValue;
            }
            run.Cancel.Dispose();
            // A run that ends after its task was disabled or deleted set the retention again.
            StopRetainingJournalsIfUnused();
            ScheduleLogged(task);
        }
    }

    /// <summary>Keeps the status in memory, and on disk when the database still takes writes (a failure to store it is logged: the run's own outcome stands).</summary>
    private async Task SaveStatusAsync(BackupTask task, PeriodicBackupStatus status)
    {
        status = task.FromCluster ? status with { NodeTag = _cluster!.NodeTag } : status;
        lock (task.Lock)
        {
            if (task.Deleted)
            {
                return;
            }
            task.Status = status;
        }
        if (task.FromCluster)
        {
            await ProposeStatusAsync(status).ConfigureAwait(false);
            return;
        }
        try
        {
            await _database.EnqueueAsync(new JsonRecords.StoreCommand(StatusTree, Key(status.TaskId), status.ToJson())).ConfigureAwait(false);
        }
        catch (Exception e)
        {
            _logger.LogError(e, "The status of periodic backup task {Task} of database {Database} could not be stored", status.TaskId, _database.Name);
        }
    }

    /// <summary>The lowest transaction the other enabled tasks' chains continue from: their next incrementals need the journals after it.</summary>
    private long? OtherChainsNeedAfter(BackupTask task)
    {
        long? lowest = null;
        foreach (var other in _tasks.Values)
        {
            if (ReferenceEquals(other, task))
            {
                continue;
            }
            lock (other.Lock)
            {
                if (other.Configuration.Disabled || other.Configuration.Logical || other.Status.TransactionId is not { } after || PeriodicBackupSchedule.CurrentChain(other.Configuration, other.Status, ChainLabel) is null)
                {
                    continue;
                }
                lowest = lowest is null ? after : Math.Min(lowest.Value, after);
            }
        }
        return lowest;
    }

    private void StopRetainingJournalsIfUnused()
    {
        if (_tasks.Values.Any(t => !t.Configuration.Disabled && !t.Configuration.Logical && IsMine(t)))
        {
            return;
        }
        try
        {
            _options.StopRetainingJournals(_database);
        }
        catch (Exception e)
        {
            _logger.LogError(e, "Database {Database} has no enabled periodic backup left but could not stop keeping its journals", _database.Name);
        }
    }

    /// <summary>
    /// Registers the task with the tombstone cleaner while it is an enabled logical task (its next
    /// incremental exports the tombstones after its chain's last etag), and releases it otherwise.
    /// </summary>
    private void HoldTombstones(BackupTask task)
    {
        IDisposable? released = null;
        lock (task.Lock)
        {
            var hold = task.Configuration.Logical && !task.Configuration.Disabled && !task.Deleted && !_disposed && IsMine(task);
            if (hold && task.TombstoneHold is null)
            {
                task.TombstoneHold = _database.Tombstones.Register(new ChainTombstones(this, task));
            }
            else if (!hold)
            {
                (released, task.TombstoneHold) = (task.TombstoneHold, null);
            }
        }
        released?.Dispose();
    }

    private static string Key(long taskId) => taskId.ToString(System.Globalization.CultureInfo.InvariantCulture);

    /// <summary>Stops the timers and cancels the runs in progress, waiting for them to end.</summary>
    public async ValueTask DisposeAsync()
    {
        var running = new List<Task>();
        await _changes.WaitAsync().ConfigureAwait(false);
        try
        {
            _disposed = true;
            _closing.Cancel();
            foreach (var task in _tasks.Values)
            {
                lock (task.Lock)
                {
                    task.Timer?.Dispose();
                    task.Timer = null;
                    task.TombstoneHold?.Dispose();
                    task.TombstoneHold = null;
                    if (task.Running?.Completion is { } completion)
                    {
                        running.Add(completion);
                    }
                }
            }
        }
        finally
        {
            _changes.Release();
        }
        await Task.WhenAll(running).ConfigureAwait(false);
        _closing.Dispose();
    }
}
