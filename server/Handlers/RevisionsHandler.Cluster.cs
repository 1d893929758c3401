using System.Globalization;
using System.Text;
using Jackdaw.Server.Documents;
using Jackdaw.Server.Hosting;
using Jackdaw.Server.Routing;

namespace Jackdaw.Server.Handlers;

// The revisions configuration routes of a clustered database (one the cluster's state has a record
// of): the body is checked here (400 before anything is committed), committed in the record by the
// leader (a member that does not lead passes the request on), and answered once this node applied
// it to its copy. Every node of the database applies the record's configuration
// (Cluster/ClusterDatabases.Revisions.cs); the GET routes read the copy's, the applied one. A lone
// server keeps its configuration locally, as before clusters.
public sealed partial class RevisionsHandler
{
    /// <summary>Sets the (conflict) revisions configuration of a clustered database and answers (true); false for a lone server's.</summary>
    private async ValueTask<bool> SetClusteredConfigAsync(RequestContext context, bool conflicts)
    {
        var name = context.GetCaptureMemory(0).ToString();
        if (Server.Cluster.RecordOf(name) is null)
        {
            return false;
        }
        var body = await ReadBodyAsync(context).ConfigureAwait(false);
        var json = conflicts
            ? Encoding.UTF8.GetString(RevisionsCollectionConfiguration.NormalizeConflictsConfiguration(body))
            : Encoding.UTF8.GetString(RevisionsConfiguration.Parse(body).Json);
        if (await LeaderForwarding.ForwardedAsync(context, body: body).ConfigureAwait(false))
        {
            return true;
        }
        var etag = await Server.Cluster.SetRevisionsConfigurationAsync(name, json, conflicts, LeaderForwarding.CommandId(context), context.RequestAborted).ConfigureAwait(false);
        await Server.Cluster.WaitForLocalAsync(etag, context.RequestAborted).ConfigureAwait(false);
        context.Response.Headers[LeaderForwarding.AppliedEtagHeader] = etag.ToString(CultureInfo.InvariantCulture);
        await WriteIndexAsync(context, etag).ConfigureAwait(false);
        return true;
    }
}
