using System.Globalization;
using System.Net.Http.Json;
using System.Text;
using System.Text.Json;
using Jackdaw.Server.Backup;
using Jackdaw.Server.Errors;

namespace Jackdaw.Server.Cluster;

/// <summary>
/// Periodic backup tasks of clustered databases, in their records: created, replaced, deleted and
/// toggled on the leader (the request was checked on the node that got it), each given one
/// responsible node; the leader moves a task whose responsible node stopped answering, and the
/// responsible node records each run's status.
/// </summary>
public sealed partial class ClusterNode
{
    /// <summary>Where a member that does not lead sends the status of a backup run to the leader.</summary>
    public const string BackupStatusPath = "/admin/cluster/backup-status";

    /// <summary>
    /// Creates (<c>TaskId</c> 0) or replaces a task of <paramref name="database"/>'s record; returns
    /// the state's etag with the change and the task's id (the creating command's log index).
    /// </summary>
    /// <exception cref="BadRequestException">No such task to replace, or a mentor that does not hold the database.</exception>
    public async Task<(long Etag, long TaskId)> PutBackupTaskAsync(string database, PeriodicBackupConfiguration configuration, string commandId, CancellationToken token)
    {
        var record = RequireRecord(database);
        if (State.WasApplied(commandId) && CreatedBy(record, commandId) is { } done)
        {
            return (State.Etag, done.TaskId);
        }
        var existing = CheckBackupTask(record, configuration);
        var status = MemberStatus;
        bool Up(string tag) => tag == NodeTag || status.GetValueOrDefault(tag);
        // The mentor when it holds the database and is up (or pinned); else a task keeps its node,
        // and a new one is placed by a hash of its id (known when applied) among the nodes up.
        var responsible = configuration.MentorNode is { } mentor && (configuration.PinToMentorNode || Up(mentor)) ? mentor : null;
        var createdAt = existing is null ? DateTime.UtcNow : CreatedAtOf(existing);
        var command = new ClusterCommand(commandId, ClusterCommandKind.PutBackupTask)
        {
            Database = record.Name,
            Backup = new ClusterBackupChange(existing?.TaskId ?? 0)
            {
                Name = configuration.Name,
                Configuration = Encoding.UTF8.GetString((configuration with { CreatedAt = createdAt }).ToJson()),
                Disabled = configuration.Disabled,
                MentorNode = configuration.MentorNode,
                PinToMentorNode = configuration.PinToMentorNode,
                ResponsibleNode = responsible,
                // Nor a node still catching up (a promotable, a rehab): its backup would lack documents.
                Avoid = [.. record.Nodes.Where(n => !Up(n) || record.IsCatchingUp(n))],
            },
        };
        await ExecuteAsync(command, token).ConfigureAwait(false);
        var taskId = existing?.TaskId ?? CreatedBy(RequireRecord(database), commandId)?.TaskId
            ?? throw new ClusterException($"The periodic backup task of database '{database}' was created and deleted at once.");
        return (State.Etag, taskId);
    }

    /// <summary>
    /// Checks a configuration against <paramref name="record"/> before anything is committed: the
    /// task it replaces exists, its mentor holds the database. Returns the task it replaces.
    /// </summary>
    /// <exception cref="BadRequestException">The configuration does not fit the record.</exception>
    public static ClusterBackupTask? CheckBackupTask(ClusterDatabaseRecord record, PeriodicBackupConfiguration configuration)
    {
        ClusterBackupTask? existing = null;
        if (configuration.TaskId != 0 && !record.Backups.TryGetValue(configuration.TaskId, out existing))
        {
            throw new BadRequestException($"There is no periodic backup task {configuration.TaskId} in database '{record.Name}'; send TaskId 0 to create one.");
        }
        if (configuration.MentorNode is { } mentor && !record.Nodes.Contains(mentor))
        {
            throw new BadRequestException($"MentorNode '{mentor}' does not hold database '{record.Name}' (it is on {string.Join(", ", record.Nodes)}).");
        }
        return existing;
    }

    /// <summary>Deletes task <paramref name="taskId"/> of <paramref name="database"/>'s record (its chains on disk stay); returns the state's etag.</summary>
    /// <exception cref="BadRequestException">No such task.</exception>
    public async Task<long> DeleteBackupTaskAsync(string database, long taskId, string commandId, CancellationToken token) =>
        await ExecuteBackupCommandAsync(ClusterCommandKind.DeleteBackupTask, database, new ClusterBackupChange(taskId), commandId, token).ConfigureAwait(false);

    /// <summary>Disables or enables task <paramref name="taskId"/> of <paramref name="database"/>'s record; returns the state's etag.</summary>
    /// <exception cref="BadRequestException">No such task.</exception>
    public async Task<long> SetBackupTaskDisabledAsync(string database, long taskId, bool disabled, string commandId, CancellationToken token) =>
        await ExecuteBackupCommandAsync(ClusterCommandKind.SetBackupTaskDisabled, database, new ClusterBackupChange(taskId) { Disabled = disabled }, commandId, token).ConfigureAwait(false);

    private async Task<long> ExecuteBackupCommandAsync(ClusterCommandKind kind, string database, ClusterBackupChange change, string commandId, CancellationToken token)
    {
        var record = RequireRecord(database);
        if (!record.Backups.ContainsKey(change.TaskId))
        {
            if (State.WasApplied(commandId))
            {
                return State.Etag;
            }
            throw new BadRequestException($"There is no periodic backup task {change.TaskId} in database '{record.Name}'.");
        }
        await ExecuteAsync(new ClusterCommand(commandId, kind) { Database = record.Name, Backup = change }, token).ConfigureAwait(false);
        return State.Etag;
    }

    /// <summary>
    /// Records the status of a run of this node in the record (on the leader, else sent to it:
    /// <see cref="BackupStatusPath"/>); returns once committed.
    /// </summary>
    /// <exception cref="ClusterException">Refused: this node no longer runs the task, or the task is gone.</exception>
    public async Task ProposeBackupStatusAsync(string database, PeriodicBackupStatus status, CancellationToken token)
    {
        var command = new ClusterCommand(ClusterCommand.NewId(), ClusterCommandKind.UpdateBackupStatus)
        {
            Database = database,
            Backup = new ClusterBackupChange(status.TaskId) { Status = status },
        };
        if (IsLeader)
        {
            await ExecuteAsync(command, token).ConfigureAwait(false);
        }
        else
        {
            await SendToLeaderAsync(command, token, BackupStatusPath).ConfigureAwait(false);
        }
    }

    /// <summary>
    /// On the leader, every second (with the subscriptions' mentors): a task whose responsible node
    /// has not answered for <see cref="MentorDownAfter"/> goes to another node of the database (its
    /// mentor when up, else the hash choice among the nodes that answer), unless it is pinned to its
    /// mentor; a task whose mentor answers again goes back to it once the run in progress on its
    /// current node (asked) ended (<see cref="ClusterState.PlanBackupMove"/>).
    /// </summary>
    private async Task WatchBackupsAsync(ClusterState state, Dictionary<string, DateTime> downSince, DateTime now, CancellationToken token)
    {
        bool Down(string tag) => downSince.TryGetValue(tag, out var since) && now - since >= MentorDownAfter;
        bool Usable(string tag) => !downSince.ContainsKey(tag);
        foreach (var record in state.Databases.Values)
        {
            foreach (var task in record.Backups.Values)
            {
                // A node still catching up (a promotable or rehab) takes no task while another answers.
                if (ClusterState.PlanBackupMove(task, record.Nodes, Down, t => Usable(t) && !record.IsCatchingUp(t)) is not var (next, waitsForRun)
                    || (waitsForRun && await RunsBackupAsync(state, record.Name, task, token).ConfigureAwait(false)))
                {
                    continue;
                }
                await ExecuteAsync(new ClusterCommand(ClusterCommand.NewId(), ClusterCommandKind.SetBackupResponsibleNode)
                {
                    Database = record.Name,
                    Backup = new ClusterBackupChange(task.TaskId) { ResponsibleNode = next },
                }, token).ConfigureAwait(false);
                LogBackupMoved(_logger, task.TaskId, record.Name, task.ResponsibleNode, next);
            }
        }
    }

    /// <summary>
    /// Whether the task's responsible node is running it now (this node's own runs, else its
    /// <c>GET /databases/{db}/task</c>'s <c>OnGoingBackup</c>); false when it does not answer within 2 s.
    /// </summary>
    private async Task<bool> RunsBackupAsync(ClusterState state, string database, ClusterBackupTask task, CancellationToken token)
    {
        try
        {
            if (task.ResponsibleNode == NodeTag)
            {
                return PeriodicBackups.Of(_databases().GetDatabase(database)).RunningOf(task.TaskId) is not null;
            }
            if (!state.Members.TryGetValue(task.ResponsibleNode, out var url))
            {
                return false;
            }
            using var limit = CancellationTokenSource.CreateLinkedTokenSource(token);
            limit.CancelAfter(TimeSpan.FromSeconds(2));
            var json = await _client.GetFromJsonAsync<JsonElement>(
                $"{url}/databases/{Uri.EscapeDataString(database)}/task?key={task.TaskId.ToString(CultureInfo.InvariantCulture)}&type=Backup", limit.Token).ConfigureAwait(false);
            return json.ValueKind == JsonValueKind.Object && json.TryGetProperty("OnGoingBackup", out var running) && running.ValueKind == JsonValueKind.Object;
        }
        catch (Exception e) when (e is not OperationCanceledException || !token.IsCancellationRequested)
        {
            // No answer, or no such copy: nothing known to run there, so the task moves.
            return false;
        }
    }

    /// <summary>
    /// Puts the periodic backup tasks of this node's database <paramref name="database"/> in its record
    /// (a lone server founding a cluster), with their statuses; each gets a cluster-wide id.
    /// </summary>
    private async Task RecordLocalBackupsAsync(string database, CancellationToken token)
    {
        try
        {
            var backups = PeriodicBackups.Of(_databases().GetDatabase(database));
            foreach (var (configuration, status) in backups.StoredTasks())
            {
                var commandId = $"found/backups/{database}/{configuration.TaskId}";
                if (State.WasApplied(commandId))
                {
                    continue;
                }
                await ExecuteAsync(new ClusterCommand(commandId, ClusterCommandKind.PutBackupTask)
                {
                    Database = database,
                    Backup = new ClusterBackupChange(0)
                    {
                        Name = configuration.Name,
                        Configuration = Encoding.UTF8.GetString(configuration.ToJson()),
                        Disabled = configuration.Disabled,
                        ResponsibleNode = NodeTag,
                        Status = status with { NodeTag = NodeTag },
                    },
                }, token).ConfigureAwait(false);
            }
        }
        catch (Exception e) when (e is not OperationCanceledException)
        {
            // The cluster is founded all the same; the tasks stay in this node's trees, unused (create them again).
            LogBackupsNotRecorded(_logger, e, database);
        }
    }

    private static ClusterBackupTask? CreatedBy(ClusterDatabaseRecord record, string commandId) =>
        record.Backups.Values.FirstOrDefault(t => t.CreatedBy == commandId);

    private static DateTime CreatedAtOf(ClusterBackupTask task)
    {
        using var json = JsonDocument.Parse(task.Configuration);
        return json.RootElement.TryGetProperty("CreatedAt", out var at) && at.ValueKind == JsonValueKind.String && at.TryGetDateTime(out var time)
            ? time.ToUniversalTime()
            : DateTime.UtcNow;
    }

    [LoggerMessage(EventId = 740, Level = LogLevel.Information, Message = "Periodic backup task {Task} of database {Database} moves from node {From} to node {To}")]
    private static partial void LogBackupMoved(ILogger logger, long task, string database, string from, string to);

    [LoggerMessage(EventId = 741, Level = LogLevel.Error, Message = "The periodic backup tasks of database {Database} could not be put in its record; they stay in this node's storage, unused")]
    private static partial void LogBackupsNotRecorded(ILogger logger, Exception exception, string database);
}
