using Jackdaw.Server.Hosting;
using Jackdaw.Server.Http;
using Jackdaw.Server.Routing;
using Jackdaw.Server.Errors;

namespace Jackdaw.Server.Handlers;

/// <summary><c>/admin/databases</c>: list, create and delete databases.</summary>
public sealed class DatabasesHandler(ServerContext server) : HandlerBase(server)
{
    [Route("/admin/databases", "GET")]
    public ValueTask List(RequestContext context)
    {
        var json = context.StartJson();
        json.WriteStartObject();
        json.WriteStartArray("Databases");
        foreach (var name in Server.Databases.Names)
            json.WriteStringValue(name);
        json.WriteEndArray();
        json.WriteEndObject();
        return context.CompleteJsonAsync();
    }

    [Route("/admin/databases", "PUT")]
    public ValueTask Create(RequestContext context)
    {
        var name = RequiredName(context);
        if (!Server.Databases.TryCreate(name))
            throw new DatabaseAlreadyExistsException(name);
        var json = context.StartJson(StatusCodes.Status201Created);
        json.WriteStartObject();
        json.WriteString("Name", name);
        json.WriteEndObject();
        return context.CompleteJsonAsync();
    }

    [Route("/admin/databases", "DELETE")]
    public async ValueTask Delete(RequestContext context)
    {
        var name = RequiredName(context);
        if (!await Server.Databases.TryDeleteAsync(name).ConfigureAwait(false))
            throw new DatabaseDoesNotExistException(name.ToString());
        context.Response.StatusCode = StatusCodes.Status204NoContent;
    }

    private static string RequiredName(RequestContext context)
    {
        var name = new QueryParameters(context.Request.QueryString.Value).GetString("name");
        if (name is null)
            throw new BadRequestException("Query parameter 'name' is required, e.g. /admin/databases?name=Northwind.");
        return name;
    }
}
