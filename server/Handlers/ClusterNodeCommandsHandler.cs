using System.Text.Json;
using Jackdaw.Server.Cluster;
using Jackdaw.Server.Errors;
using Jackdaw.Server.Hosting;
using Jackdaw.Server.Routing;
using Jackdaw.Server.Security;
using Jackdaw.Server.Wire;

namespace Jackdaw.Server.Handlers;

/// <summary>
/// Commands a member that does not lead sends to the leader for itself: subscription commands (a
/// create, delete, disable or enable asked of it, and its acknowledgements as a mentor), the
/// status of a periodic backup run (it is the task's responsible node) and the promotion of a
/// promotable it mentors (its replication shows it caught up). The body is the
/// <see cref="ClusterCommand"/> as JSON. Not a command: the use of its recorded auto-indexes (an
/// <see cref="AutoIndexUsageReport"/>). On a secured cluster only node certificates may send them,
/// as for Raft's path: a forged acknowledgement or status moves what a node resumes from, a forged
/// report deletes auto-indexes in use.
/// </summary>
public sealed class ClusterNodeCommandsHandler(ServerContext server) : HandlerBase(server)
{
    /// <summary><c>POST /admin/cluster/subscription-commands</c> (subscription kinds only) → 200 <c>{"RaftCommandIndex"}</c>; 503 when this node does not lead.</summary>
    [Route(ClusterNode.SubscriptionCommandPath, "POST")]
    [Access(RouteAccess.ClusterAdmin)]
    public async ValueTask ProposeSubscription(RequestContext context)
    {
        var command = await ReadNodeCommandAsync(context, "subscription commands").ConfigureAwait(false);
        if (command is null || !ClusterSubscriptions.Handles(command.Kind))
        {
            throw new BadRequestException("The body must be a subscription command of the cluster (PutSubscription, DeleteSubscription, SetSubscriptionDisabled, AcknowledgeSubscription, SetSubscriptionMentor).");
        }
        ThrowUnlessLeader();
        await AnswerAsync(context, await Server.Cluster.ProposeSubscriptionAsync(command, context.RequestAborted).ConfigureAwait(false)).ConfigureAwait(false);
    }

    /// <summary><c>POST /admin/cluster/backup-status</c> (<c>UpdateBackupStatus</c> only) → 200 <c>{"RaftCommandIndex"}</c>; 503 when this node does not lead.</summary>
    [Route(ClusterNode.BackupStatusPath, "POST")]
    [Access(RouteAccess.ClusterAdmin)]
    public async ValueTask ProposeBackupStatus(RequestContext context)
    {
        var command = await ReadNodeCommandAsync(context, "backup statuses").ConfigureAwait(false);
        if (command is not { Kind: ClusterCommandKind.UpdateBackupStatus, Backup.Status: not null, Database: not null })
        {
            throw new BadRequestException("The body must be an UpdateBackupStatus command of the cluster, with its Database and Backup.Status.");
        }
        ThrowUnlessLeader();
        await AnswerAsync(context, await Server.Cluster.ExecuteAsync(command, context.RequestAborted).ConfigureAwait(false)).ConfigureAwait(false);
    }

    /// <summary><c>POST /admin/cluster/promotions</c> (<c>PromoteDatabaseNode</c> from a promotable's mentor) → 200 <c>{"RaftCommandIndex"}</c>; 503 when this node does not lead.</summary>
    [Route(ClusterNode.PromotionPath, "POST")]
    [Access(RouteAccess.ClusterAdmin)]
    public async ValueTask ProposePromotion(RequestContext context)
    {
        var command = await ReadNodeCommandAsync(context, "promotions").ConfigureAwait(false);
        if (command is not { Kind: ClusterCommandKind.PromoteDatabaseNode })
        {
            throw new BadRequestException("The body must be a PromoteDatabaseNode command of the cluster, with its Database, Tag, Mentor and Progress.");
        }
        ThrowUnlessLeader();
        await AnswerAsync(context, await Server.Cluster.PromoteAsync(command, context.RequestAborted).ConfigureAwait(false)).ConfigureAwait(false);
    }

    /// <summary>
    /// <c>POST /admin/cluster/auto-index-usage</c> (an <see cref="AutoIndexUsageReport"/>) → 204; the
    /// leader keeps it in memory (<see cref="ClusterNode.ReceiveAutoIndexUsage"/>); 400 for a node or
    /// database the cluster does not know; 503 when this node does not lead.
    /// </summary>
    [Route(ClusterNode.AutoIndexUsagePath, "POST")]
    [Access(RouteAccess.ClusterAdmin)]
    public async ValueTask ReportAutoIndexUsage(RequestContext context)
    {
        // A forged report could have the leader delete auto-indexes still in use.
        ThrowUnlessNode(context, "auto-index reports");
        AutoIndexUsageReport? report;
        using (var json = await DocumentBodies.ReadJsonAsync(context.Request.BodyReader, context.RequestAborted).ConfigureAwait(false))
        {
            try
            {
                report = json is null ? null : json.RootElement.Deserialize<AutoIndexUsageReport>();
            }
            catch (JsonException e)
            {
                throw new BadRequestException($"The body is not an auto-index report: {e.Message}");
            }
        }
        if (report is not { Node.Length: > 0, Database.Length: > 0, Indexes: not null } || report.Indexes.Any(i => i is not { Name.Length: > 0 }))
        {
            throw new BadRequestException("The body must be an auto-index report: {\"Node\",\"Database\",\"Indexes\":[{\"Name\",\"CreatedAt\",\"LastUsed\",\"Expired\"}]}.");
        }
        ThrowUnlessLeader();
        Server.Cluster.ReceiveAutoIndexUsage(report);
        context.Response.StatusCode = StatusCodes.Status204NoContent;
    }

    private void ThrowUnlessNode(RequestContext context, string what)
    {
        if (Server.Security is not null && !Server.Cluster.AdmitsToConsensus(context.HttpContext.Connection.ClientCertificate))
        {
            throw new AuthorizationException(notAuthenticated: false, $"Only the cluster's node certificates may send it {what}; a ClusterAdmin client uses the database's routes.");
        }
    }

    /// <summary>The command in the body (null when it is none or has no id), once the caller is a node.</summary>
    private async ValueTask<ClusterCommand?> ReadNodeCommandAsync(RequestContext context, string what)
    {
        ThrowUnlessNode(context, what);
        ClusterCommand? command;
        using (var json = await DocumentBodies.ReadJsonAsync(context.Request.BodyReader, context.RequestAborted).ConfigureAwait(false))
        {
            try
            {
                command = json is null ? null : json.RootElement.Deserialize<ClusterCommand>();
            }
            catch (JsonException e)
            {
                throw new BadRequestException($"The body is not a cluster command: {e.Message}");
            }
        }
        return string.IsNullOrEmpty(command?.Id) ? null : command;
    }

    private void ThrowUnlessLeader()
    {
        if (!Server.Cluster.IsClustered || !Server.Cluster.IsLeader)
        {
            throw Server.Cluster.NotLeader();
        }
    }

    private static async ValueTask AnswerAsync(RequestContext context, long index)
    {
        var writer = context.StartJson();
        writer.WriteStartObject();
        writer.WriteNumber("RaftCommandIndex", index);
        writer.WriteEndObject();
        await context.CompleteJsonAsync().ConfigureAwait(false);
    }
}
