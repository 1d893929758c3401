using System.Buffers;
using System.Text.Json;
using Jackdaw.Server.Cluster;
using Jackdaw.Server.Errors;
using Jackdaw.Server.Hosting;
using Jackdaw.Server.Indexing;
using Jackdaw.Server.Indexing.Definitions;
using Jackdaw.Server.Routing;
using Jackdaw.Server.Security;
using Jackdaw.Server.Wire;

namespace Jackdaw.Server.Handlers;

// The index routes of a clustered database (one the cluster's state has a record of): the change
// is checked here, committed in the record by the leader (a member that does not lead passes the
// request on), and answered once this node applied it to its own indexes. Every node of the
// database builds the indexes from the record (Cluster/ClusterDatabases.Indexes.cs). A lone
// server keeps its indexes locally, as before clusters.
public sealed partial class IndexesHandler
{
    private async ValueTask PutClusteredAsync(RequestContext context, string name)
    {
        var body = await ReadBodyAsync(context).ConfigureAwait(false);
        var (definitions, settings) = ParsePut(body);
        // Checked before anything is committed, here and on the leader: compiled, and the analyzers
        // the fields name are built in or in the record (every node puts the record's in its copy).
        IndexStore.ValidateMaps(definitions);
        if (Server.Cluster.RecordOf(name) is { } record)
        {
            ClusterNode.CheckAnalyzers(record, definitions);
        }
        if (await LeaderForwarding.ForwardedAsync(context, body: body).ConfigureAwait(false))
        {
            return;
        }
        var cluster = Server.Cluster;
        var changes = definitions.Select((d, i) => (d, settings[i].LockMode, settings[i].Priority)).ToList();
        var etag = await cluster.PutIndexesAsync(name, changes, LeaderForwarding.CommandId(context), context.RequestAborted).ConfigureAwait(false);
        await LeaderForwarding.AnswerAppliedAsync(context, etag).ConfigureAwait(false);
        await WritePutAnswerAsync(context, definitions, etag).ConfigureAwait(false);
    }

    /// <summary>
    /// <c>PUT /databases/*/admin/indexes/auto</c> with an auto-index's definition as the index store
    /// keeps it (<c>{"Name","Type":"AutoMap|AutoMapReduce","Collection","AutoFields",...}</c>): how a
    /// member whose query made an auto-index puts it in the record of a clustered database (RavenDB's
    /// PutAutoIndexCommand). 201 as <c>PUT /admin/indexes</c>; 400 on a lone server or for a definition
    /// that is not an auto-index's.
    /// </summary>
    [Route("/databases/*/admin/indexes/auto", "PUT")]
    [Access(RouteAccess.DatabaseAdmin)]
    public async ValueTask PutAuto(RequestContext context)
    {
        var name = context.GetCaptureMemory(0).ToString();
        if (Server.Cluster.RecordOf(name) is null)
        {
            throw new BadRequestException($"Database '{name}' is not in a cluster: auto-indexes are put by its queries alone.");
        }
        var body = await ReadBodyAsync(context).ConfigureAwait(false);
        var definition = ReadAutoDefinition(body);
        if (await LeaderForwarding.ForwardedAsync(context, body: body).ConfigureAwait(false))
        {
            return;
        }
        var etag = await Server.Cluster.PutIndexesAsync(name, [(definition, null, null)], LeaderForwarding.CommandId(context), context.RequestAborted).ConfigureAwait(false);
        await LeaderForwarding.AnswerAppliedAsync(context, etag).ConfigureAwait(false);
        await WritePutAnswerAsync(context, [definition], etag).ConfigureAwait(false);
    }

    private static IndexDefinition ReadAutoDefinition(byte[] body)
    {
        const string Example = "{\"Name\":\"Auto/Orders/ByCompany\",\"Type\":\"AutoMap\",\"Collection\":\"Orders\",\"AutoFields\":[{\"Path\":\"Company\",\"Indexing\":\"Default\"}]}";
        IndexDefinition definition;
        try
        {
            using var json = JsonDocument.Parse(body);
            if (json.RootElement.ValueKind != JsonValueKind.Object || !json.RootElement.TryGetProperty("Type", out var type)
                || type.GetString() is not ("AutoMap" or "AutoMapReduce"))
            {
                throw new BadRequestException($"The body must be an auto-index's definition, such as {Example}.");
            }
            definition = IndexDefinition.FromStored(json.RootElement);
        }
        catch (Exception e) when (e is KeyNotFoundException or InvalidOperationException or ArgumentException or FormatException)
        {
            throw new BadRequestException($"The body is not an auto-index's definition ({e.Message}); it looks like {Example}.");
        }
        // The name is derived from the fields: one that does not match is not what a query made.
        using (var given = JsonDocument.Parse(body))
        {
            if (given.RootElement.TryGetProperty("Name", out var n) && n.ValueKind == JsonValueKind.String && n.GetString() != definition.Name)
            {
                throw new BadRequestException($"The auto-index is named '{n.GetString()}', but its fields make it '{definition.Name}'.");
            }
        }
        IndexStore.ValidateMaps([definition]);
        return definition;
    }

    /// <summary>
    /// The delete of an index of a clustered database's record (true); false for a lone server's, or
    /// for an index this node has that the record lacks (made before the database was clustered, or
    /// an auto-index not recorded yet): that one is deleted here only.
    /// </summary>
    private async ValueTask<bool> DeleteClusteredAsync(RequestContext context)
    {
        var database = context.GetCaptureMemory(0).ToString();
        var name = new UrlQuery(context.Request.QueryString.Value).GetString("name");
        if (Server.Cluster.RecordOf(database) is not { } record || string.IsNullOrEmpty(name) || !RecordedOrNotHere(record, database, name))
        {
            return false;
        }
        if (await LeaderForwarding.ForwardedAsync(context).ConfigureAwait(false))
        {
            return true;
        }
        var etag = await Server.Cluster.DeleteIndexAsync(database, name, LeaderForwarding.CommandId(context), context.RequestAborted).ConfigureAwait(false);
        await LeaderForwarding.AnswerAppliedAsync(context, etag).ConfigureAwait(false);
        context.Response.StatusCode = StatusCodes.Status204NoContent;
        return true;
    }

    /// <summary>
    /// A lock mode or priority (<paramref name="valueName"/>) of indexes of a clustered database
    /// (true), or false for a lone server's.
    /// </summary>
    private async ValueTask<bool> SetClusteredAsync<T>(
        RequestContext context, string valueName, string example, Func<string, T> parse, Func<ClusterNode, string, IReadOnlyList<string>, T, string, Task<long>> set)
    {
        var database = context.GetCaptureMemory(0).ToString();
        if (Server.Cluster.RecordOf(database) is not { } record)
        {
            return false;
        }
        var body = await ReadBodyAsync(context).ConfigureAwait(false);
        List<string> names;
        string value;
        using (var json = JsonDocument.Parse(body))
        {
            (names, value) = ParseNamesAndValue(json, valueName, example);
        }
        if (!names.All(n => RecordedOrNotHere(record, database, n)))
        {
            // Indexes of this node alone (see DeleteClusteredAsync): set here, as on a lone server.
            await SetLocallyAsync(database, names, parse(value)).ConfigureAwait(false);
            context.Response.StatusCode = StatusCodes.Status204NoContent;
            return true;
        }
        // Checked before the request goes on: a bad value is a 400 from this node.
        var parsed = parse(value);
        if (await LeaderForwarding.ForwardedAsync(context, body: body).ConfigureAwait(false))
        {
            return true;
        }
        var etag = await set(Server.Cluster, database, names, parsed, LeaderForwarding.CommandId(context)).ConfigureAwait(false);
        await LeaderForwarding.AnswerAppliedAsync(context, etag).ConfigureAwait(false);
        context.Response.StatusCode = StatusCodes.Status204NoContent;
        return true;
    }

    /// <summary>Whether the record has the index, or this node does not (so that the record's answer, a 404, is right).</summary>
    private bool RecordedOrNotHere(ClusterDatabaseRecord record, string database, string name) =>
        record.Indexes.ContainsKey(name)
        || !Server.Databases.Names.Contains(database, StringComparer.OrdinalIgnoreCase)
        || IndexStore.Of(Server.Databases.GetDatabase(database)).TryGet(name) is null;

    private async ValueTask SetLocallyAsync<T>(string database, List<string> names, T value)
    {
        var store = IndexStore.Of(Server.Databases.GetDatabase(database));
        foreach (var name in names)
        {
            await store.UpdateSettingsAsync(name, (_, record) => value switch
            {
                IndexLockMode mode => record with { LockMode = mode },
                IndexPriority priority => record with { Priority = priority },
                _ => record,
            }).ConfigureAwait(false);
        }
    }

    /// <summary>The whole body, kept as bytes: a member that does not lead passes it on.</summary>
    private static ValueTask<byte[]> ReadBodyAsync(RequestContext context) => DocumentBodies.ReadAllAsync(context.Request.BodyReader, context.RequestAborted);
}
