using Jackdaw.Server.Security;

namespace Jackdaw.Server.Hosting;

/// <summary>
/// Requests under <c>/cluster-consensus/</c>: Raft's own protocol between the nodes, served by
/// DotNext's handler (<see cref="Cluster.ClusterNode.ConsensusHandler"/>), outside the router. On a
/// secured server only the cluster's node certificates may speak it (a ClusterAdmin certificate
/// that is a member's or this node's own, <see cref="Cluster.ClusterNode.AdmitsToConsensus"/>); on
/// a lone server (no Raft) the path is a 404.
/// </summary>
internal static class ClusterConsensus
{
    public static Task InvokeAsync(ServerContext server, HttpContext context)
    {
        if (server.Security is { } security)
        {
            var caller = security.Authorizer.Identify(context.Connection.ClientCertificate, context.Features.Get<TlsConnection>()?.Identity, out var denied);
            if (caller is not null)
            {
                denied = Authorizer.Authorize(caller, RouteAccess.ClusterAdmin, default);
            }
            if (denied is not null)
            {
                return JsonErrors.WriteAsync(context, denied.NotAuthenticated ? StatusCodes.Status401Unauthorized : StatusCodes.Status403Forbidden, ErrorTypes.Authorization, denied.Message).AsTask();
            }
            if (!server.Cluster.AdmitsToConsensus(context.Connection.ClientCertificate))
            {
                return JsonErrors.WriteAsync(context, StatusCodes.Status403Forbidden, ErrorTypes.Authorization,
                    $"Only the cluster's node certificates may speak its Raft protocol; {context.Connection.ClientCertificate?.Thumbprint ?? "this certificate"} is not one (a ClusterAdmin client uses /admin/cluster).").AsTask();
            }
        }
        if (server.Cluster.ConsensusHandler is not { } handler)
        {
            context.Response.StatusCode = StatusCodes.Status404NotFound;
            return Task.CompletedTask;
        }
        return handler(context);
    }
}
