using System.Buffers;
using Jackdaw.Server.Hosting;
using Jackdaw.Server.Http;
using Jackdaw.Server.Routing;

namespace Jackdaw.Server.Handlers;

/// <summary><c>/databases/*/collections</c>: per-collection counts and documents.</summary>
public sealed class CollectionsHandler(ServerContext server) : HandlerBase(server)
{
    private const int DefaultPageSize = 25;
    private const int MaxPageSize = 1024;

    [Route("/databases/*/collections/stats", "GET")]
    public ValueTask Stats(RequestContext context)
    {
        var database = Server.Databases.GetDatabase(context.GetCapture(0));
        using var reader = database.BeginRead();
        var json = context.StartJson();
        json.WriteStartObject();
        json.WriteNumber("CountOfDocuments", reader.DocumentCount);
        json.WriteStartObject("Collections");
        foreach (var collection in reader.GetCollections())
            json.WriteNumber(collection.Name, collection.Count);
        json.WriteEndObject();
        json.WriteEndObject();
        return context.CompleteJsonAsync();
    }

    /// <summary>A collection's documents, newest change first.</summary>
    [Route("/databases/*/collections/docs", "GET")]
    public async ValueTask Docs(RequestContext context)
    {
        var database = Server.Databases.GetDatabase(context.GetCapture(0));
        var query = new QueryParameters(context.Request.QueryString.Value);
        var name = query.GetString("name");
        if (string.IsNullOrEmpty(name))
            throw HttpErrorException.BadRequest("Query parameter 'name' (the collection) is required, e.g. ?name=Users.");
        var start = query.GetInt32("start", 0);
        var pageSize = query.GetInt32("pageSize", DefaultPageSize, 0, MaxPageSize);

        await DocsHandler.WritePageAsync(context, database, reader => reader.KeysOfCollection(name, start, pageSize), "]}"u8.ToArray()).ConfigureAwait(false);
    }
}
