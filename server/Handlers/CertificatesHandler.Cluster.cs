using System.Globalization;
using Jackdaw.Server.Hosting;
using Jackdaw.Server.Security;

namespace Jackdaw.Server.Handlers;

// The registered certificates of a clustered server are the cluster's (RavenDB's cluster-wide
// registration): a put, edit or delete checked here (400s before anything is committed) is passed
// on to the leader, committed in the cluster's state, and answered once this node put it in its
// own store (Cluster/ClusterDatabases.Certificates.cs), so that the client's next request, to any
// node, is authorized by it. A lone server keeps them in its store, as before clusters.
public sealed partial class CertificatesHandler
{
    /// <summary>The registration of <paramref name="thumbprint"/>: the cluster's, else this server's store's.</summary>
    private CertificateDefinition? Registered(ServerSecurity security, string thumbprint) =>
        Server.Cluster.RegisteredCertificate(thumbprint) ?? security.Store.Get(thumbprint);

    /// <summary>Registers <paramref name="definition"/> (201, no body): through the leader on a cluster (<paramref name="raw"/> is the request's body, passed on).</summary>
    private async ValueTask RegisterAsync(RequestContext context, ServerSecurity security, byte[] raw, CertificateDefinition definition)
    {
        if (await LeaderForwarding.ForwardedAsync(context, body: raw).ConfigureAwait(false))
        {
            return;
        }
        await StoreAsync(context, security, definition).ConfigureAwait(false);
        Empty(context, StatusCodes.Status201Created);
    }

    /// <summary>Puts <paramref name="definition"/> in the cluster's state (on the leader) and waits for this node's store, or in the store of a lone server.</summary>
    private async ValueTask StoreAsync(RequestContext context, ServerSecurity security, CertificateDefinition definition)
    {
        if (!Server.Cluster.IsClustered)
        {
            security.Store.Put(definition);
            return;
        }
        var etag = await Server.Cluster.PutCertificatesAsync([definition], LeaderForwarding.CommandId(context), context.RequestAborted).ConfigureAwait(false);
        await AnsweredAppliedAsync(context, etag).ConfigureAwait(false);
    }

    /// <summary>
    /// The delete of a certificate on a cluster (true, answered): decided by the leader, whose state
    /// may hold a registration this node has not applied yet. False on a lone server, or for a
    /// certificate registered on this node alone (before it joined): deleted here only.
    /// </summary>
    private async ValueTask<bool> DeleteClusteredAsync(RequestContext context, ServerSecurity security, string thumbprint)
    {
        if (!Server.Cluster.IsClustered
            || Server.Cluster.RegisteredCertificate(thumbprint) is null && security.Store.Get(thumbprint) is not null)
        {
            return false;
        }
        if (!await LeaderForwarding.ForwardedAsync(context).ConfigureAwait(false))
        {
            var etag = await Server.Cluster.DeleteCertificateAsync(thumbprint, LeaderForwarding.CommandId(context), context.RequestAborted).ConfigureAwait(false);
            await AnsweredAppliedAsync(context, etag).ConfigureAwait(false);
            Empty(context, StatusCodes.Status204NoContent);
        }
        return true;
    }

    /// <summary>Waits until this node applied the change, and says its etag to a member that passed the request on (it waits for it too).</summary>
    private async ValueTask AnsweredAppliedAsync(RequestContext context, long etag)
    {
        await Server.Cluster.WaitForLocalAsync(etag, context.RequestAborted).ConfigureAwait(false);
        context.Response.Headers[LeaderForwarding.AppliedEtagHeader] = etag.ToString(CultureInfo.InvariantCulture);
    }
}
