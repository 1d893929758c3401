using System.Text.Json;
using Jackdaw.Server.Cluster;
using Jackdaw.Server.Errors;
using Jackdaw.Server.Hosting;
using Jackdaw.Server.Routing;
using Jackdaw.Server.Security;
using Jackdaw.Server.Wire;

namespace Jackdaw.Server.Handlers;

/// <summary>
/// Subscription commands a member that does not lead sends to the leader (a create, delete,
/// disable or enable asked of it, and its acknowledgements as a mentor): the body is the
/// <see cref="ClusterCommand"/> as JSON; only subscription kinds are taken.
/// </summary>
public sealed class ClusterSubscriptionsHandler(ServerContext server) : HandlerBase(server)
{
    /// <summary><c>POST /admin/cluster/subscription-commands</c> → 200 <c>{"RaftCommandIndex"}</c>; 503 when this node does not lead.</summary>
    [Route(ClusterNode.SubscriptionCommandPath, "POST")]
    [Access(RouteAccess.ClusterAdmin)]
    public async ValueTask Propose(RequestContext context)
    {
        // Only nodes send these (an acknowledgement or a status moves what a node resumes from).
        if (Server.Security is not null && !Server.Cluster.AdmitsToConsensus(context.HttpContext.Connection.ClientCertificate))
        {
            throw new AuthorizationException(notAuthenticated: false, "Only the cluster's node certificates may send it subscription commands; a ClusterAdmin client uses the database's routes.");
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
        if (command is null || string.IsNullOrEmpty(command.Id) || !ClusterSubscriptions.Handles(command.Kind))
        {
            throw new BadRequestException("The body must be a subscription command of the cluster (PutSubscription, DeleteSubscription, SetSubscriptionDisabled, AcknowledgeSubscription, SetSubscriptionMentor).");
        }
        if (!Server.Cluster.IsClustered || !Server.Cluster.IsLeader)
        {
            throw Server.Cluster.NotLeader();
        }
        var index = await Server.Cluster.ProposeSubscriptionAsync(command, context.RequestAborted).ConfigureAwait(false);
        var writer = context.StartJson();
        writer.WriteStartObject();
        writer.WriteNumber("RaftCommandIndex", index);
        writer.WriteEndObject();
        await context.CompleteJsonAsync().ConfigureAwait(false);
    }
}
