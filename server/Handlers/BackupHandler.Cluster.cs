using System.Buffers;
using System.Globalization;
using System.Text.Json;
using Jackdaw.Server.Backup;
using Jackdaw.Server.Cluster;
using Jackdaw.Server.Errors;
using Jackdaw.Server.Hosting;
using Jackdaw.Server.Routing;
using Jackdaw.Server.Security;
using Jackdaw.Server.Wire;

namespace Jackdaw.Server.Handlers;

// The periodic backup routes of a clustered database (one the cluster's state has a record of): a
// change is checked here, committed in the record by the leader (a member that does not lead passes
// the request on) and answered once this node applied it; a run-now goes to the task's responsible
// node. A lone server keeps its tasks locally, as before clusters.
public sealed partial class BackupHandler
{
    /// <summary>The header a run-now passed on to the task's responsible node carries, so that it is passed on once.</summary>
    private const string ForwardedToResponsibleHeader = "Jackdaw-Backup-Forwarded-By";

    /// <summary>
    /// <c>POST /databases/*/admin/tasks/state?key=&amp;type=Backup&amp;disable=</c> (RavenDB's
    /// <c>ToggleOngoingTaskStateOperation</c>): disables or enables a periodic backup task →
    /// <c>{"TaskId","RaftCommandIndex","ResponsibleNode"}</c>; 400 for an unknown task.
    /// </summary>
    [Route("/databases/*/admin/tasks/state", "POST")]
    [Access(RouteAccess.DatabaseAdmin)]
    public async ValueTask ToggleTaskState(RequestContext context)
    {
        var name = context.GetCaptureMemory(0).ToString();
        var query = new UrlQuery(context.Request.QueryString.Value);
        RequireBackupType(query);
        var taskId = TaskIdOf(query, "key");
        var disable = query.GetString("disable") switch
        {
            var value when "true".Equals(value, StringComparison.OrdinalIgnoreCase) => true,
            var value when "false".Equals(value, StringComparison.OrdinalIgnoreCase) => false,
            var value => throw new BadRequestException($"Query parameter 'disable' is '{value}'; it is true or false."),
        };
        long index;
        string responsible;
        if (Server.Cluster.RecordOf(name) is { } record)
        {
            if (!record.Backups.TryGetValue(taskId, out var task))
            {
                throw new BadRequestException($"There is no periodic backup task {taskId} in database '{record.Name}'.");
            }
            if (await LeaderForwarding.ForwardedAsync(context).ConfigureAwait(false))
            {
                return;
            }
            index = await Server.Cluster.SetBackupTaskDisabledAsync(record.Name, taskId, disable, LeaderForwarding.CommandId(context), context.RequestAborted).ConfigureAwait(false);
            await AnsweredAppliedAsync(context, index).ConfigureAwait(false);
            responsible = Server.Cluster.RecordOf(name)?.Backups.GetValueOrDefault(taskId)?.ResponsibleNode ?? task.ResponsibleNode;
        }
        else
        {
            var backups = PeriodicBackups.Of(Server.Databases.GetDatabase(name));
            if (!backups.TryGet(taskId, out var configuration, out _))
            {
                throw new BadRequestException($"There is no periodic backup task {taskId} in database '{name}'.");
            }
            var changed = configuration.ToNode();
            changed["Disabled"] = disable;
            using var json = JsonDocument.Parse(changed.ToJsonString());
            await backups.UpdateAsync(json.RootElement).ConfigureAwait(false);
            index = taskId;
            responsible = context.Server.NodeTag;
        }
        var writer = context.StartJson();
        writer.WriteStartObject();
        writer.WriteNumber("TaskId", taskId);
        writer.WriteNumber("RaftCommandIndex", index);
        writer.WriteString("ResponsibleNode", responsible);
        writer.WriteEndObject();
        await context.CompleteJsonAsync().ConfigureAwait(false);
    }

    /// <summary>A create or replace of a clustered database's task: checked here (every 400 before anything is committed), committed by the leader.</summary>
    private async ValueTask UpdateClusteredAsync(RequestContext context, ClusterDatabaseRecord record)
    {
        var body = await ReadBodyAsync(context).ConfigureAwait(false);
        PeriodicBackupConfiguration configuration;
        using (var json = JsonDocument.Parse(body.Length == 0 ? "null"u8.ToArray() : body))
        {
            var root = json.RootElement;
            configuration = PeriodicBackupConfiguration.Parse(root, PeriodicBackups.AskedTaskId(root), DateTime.UtcNow);
        }
        ClusterNode.CheckBackupTask(record, configuration);
        if (await LeaderForwarding.ForwardedAsync(context, body: body).ConfigureAwait(false))
        {
            return;
        }
        var (etag, taskId) = await Server.Cluster.PutBackupTaskAsync(record.Name, configuration, LeaderForwarding.CommandId(context), context.RequestAborted).ConfigureAwait(false);
        await AnsweredAppliedAsync(context, etag).ConfigureAwait(false);
        var writer = context.StartJson();
        writer.WriteStartObject();
        writer.WriteNumber("RaftCommandIndex", etag);
        writer.WriteNumber("TaskId", taskId);
        writer.WriteEndObject();
        await context.CompleteJsonAsync().ConfigureAwait(false);
    }

    private async ValueTask DeleteClusteredAsync(RequestContext context, ClusterDatabaseRecord record, long taskId)
    {
        if (!record.Backups.ContainsKey(taskId))
        {
            throw new BadRequestException($"There is no periodic backup task {taskId} in database '{record.Name}'.");
        }
        if (await LeaderForwarding.ForwardedAsync(context).ConfigureAwait(false))
        {
            return;
        }
        var etag = await Server.Cluster.DeleteBackupTaskAsync(record.Name, taskId, LeaderForwarding.CommandId(context), context.RequestAborted).ConfigureAwait(false);
        await AnsweredAppliedAsync(context, etag).ConfigureAwait(false);
        var writer = context.StartJson();
        writer.WriteStartObject();
        writer.WriteNumber("RaftCommandIndex", etag);
        writer.WriteNumber("TaskId", taskId);
        writer.WriteEndObject();
        await context.CompleteJsonAsync().ConfigureAwait(false);
    }

    /// <summary>
    /// A run-now of a clustered database's task that another node runs is passed on to that node, and
    /// its answer (<c>{"ResponsibleNode","OperationId"}</c>, the operation being that node's) given
    /// back, as RavenDB's server does; true when it was.
    /// </summary>
    private async ValueTask<bool> ForwardedToResponsibleAsync(RequestContext context, string database, long taskId)
    {
        var cluster = Server.Cluster;
        if (cluster.RecordOf(database) is not { } record || !record.Backups.TryGetValue(taskId, out var task)
            || task.ResponsibleNode == cluster.NodeTag || context.Request.Headers.ContainsKey(ForwardedToResponsibleHeader) || context.IsInnerRequest)
        {
            return false;
        }
        if (!cluster.State.Members.TryGetValue(task.ResponsibleNode, out var url))
        {
            throw new DatabaseUnavailableException(database, $"periodic backup task {taskId} runs on node {task.ResponsibleNode}, which is not a member any more; retry shortly.");
        }
        using var request = new HttpRequestMessage(HttpMethod.Post, url + context.Request.Path + context.Request.QueryString);
        request.Headers.Add(ForwardedToResponsibleHeader, cluster.NodeTag);
        HttpResponseMessage response;
        try
        {
            response = await cluster.LeaderClient.SendAsync(request, context.RequestAborted).ConfigureAwait(false);
        }
        catch (Exception e) when (e is HttpRequestException || e is OperationCanceledException && !context.RequestAborted.IsCancellationRequested)
        {
            throw new DatabaseUnavailableException(database, $"periodic backup task {taskId} runs on node {task.ResponsibleNode} ({url}), which did not answer ({e.Message}); retry shortly.");
        }
        using (response)
        {
            var answer = await response.Content.ReadAsByteArrayAsync(context.RequestAborted).ConfigureAwait(false);
            context.Response.StatusCode = (int)response.StatusCode;
            if (response.Content.Headers.ContentType is { } contentType)
            {
                context.Response.ContentType = contentType.ToString();
            }
            await context.Response.Body.WriteAsync(answer, context.RequestAborted).ConfigureAwait(false);
        }
        return true;
    }

    /// <summary>The node that runs the task and its URL: the responsible node of a clustered task, else this node.</summary>
    private static (string Tag, string Url) Responsible(RequestContext context, PeriodicBackups backups, long taskId) =>
        backups.ResponsibleOf(taskId) is var (tag, url) ? (tag, url ?? "") : (context.Server.NodeTag, TopologyHandler.BaseUrl(context));

    /// <summary>Waits until this node applied the change, and says its etag to a member that passed the request on (it waits for it too).</summary>
    private async ValueTask AnsweredAppliedAsync(RequestContext context, long etag)
    {
        await Server.Cluster.WaitForLocalAsync(etag, context.RequestAborted).ConfigureAwait(false);
        context.Response.Headers[LeaderForwarding.AppliedEtagHeader] = etag.ToString(CultureInfo.InvariantCulture);
    }

    /// <summary>The whole body, kept as bytes: a member that does not lead passes it on.</summary>
    private static ValueTask<byte[]> ReadBodyAsync(RequestContext context) => DocumentBodies.ReadAllAsync(context.Request.BodyReader, context.RequestAborted);
}
