using System.Text.Json;
using Jackdaw.Server.Backup;
using Jackdaw.Server.Errors;
using Jackdaw.Server.Hosting;
using Jackdaw.Server.Routing;
using Jackdaw.Server.Security;
using Jackdaw.Server.Wire;

namespace Jackdaw.Server.Handlers;

/// <summary>
/// A database's backups, with RavenDB's routes and shapes: a one-time backup, periodic backup tasks
/// (create or update, run now, delete, read) and their status, server-level as RavenDB's
/// <c>GetPeriodicBackupStatusOperation</c> asks it. Every backup runs as an operation of the
/// database (<c>operations/state</c>, <c>operations/kill</c>).
/// </summary>
public sealed partial class BackupHandler(ServerContext server) : HandlerBase(server)
{
    /// <summary>
    /// <c>POST /databases/*/admin/backup</c> with RavenDB's <c>BackupConfiguration</c>
    /// <c>{"BackupType":"Backup|Snapshot","LocalSettings":{"FolderPath"}}</c> and Jackdaw's optional
    /// <c>"IsFullBackup"</c> (default true) and <c>"MinimalIncremental"</c>: one file in the chain
    /// folder <c>FolderPath</c> itself → <c>{"OperationId","OperationNodeTag"}</c>. <c>Snapshot</c>
    /// writes the binary chain; <c>Backup</c> (the default, as RavenDB's) a logical full backup
    /// (an incremental one needs a periodic task's tombstones: <see cref="LogicalBackups"/>).
    /// </summary>
    [Route("/databases/*/admin/backup", "POST")]
    [Access(RouteAccess.DatabaseAdmin)]
    public async ValueTask BackupOnce(RequestContext context)
    {
        var database = Server.Databases.GetDatabase(context.GetCaptureMemory(0));
        BackupRequest request;
        using (var json = await DocumentBodies.ReadJsonAsync(context.Request.BodyReader, context.RequestAborted).ConfigureAwait(false))
        {
            var root = json?.RootElement ?? default;
            var (backupType, folder, minimal) = PeriodicBackupConfiguration.ParseDestination(root);
            request = new BackupRequest
            {
                Folder = folder,
                Full = !root.TryGetProperty("IsFullBackup", out var full) || full.ValueKind switch
                {
                    JsonValueKind.True or JsonValueKind.Null => true,
                    JsonValueKind.False => false,
                    _ => throw new BadRequestException($"IsFullBackup must be true or false, not {full.GetRawText()}."),
                },
                Minimal = minimal,
                Logical = backupType == "Backup",
            };
        }
        var run = new BackupRun();
        var operation = BackupOperations.Start(database.Operations, $"The backup of database '{database.Name}' into '{request.Folder}'", run, restore: false,
            async cancel => BackupOperationJson.Result(await DatabaseBackups.RunAsync(database, request, run, cancel).ConfigureAwait(false)),
            ErrorMapping.FailureOf, context.Server.LoggerFactory.CreateLogger<BackupHandler>());
        await WriteOperationIdAsync(context, operation.Id).ConfigureAwait(false);
    }

    /// <summary>
    /// <c>POST /databases/*/admin/periodic-backup</c> with RavenDB's <c>PeriodicBackupConfiguration</c>
    /// (<c>TaskId</c> 0 creates a task) → <c>{"RaftCommandIndex","TaskId"}</c>; stored durably.
    /// </summary>
    [Route("/databases/*/admin/periodic-backup", "POST")]
    [Access(RouteAccess.DatabaseAdmin)]
    public async ValueTask UpdatePeriodic(RequestContext context)
    {
        if (Server.Cluster.RecordOf(context.GetCaptureMemory(0).ToString()) is { } record)
        {
            await UpdateClusteredAsync(context, record).ConfigureAwait(false);
            return;
        }
        var database = Server.Databases.GetDatabase(context.GetCaptureMemory(0));
        PeriodicBackupConfiguration configuration;
        using (var json = await DocumentBodies.ReadJsonAsync(context.Request.BodyReader, context.RequestAborted).ConfigureAwait(false))
        {
            configuration = await PeriodicBackups.Of(database).UpdateAsync(json?.RootElement ?? default).ConfigureAwait(false);
        }
        var writer = context.StartJson();
        writer.WriteStartObject();
        writer.WriteNumber("RaftCommandIndex", configuration.TaskId);
        writer.WriteNumber("TaskId", configuration.TaskId);
        writer.WriteEndObject();
        await context.CompleteJsonAsync().ConfigureAwait(false);
    }

    /// <summary>
    /// <c>POST /databases/*/admin/backup/database?isFullBackup=&amp;taskId=</c> (RavenDB's
    /// <c>StartBackupOperation</c>): runs the task now → <c>{"ResponsibleNode":"A","OperationId"}</c>;
    /// the operation of the run in progress when there is one.
    /// </summary>
    [Route("/databases/*/admin/backup/database", "POST")]
    [Access(RouteAccess.DatabaseAdmin)]
    public async ValueTask StartPeriodic(RequestContext context)
    {
        var database = Server.Databases.GetDatabase(context.GetCaptureMemory(0));
        var query = new UrlQuery(context.Request.QueryString.Value);
        var taskId = TaskIdOf(query, "taskId");
        var isFull = query.GetString("isFullBackup") switch
        {
            null => true,
            var value when value.Equals("true", StringComparison.OrdinalIgnoreCase) => true,
            var value when value.Equals("false", StringComparison.OrdinalIgnoreCase) => false,
            var value => throw new BadRequestException($"Query parameter 'isFullBackup' is '{value}'; it is true or false."),
        };
        // On a clustered database the task's responsible node runs it (RavenDB's server passes it on).
        if (await ForwardedToResponsibleAsync(context, database.Name, taskId).ConfigureAwait(false))
        {
            return;
        }
        var operation = PeriodicBackups.Of(database).StartNow(taskId, isFull);
        var writer = context.StartJson();
        writer.WriteStartObject();
        writer.WriteString("ResponsibleNode", context.Server.NodeTag);
        writer.WriteNumber("OperationId", operation.Id);
        writer.WriteEndObject();
        await context.CompleteJsonAsync().ConfigureAwait(false);
    }

    /// <summary>
    /// <c>GET /periodic-backup/status?name=&amp;taskId=</c> (RavenDB's <c>GetPeriodicBackupStatusOperation</c>)
    /// → <c>{"IsSharded":false,"Status":{...}}</c> (<see cref="PeriodicBackupJson"/>); <c>Status</c> null for an unknown task.
    /// </summary>
    [Route("/periodic-backup/status", "GET")]
    [Access(RouteAccess.ValidUser)]
    public ValueTask ServerStatus(RequestContext context)
    {
        var query = new UrlQuery(context.Request.QueryString.Value);
        var name = query.GetString("name") ?? throw new BadRequestException("Query parameter 'name' (the database) is required: /periodic-backup/status?name=Northwind&taskId=1.");
        AuthorizeRead(context, name);
        return WriteStatusAsync(context, Server.Databases.GetDatabase(name), TaskIdOf(query, "taskId"));
    }

    /// <summary><c>GET /databases/*/periodic-backup/status?taskId=</c>: the same answer, under the database.</summary>
    [Route("/databases/*/periodic-backup/status", "GET")]
    [Access(RouteAccess.DatabaseRead)]
    public ValueTask DatabaseStatus(RequestContext context) =>
        WriteStatusAsync(context, Server.Databases.GetDatabase(context.GetCaptureMemory(0)), TaskIdOf(new UrlQuery(context.Request.QueryString.Value), "taskId"));

    /// <summary>
    /// <c>GET /periodic-backup?name=&amp;taskId=</c>: the task's configuration as stored (RavenDB's
    /// <c>PeriodicBackupConfiguration</c>); 404 for an unknown task.
    /// </summary>
    [Route("/periodic-backup", "GET")]
    [Access(RouteAccess.ValidUser)]
    public ValueTask Configuration(RequestContext context)
    {
        var query = new UrlQuery(context.Request.QueryString.Value);
        var name = query.GetString("name") ?? throw new BadRequestException("Query parameter 'name' (the database) is required: /periodic-backup?name=Northwind&taskId=1.");
        AuthorizeRead(context, name);
        var backups = PeriodicBackups.Of(Server.Databases.GetDatabase(name));
        if (!backups.TryGet(TaskIdOf(query, "taskId"), out var configuration, out _))
        {
            return NotFound(context);
        }
        var writer = context.StartJson();
        configuration.ToNode().WriteTo(writer);
        return context.CompleteJsonAsync();
    }

    /// <summary>
    /// <c>GET /databases/*/task?key=&amp;type=Backup</c> (RavenDB's <c>GetOngoingTaskInfoOperation</c>):
    /// <c>OngoingTaskBackup</c>; 404 for an unknown task. Other task types are not Jackdaw's.
    /// </summary>
    [Route("/databases/*/task", "GET")]
    [Access(RouteAccess.DatabaseRead)]
    public ValueTask OngoingTask(RequestContext context)
    {
        var database = Server.Databases.GetDatabase(context.GetCaptureMemory(0));
        var query = new UrlQuery(context.Request.QueryString.Value);
        RequireBackupType(query);
        var backups = PeriodicBackups.Of(database);
        var taskName = query.GetString("taskName");
        var taskId = taskName is null
            ? TaskIdOf(query, "key")
            : backups.Configurations.FirstOrDefault(c => string.Equals(c.Name, taskName, StringComparison.OrdinalIgnoreCase))?.TaskId ?? 0;
        if (!backups.TryGet(taskId, out var configuration, out var status))
        {
            return NotFound(context);
        }
        var (tag, url) = Responsible(context, backups, taskId);
        PeriodicBackupJson.WriteOngoingTask(context.StartJson(), configuration, status, backups.NextOf(taskId), backups.RunningOf(taskId), tag, url, backups.Now);
        return context.CompleteJsonAsync();
    }

    /// <summary>
    /// <c>GET /databases/*/tasks</c> (RavenDB's <c>GetOngoingTasksOperation</c>): every periodic
    /// backup task of the database as <c>OngoingTaskBackup</c> in task id order →
    /// <c>{"OngoingTasksList":[...],"SubscriptionsCount","PullReplications":[]}</c>. Jackdaw's only
    /// ongoing tasks are backups; subscriptions are counted, as RavenDB's answer does.
    /// </summary>
    [Route("/databases/*/tasks", "GET")]
    [Access(RouteAccess.DatabaseRead)]
    public ValueTask OngoingTasks(RequestContext context)
    {
        var database = Server.Databases.GetDatabase(context.GetCaptureMemory(0));
        var backups = PeriodicBackups.Of(database);
        var writer = context.StartJson();
        writer.WriteStartObject();
        writer.WriteStartArray("OngoingTasksList");
        foreach (var task in backups.Configurations)
        {
            // A task deleted since the list was read is left out.
            if (backups.TryGet(task.TaskId, out var configuration, out var status))
            {
                var (tag, url) = Responsible(context, backups, task.TaskId);
                PeriodicBackupJson.WriteOngoingTask(writer, configuration, status, backups.NextOf(task.TaskId), backups.RunningOf(task.TaskId), tag, url, backups.Now);
            }
        }
        writer.WriteEndArray();
        writer.WriteNumber("SubscriptionsCount", Subscriptions.SubscriptionStore.Of(database).Subscriptions.Count);
        writer.WriteStartArray("PullReplications");
        writer.WriteEndArray();
        writer.WriteEndObject();
        return context.CompleteJsonAsync();
    }

    /// <summary>
    /// <c>DELETE /databases/*/admin/tasks?id=&amp;type=Backup</c> (RavenDB's <c>DeleteOngoingTaskOperation</c>)
    /// → <c>{"RaftCommandIndex","TaskId"}</c>; the chains on disk stay.
    /// </summary>
    [Route("/databases/*/admin/tasks", "DELETE")]
    [Access(RouteAccess.DatabaseAdmin)]
    public async ValueTask DeleteTask(RequestContext context)
    {
        var query = new UrlQuery(context.Request.QueryString.Value);
        RequireBackupType(query);
        var taskId = TaskIdOf(query, "id");
        if (Server.Cluster.RecordOf(context.GetCaptureMemory(0).ToString()) is { } record)
        {
            await DeleteClusteredAsync(context, record, taskId).ConfigureAwait(false);
            return;
        }
        var database = Server.Databases.GetDatabase(context.GetCaptureMemory(0));
        await PeriodicBackups.Of(database).DeleteAsync(taskId).ConfigureAwait(false);
        var writer = context.StartJson();
        writer.WriteStartObject();
        writer.WriteNumber("RaftCommandIndex", taskId);
        writer.WriteNumber("TaskId", taskId);
        writer.WriteEndObject();
        await context.CompleteJsonAsync().ConfigureAwait(false);
    }

    private static ValueTask WriteStatusAsync(RequestContext context, Databases.DocumentDatabase database, long taskId)
    {
        var backups = PeriodicBackups.Of(database);
        var writer = context.StartJson();
        writer.WriteStartObject();
        writer.WriteBoolean("IsSharded", false);
        writer.WritePropertyName("Status");
        if (backups.TryGet(taskId, out var configuration, out var status))
        {
            PeriodicBackupJson.WriteStatus(writer, configuration, status, backups.NextOf(taskId), backups.RunningOf(taskId), context.Server.NodeTag, backups.Now);
        }
        else
        {
            writer.WriteNullValue();
        }
        writer.WriteEndObject();
        return context.CompleteJsonAsync();
    }

    /// <summary>A server-level route naming a database: the caller needs read access to it, as under <c>/databases/{name}/</c>.</summary>
    private static void AuthorizeRead(RequestContext context, string database)
    {
        if (context.Caller is { } caller && Authorizer.Authorize(caller, RouteAccess.DatabaseRead, database) is { } denied)
        {
            throw new AuthorizationException(denied.NotAuthenticated, denied.Message);
        }
    }

    private static void RequireBackupType(UrlQuery query)
    {
        var type = query.GetString("type");
        if (type is not null && !type.Equals("Backup", StringComparison.OrdinalIgnoreCase))
        {
            throw new FeatureNotSupportedException($"Ongoing tasks of type '{type}' are not Jackdaw's: it has periodic backups (type=Backup); subscriptions are at /databases/{{name}}/subscriptions.");
        }
    }

    private static long TaskIdOf(UrlQuery query, string parameter) =>
        query.TryGetRaw(parameter, out _)
            ? query.GetInt64(parameter, 0, min: 1)
            : throw new BadRequestException($"Query parameter '{parameter}' (the periodic backup task's id) is required.");

    private static ValueTask NotFound(RequestContext context)
    {
        context.Response.StatusCode = StatusCodes.Status404NotFound;
        context.Response.ContentLength = 0;
        return ValueTask.CompletedTask;
    }
}
