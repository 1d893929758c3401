using System.Buffers;
using Jackdaw.Server.Hosting;
using Jackdaw.Server.Wire;
using Jackdaw.Server.Routing;
using Jackdaw.Server.Errors;
using Jackdaw.Server.Security;

namespace Jackdaw.Server.Handlers;

/// <summary><c>/databases/*/collections</c>: per-collection counts and documents.</summary>
public sealed class CollectionsHandler(ServerContext server) : HandlerBase(server)
{
    private const int DefaultPageSize = 25;

    private static readonly ReadOnlyMemory<byte> PageSuffix = "]}"u8.ToArray();

    [Route("/databases/*/collections/stats", "GET")]
    [Access(RouteAccess.DatabaseRead)]
    public ValueTask Stats(RequestContext context)
    {
        var database = Server.Databases.GetDatabase(context.GetCaptureMemory(0));
        using var reader = database.BeginRead();
        var json = context.StartJson();
        json.WriteStartObject();
        json.WriteNumber("CountOfDocuments", reader.DocumentCount);
        json.WriteStartObject("Collections");
        foreach (var collection in reader.GetCollections())
        {
            json.WriteNumber(collection.Name, collection.Count);
        }
        json.WriteEndObject();
        json.WriteEndObject();
        return context.CompleteJsonAsync();
    }

    /// <summary>
    /// <c>GET /databases/*/collections/docs?name=&amp;start=&amp;pageSize=&amp;order=desc|asc</c>: a
    /// collection's documents by etag, newest change first (<c>desc</c>, the default) or oldest first.
    /// </summary>
    [Route("/databases/*/collections/docs", "GET")]
    [Access(RouteAccess.DatabaseRead)]
    public async ValueTask Docs(RequestContext context)
    {
        var database = Server.Databases.GetDatabase(context.GetCaptureMemory(0));
        var query = new UrlQuery(context.Request.QueryString.Value);
        var name = query.GetString("name");
        if (string.IsNullOrEmpty(name))
        {
            throw new BadRequestException("Query parameter 'name' (the collection) is required, e.g. ?name=Users.");
        }
        var start = query.GetInt32("start", 0);
        var pageSize = PageSize(query, DefaultPageSize);
        var ascending = query.GetString("order") switch
        {
            null => false,
            var value when value.Equals("desc", StringComparison.OrdinalIgnoreCase) => false,
            var value when value.Equals("asc", StringComparison.OrdinalIgnoreCase) => true,
            var value => throw new BadRequestException($"Query parameter 'order' is '{value}'; it is desc (newest change first, the default) or asc (oldest first)."),
        };

        context.Response.StatusCode = StatusCodes.Status200OK;
        context.Response.ContentType = JsonErrors.JsonContentType;
        await DocumentResultsWriter.WritePageAsync(context.Response.BodyWriter, database, reader => reader.KeysOfCollection(name, start, pageSize, ascending), PageSuffix, context.RequestAborted, written: context.ResponseBytes).ConfigureAwait(false);
    }
}
