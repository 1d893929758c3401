using System.Text.Json;
using Jackdaw.Server.Cluster;
using Jackdaw.Server.Errors;
using Jackdaw.Server.Hosting;
using Jackdaw.Server.Routing;
using Jackdaw.Server.Security;
using Jackdaw.Server.Wire;

namespace Jackdaw.Server.Handlers;

/// <summary>
/// The status of a periodic backup run that a member that does not lead sends to the leader (it is
/// the task's responsible node): the body is the <see cref="ClusterCommand"/> as JSON; only
/// <see cref="ClusterCommandKind.UpdateBackupStatus"/> is taken.
/// </summary>
public sealed class ClusterBackupsHandler(ServerContext server) : HandlerBase(server)
{
    /// <summary><c>POST /admin/cluster/backup-status</c> → 200 <c>{"RaftCommandIndex"}</c>; 503 when this node does not lead.</summary>
    [Route(ClusterNode.BackupStatusPath, "POST")]
    [Access(RouteAccess.ClusterAdmin)]
    public async ValueTask Propose(RequestContext context)
    {
        // Only nodes send these (an acknowledgement or a status moves what a node resumes from).
        if (Server.Security is not null && !Server.Cluster.AdmitsToConsensus(context.HttpContext.Connection.ClientCertificate))
        {
            throw new AuthorizationException(notAuthenticated: false, "Only the cluster's node certificates may send it backup statuses; a ClusterAdmin client uses the database's routes.");
        }
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
        if (command is not { Kind: ClusterCommandKind.UpdateBackupStatus, Backup.Status: not null, Database: not null } || string.IsNullOrEmpty(command.Id))
        {
            throw new BadRequestException("The body must be an UpdateBackupStatus command of the cluster, with its Database and Backup.Status.");
        }
        if (!Server.Cluster.IsClustered || !Server.Cluster.IsLeader)
        {
            throw Server.Cluster.NotLeader();
        }
        var index = await Server.Cluster.ExecuteAsync(command, context.RequestAborted).ConfigureAwait(false);
        var writer = context.StartJson();
        writer.WriteStartObject();
        writer.WriteNumber("RaftCommandIndex", index);
        writer.WriteEndObject();
        await context.CompleteJsonAsync().ConfigureAwait(false);
    }
}
