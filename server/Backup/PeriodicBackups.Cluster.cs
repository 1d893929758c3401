using System.Text.Json;
using Jackdaw.Server.Databases;
using Jackdaw.Server.Errors;
using Microsoft.Extensions.Logging;

namespace Jackdaw.Server.Backup;

/// <summary>
/// The periodic backup tasks of a clustered database: their configurations, the node responsible for
/// each and the last status are in the database's record (<see cref="IPeriodicBackupCluster"/>);
/// every node knows every task, only the responsible node runs it and proposes its status after each
/// run. Its chain folders carry its node tag (<see cref="ChainLabel"/>), so a node never adds an
/// incremental file to a chain another node started: the first run of a node that takes a task over
/// is a snapshot.
/// </summary>
public sealed partial class PeriodicBackups
{
    private readonly IPeriodicBackupCluster? _cluster;

    /// <summary>True when the cluster keeps this database's tasks (it has a record of it, or this member is still loading its state).</summary>
    public bool IsClustered => _cluster is { } cluster && (cluster.Keeps(_database.Name) || cluster.IsLoading(_database.Name));

    /// <summary>
    /// What the task's chain folders are named after: the database, and on a clustered database its
    /// node too (RavenDB's <c>….ravendb-{database}-{node}-{type}</c>), so that each node finds only its own chains.
    /// </summary>
    private string ChainLabel => IsClustered ? $"{_database.Name}-{_cluster!.NodeTag}" : _database.Name;

    /// <summary>Whether this node runs the task: always on a lone server; on a clustered database when it is the responsible node.</summary>
    private bool IsMine(BackupTask task) => !task.FromCluster || task.Responsible == _cluster?.NodeTag;

    /// <summary>The node that runs a clustered database's task and its URL; null for a lone server's task or an unknown one.</summary>
    public (string Tag, string? Url)? ResponsibleOf(long taskId)
    {
        if (!_tasks.TryGetValue(taskId, out var task))
        {
            return null;
        }
        lock (task.Lock)
        {
            return task.FromCluster && task.Responsible is { } tag ? (tag, task.ResponsibleUrl) : null;
        }
    }

    /// <summary>
    /// Brings this node's tasks in line with the cluster's record: new, changed, moved to or from this
    /// node (its timer set or stopped), deleted (a run in progress is cancelled). Called by the
    /// cluster after each change of the record's tasks; quick, in memory.
    /// </summary>
    public async Task RefreshFromClusterAsync()
    {
        if (_cluster is null || !IsClustered)
        {
            return;
        }
        await _changes.WaitAsync().ConfigureAwait(false);
        try
        {
            if (!_disposed)
            {
                RefreshCore(opening: false);
                StopRetainingJournalsIfUnused();
            }
        }
        finally
        {
            _changes.Release();
        }
    }

    /// <summary>
    /// The tasks a lone server keeps in this database's trees, with their statuses (what a server
    /// that founds a cluster puts in the record).
    /// </summary>
    public IReadOnlyList<(PeriodicBackupConfiguration Configuration, PeriodicBackupStatus Status)> StoredTasks()
    {
        var statuses = new Dictionary<long, PeriodicBackupStatus>();
        var tasks = new List<(PeriodicBackupConfiguration, PeriodicBackupStatus)>();
        JsonRecords.ReadAll(_database, StatusTree, json =>
            {
                var status = PeriodicBackupStatus.FromJson(json);
                statuses[status.TaskId] = status;
            },
            e => _logger.LogError(e, "A periodic backup status of database {Database} cannot be read", _database.Name));
        JsonRecords.ReadAll(_database, ConfigurationTree, json =>
            {
                var taskId = json.GetProperty("TaskId").GetInt64();
                tasks.Add((PeriodicBackupConfiguration.Parse(json, taskId, Now), statuses.GetValueOrDefault(taskId) ?? new PeriodicBackupStatus { TaskId = taskId }));
            },
            e => _logger.LogError(e, "A periodic backup task of database {Database} cannot be read; it is skipped", _database.Name));
        return tasks;
    }

    private void RefreshCore(bool opening)
    {
        var cluster = _cluster!;
        // A lone server's tasks (before it founded the cluster) are not the cluster's, whatever their ids.
        foreach (var local in _tasks.Values.Where(t => !t.FromCluster).ToList())
        {
            Drop(local);
        }
        var seen = new HashSet<long>();
        foreach (var entry in cluster.Current(_database.Name))
        {
            PeriodicBackupConfiguration configuration;
            try
            {
                using var json = JsonDocument.Parse(entry.Configuration);
                configuration = PeriodicBackupConfiguration.Parse(json.RootElement, entry.TaskId, Now) with
                {
                    Disabled = entry.Disabled,
                    MentorNode = entry.MentorNode,
                    PinToMentorNode = entry.PinToMentorNode,
                };
            }
            catch (Exception e) when (e is BadRequestException or JsonException)
            {
                _logger.LogError(e, "Periodic backup task {Task} of database {Database} in the cluster's record cannot be read on this node; it is skipped", entry.TaskId, _database.Name);
                continue;
            }
            seen.Add(entry.TaskId);
            if (!_tasks.TryGetValue(entry.TaskId, out var task))
            {
                task = new BackupTask(configuration, entry.Status ?? new PeriodicBackupStatus { TaskId = entry.TaskId })
                {
                    FromCluster = true,
                    Responsible = entry.ResponsibleNode,
                    ResponsibleUrl = entry.ResponsibleUrl,
                };
                _tasks[entry.TaskId] = task;
            }
            else
            {
                Adopt(task, entry, configuration);
            }
            HoldTombstones(task);
            Schedule(task, opening);
        }
        foreach (var gone in _tasks.Values.Where(t => !seen.Contains(t.Configuration.TaskId)).ToList())
        {
            Drop(gone);
            _logger.LogInformation("Periodic backup task {Task} of database {Database} was deleted from the cluster's record", gone.Configuration.TaskId, _database.Name);
        }
    }

    /// <summary>A known task takes the record's configuration, responsible node and status (when it is of a later run than this node's own).</summary>
    private void Adopt(BackupTask task, ClusteredBackupTask entry, PeriodicBackupConfiguration configuration)
    {
        bool moved;
        lock (task.Lock)
        {
            var wasMine = IsMine(task);
            task.Configuration = configuration;
            task.Responsible = entry.ResponsibleNode;
            task.ResponsibleUrl = entry.ResponsibleUrl;
            moved = wasMine != IsMine(task);
            // This node's own newer status stays when its proposal did not go through.
            if (entry.Status is { } status && (LastAttempt(task.Status) is not { } mine || LastAttempt(status) > mine))
            {
                task.Status = status;
            }
            // A logical chain of this node whose tombstones were not held meanwhile (the task was
            // disabled, or ran on another node) cannot take another incremental.
            if (task.TombstoneHold is null && configuration.Logical && !configuration.Disabled && IsMine(task)
                && PeriodicBackupSchedule.CurrentChain(configuration, task.Status, ChainLabel) is not null)
            {
                task.Status = task.Status with { FolderName = null, Note = "the task's tombstones were not kept on this node meanwhile: its next run starts a new chain" };
            }
        }
        if (moved)
        {
            _logger.LogInformation("Periodic backup task {Task} of database {Database} now runs on node {Node}", entry.TaskId, _database.Name, entry.ResponsibleNode);
        }
        StopRunMovedAway(task);
    }

    /// <summary>
    /// Cancels this node's run of a task the cluster gave to another node (its status would be
    /// refused, and the other node starts its own run): the run ends as a failed one does, its partial
    /// output removed, without a status.
    /// </summary>
    private void StopRunMovedAway(BackupTask task)
    {
        lock (task.Lock)
        {
            if (IsMine(task) || task.Running is not { MovedTo: null } running)
            {
                return;
            }
            running.MovedTo = task.Responsible;
            running.Cancel.Cancel();
        }
        _logger.LogWarning("Periodic backup task {Task} of database {Database} now runs on node {Node}: the run in progress here is cancelled", task.Configuration.TaskId, _database.Name, task.Responsible);
    }

    /// <summary>Forgets a task here (its timer stopped, a run in progress cancelled, its tombstones released); the cluster's record is not touched.</summary>
    private void Drop(BackupTask task)
    {
        _tasks.TryRemove(task.Configuration.TaskId, out _);
        lock (task.Lock)
        {
            task.Deleted = true;
            task.Timer?.Dispose();
            task.Timer = null;
            task.Running?.Cancel.Cancel();
        }
        HoldTombstones(task);
    }

    /// <summary>Records a clustered task's status in the cluster (a failure is logged: the run's own outcome stands, and this node keeps its status).</summary>
    private async Task ProposeStatusAsync(PeriodicBackupStatus status)
    {
        try
        {
            await _cluster!.ProposeStatusAsync(_database.Name, status, _closing.Token).ConfigureAwait(false);
        }
        catch (Exception e) when (!_closing.IsCancellationRequested)
        {
            _logger.LogWarning(e, "The status of periodic backup task {Task} of database {Database} could not be recorded in the cluster", status.TaskId, _database.Name);
        }
        catch (OperationCanceledException)
        {
            // The database closes: the run catches up when it opens again, if the status did not go through.
        }
    }

    /// <summary>The <c>TaskId</c> a configuration asks for: 0 (or absent) for a new task.</summary>
    /// <exception cref="BadRequestException">Not a whole number from 0.</exception>
    public static long AskedTaskId(JsonElement json) =>
        json.ValueKind == JsonValueKind.Object && json.TryGetProperty("TaskId", out var id) && id.ValueKind == JsonValueKind.Number
            ? id.TryGetInt64(out var value) && value >= 0 ? value : throw new BadRequestException("TaskId must be a whole number, 0 for a new task.")
            : 0;

    private void ThrowIfClustered()
    {
        if (IsClustered)
        {
            throw new BadRequestException($"The periodic backup tasks of database '{_database.Name}' are kept by the cluster: change them through the cluster's routes.");
        }
    }

    private static DateTime? LastAttempt(PeriodicBackupStatus status) =>
        status.LastFullBackupInternal is { } full && (status.LastIncrementalBackupInternal is not { } incremental || full >= incremental)
            ? full
            : status.LastIncrementalBackupInternal;
}
