using System.Text.Json;
using Jackdaw.Server.Cluster;
using Jackdaw.Server.Errors;
using Jackdaw.Server.Hosting;
using Jackdaw.Server.Wire;
using Jackdaw.Server.Indexing;
using Jackdaw.Server.Indexing.Analysis;
using Jackdaw.Server.Routing;
using Jackdaw.Server.Security;

namespace Jackdaw.Server.Handlers;

/// <summary>
/// A database's analyzers, with RavenDB's routes and shapes (<c>PutAnalyzersOperation</c>,
/// <c>DeleteAnalyzerOperation</c>, the studio's list). Their <c>Code</c> is Jackdaw's description of
/// Lucene parts, not C# (server/Indexing/Analysis/README.md). On a clustered database (the cluster's
/// state has its record) a put or delete is checked here, committed in the record through the
/// leader, and answered once this node put it in its copy; every node of the database applies it.
/// </summary>
public sealed class AnalyzersHandler(ServerContext server) : HandlerBase(server)
{
    private const string BodyExample = "{\"Analyzers\":[{\"Name\":\"Folding\",\"Code\":\"{\\\"Tokenizer\\\":\\\"Whitespace\\\",\\\"TokenFilters\\\":[\\\"LowerCase\\\",\\\"ASCIIFolding\\\"]}\"}]}";

    /// <summary>
    /// <c>PUT /databases/*/admin/analyzers</c> <c>{"Analyzers":[{"Name","Code"}]}</c>: all of them or
    /// none; 201 with no body, as RavenDB answers (its clients read none). Indexes using an analyzer
    /// whose recipe changed are rebuilt.
    /// </summary>
    [Route("/databases/*/admin/analyzers", "PUT")]
    [Access(RouteAccess.DatabaseAdmin)]
    public async ValueTask Put(RequestContext context)
    {
        var name = context.GetCaptureMemory(0).ToString();
        var record = Server.Cluster.RecordOf(name);
        // A lone server's database must be here; a clustered one's record is enough (the leader may not hold it).
        var database = record is null ? Server.Databases.GetDatabase(name) : null;
        var body = await DocumentBodies.ReadAllAsync(context.Request.BodyReader, context.RequestAborted).ConfigureAwait(false);
        var definitions = ReadDefinitions(body);
        if (database is not null)
        {
            await IndexStore.Of(database).PutAnalyzersAsync(definitions).ConfigureAwait(false);
        }
        else
        {
            // Compiled here before anything is committed (and again on the leader): a bad one is a 400.
            foreach (var definition in definitions)
            {
                AnalyzerRecipe.Parse(definition.Name, definition.Code);
            }
            if (await LeaderForwarding.ForwardedAsync(context, body: body).ConfigureAwait(false))
            {
                return;
            }
            var etag = await Server.Cluster.PutAnalyzersAsync(name, definitions, LeaderForwarding.CommandId(context), context.RequestAborted).ConfigureAwait(false);
            await LeaderForwarding.AnswerAppliedAsync(context, etag).ConfigureAwait(false);
        }
        context.Response.StatusCode = StatusCodes.Status201Created;
        context.Response.ContentLength = 0;
    }

    private static List<AnalyzerDefinition> ReadDefinitions(byte[] body)
    {
        var definitions = new List<AnalyzerDefinition>();
        using (var json = JsonDocument.Parse(body))
        {
            if (json.RootElement.ValueKind != JsonValueKind.Object || !json.RootElement.TryGetProperty("Analyzers", out var analyzers) || analyzers.ValueKind != JsonValueKind.Array)
            {
                throw new BadRequestException("The body must be " + BodyExample + ".");
            }
            foreach (var analyzer in analyzers.EnumerateArray())
            {
                definitions.Add(AnalyzerDefinition.FromJson(analyzer));
            }
        }
        if (definitions.Count == 0)
        {
            throw new BadRequestException("\"Analyzers\" is empty: give at least one analyzer, as " + BodyExample + ".");
        }
        var duplicate = definitions.GroupBy(d => d.Name, StringComparer.OrdinalIgnoreCase).FirstOrDefault(g => g.Count() > 1);
        if (duplicate is not null)
        {
            throw new BadRequestException($"The analyzer '{duplicate.Key}' is defined more than once in this request.");
        }
        return definitions;
    }

    /// <summary><c>DELETE /databases/*/admin/analyzers?name=</c>: 204, also when there was none; 409 while index definitions name it.</summary>
    [Route("/databases/*/admin/analyzers", "DELETE")]
    [Access(RouteAccess.DatabaseAdmin)]
    public async ValueTask Delete(RequestContext context)
    {
        var database = context.GetCaptureMemory(0).ToString();
        var record = Server.Cluster.RecordOf(database);
        var local = record is null ? Server.Databases.GetDatabase(database) : null;
        var name = new UrlQuery(context.Request.QueryString.Value).GetString("name");
        if (string.IsNullOrWhiteSpace(name))
        {
            throw new BadRequestException("Query parameter 'name' is required: the analyzer's name, e.g. ?name=MyAnalyzer.");
        }
        if (local is not null)
        {
            await IndexStore.Of(local).DeleteAnalyzerAsync(name.Trim()).ConfigureAwait(false);
        }
        else
        {
            // Refused here already (409) while an index of the record names it, and again on the leader.
            if (ClusterState.IndexesNaming(record!, name.Trim()) is { Count: > 0 } users)
            {
                throw new AnalyzerInUseException(record!.Analyzers.TryGetValue(name.Trim(), out var held) ? held.Name : name.Trim(), users);
            }
            if (await LeaderForwarding.ForwardedAsync(context).ConfigureAwait(false))
            {
                return;
            }
            var etag = await Server.Cluster.DeleteAnalyzerAsync(database, name.Trim(), LeaderForwarding.CommandId(context), context.RequestAborted).ConfigureAwait(false);
            await LeaderForwarding.AnswerAppliedAsync(context, etag).ConfigureAwait(false);
        }
        context.Response.StatusCode = StatusCodes.Status204NoContent;
    }

    /// <summary><c>GET /databases/*/analyzers[?namesOnly=true]</c>: <c>{"Analyzers":[{"Name","Code"}]}</c> in name order (RavenDB's studio route).</summary>
    [Route("/databases/*/analyzers", "GET")]
    [Access(RouteAccess.DatabaseRead)]
    public async ValueTask Get(RequestContext context)
    {
        var database = Server.Databases.GetDatabase(context.GetCaptureMemory(0));
        var namesOnly = new UrlQuery(context.Request.QueryString.Value).GetString("namesOnly") switch
        {
            null => false,
            var value when value.Equals("true", StringComparison.OrdinalIgnoreCase) => true,
            var value when value.Equals("false", StringComparison.OrdinalIgnoreCase) => false,
            var value => throw new BadRequestException($"Query parameter 'namesOnly' is '{value}'; it is true or false."),
        };
        var writer = context.StartJson();
        writer.WriteStartObject();
        writer.WriteStartArray("Analyzers");
        foreach (var definition in IndexStore.Of(database).Analyzers.Definitions)
        {
            writer.WriteStartObject();
            writer.WriteString("Name", definition.Name);
            if (!namesOnly)
            {
                writer.WriteString("Code", definition.Code);
            }
            writer.WriteEndObject();
        }
        writer.WriteEndArray();
        writer.WriteEndObject();
        await context.CompleteJsonAsync().ConfigureAwait(false);
    }
}
