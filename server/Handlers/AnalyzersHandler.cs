using System.Text.Json;
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
/// Lucene parts, not C# (server/Indexing/Analysis/README.md).
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
        var database = Server.Databases.GetDatabase(context.GetCaptureMemory(0));
        var definitions = new List<AnalyzerDefinition>();
        using (var json = await DocumentBodies.ReadJsonAsync(context.Request.BodyReader, context.RequestAborted).ConfigureAwait(false))
        {
            if (json is null || json.RootElement.ValueKind != JsonValueKind.Object || !json.RootElement.TryGetProperty("Analyzers", out var analyzers) || analyzers.ValueKind != JsonValueKind.Array)
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
        await IndexStore.Of(database).PutAnalyzersAsync(definitions).ConfigureAwait(false);
        context.Response.StatusCode = StatusCodes.Status201Created;
        context.Response.ContentLength = 0;
    }

    /// <summary><c>DELETE /databases/*/admin/analyzers?name=</c>: 204, also when there was none; 409 while index definitions name it.</summary>
    [Route("/databases/*/admin/analyzers", "DELETE")]
    [Access(RouteAccess.DatabaseAdmin)]
    public async ValueTask Delete(RequestContext context)
    {
        var database = Server.Databases.GetDatabase(context.GetCaptureMemory(0));
        var name = new UrlQuery(context.Request.QueryString.Value).GetString("name");
        if (string.IsNullOrWhiteSpace(name))
        {
            throw new BadRequestException("Query parameter 'name' is required: the analyzer's name, e.g. ?name=MyAnalyzer.");
        }
        await IndexStore.Of(database).DeleteAnalyzerAsync(name.Trim()).ConfigureAwait(false);
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
