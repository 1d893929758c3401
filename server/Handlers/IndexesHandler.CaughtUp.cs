using Jackdaw.Server.Hosting;
using Jackdaw.Server.Indexing;
using Jackdaw.Server.Routing;
using Jackdaw.Server.Security;
using Jackdaw.Server.Wire;

namespace Jackdaw.Server.Handlers;

// How far this node's indexes of a database reached, against a cut-off etag: what a promotable's
// mentor asks before it has the promotable promoted (Cluster/ClusterNode.Promotables.cs), and what
// anyone may ask of a node that keeps taking writes (staleness alone would never settle).
public sealed partial class IndexesHandler
{
    /// <summary>
    /// <c>GET /databases/*/indexes/caught-up[?upTo=ETAG]</c> →
    /// <c>{"LastEtag":N,"Indexes":[{"Name","State","CaughtUp":bool}]}</c>: this copy's last etag now,
    /// and for each index whether it processed every change of its collections up to
    /// <c>upTo</c> (default: that last etag), read in one snapshot. Replacements being built side by
    /// side are not listed (the index they replace serves meanwhile).
    /// </summary>
    [Route("/databases/*/indexes/caught-up", "GET")]
    [Access(RouteAccess.DatabaseRead)]
    public async ValueTask CaughtUp(RequestContext context)
    {
        var (database, _) = Target(context, nameRequired: false);
        var query = new UrlQuery(context.Request.QueryString.Value);
        long? upTo = query.TryGetRaw("upTo", out _) ? query.GetInt64("upTo", 0, min: 0) : null;
        var store = IndexStore.Of(database);
        var writer = context.StartJson();
        using (var reader = database.BeginRead())
        {
            var cutoff = upTo ?? reader.LastEtag;
            writer.WriteStartObject();
            writer.WriteNumber("LastEtag", reader.LastEtag);
            writer.WriteStartArray("Indexes");
            foreach (var index in store.Indexes)
            {
                if (index.Name.StartsWith(IndexStore.ReplacementPrefix, StringComparison.OrdinalIgnoreCase))
                {
                    continue;
                }
                writer.WriteStartObject();
                writer.WriteString("Name", index.Name);
                writer.WriteString("State", index.State.ToString());
                writer.WriteBoolean("CaughtUp", !index.IsStale(reader, cutoff));
                writer.WriteEndObject();
            }
            writer.WriteEndArray();
            writer.WriteEndObject();
        }
        await context.CompleteJsonAsync().ConfigureAwait(false);
    }
}
