using System.Globalization;
using Jackdaw.Server.Databases;
using Jackdaw.Server.Documents;
using Jackdaw.Server.Errors;
using Jackdaw.Server.Hosting;
using Jackdaw.Server.Wire;
using Jackdaw.Server.Routing;
using Jackdaw.Server.Security;

namespace Jackdaw.Server.Handlers;

/// <summary>
/// <c>/databases/*/hilo</c>: id ranges for the HiLo generators of RavenDB's clients, which build
/// ids as <c>{Prefix}{number}-{ServerTag}</c> (e.g. <c>users/1-A</c>) without a request per id.
/// </summary>
public sealed class HiLoHandler(ServerContext server) : HandlerBase(server)
{
    /// <summary>
    /// <c>GET /databases/*/hilo/next?tag=&amp;lastBatchSize=&amp;lastRangeAt=&amp;identityPartsSeparator=&amp;lastMax=</c>
    /// → <c>{"Prefix":"users/","Low":1,"High":32,"LastSize":32,"ServerTag":"A","LastRangeAt":"..."}</c>.
    /// </summary>
    [Route("/databases/*/hilo/next", "GET")]
    // ReadWrite, as RavenDB: taking a range writes the tag's HiLo document.
    [Access(RouteAccess.DatabaseReadWrite)]
    public async ValueTask Next(RequestContext context)
    {
        var database = Server.Databases.GetDatabase(context.GetCaptureMemory(0));
        var query = new UrlQuery(context.Request.QueryString.Value);
        var tag = RequiredTag(query);
        var lastSize = query.GetInt64("lastBatchSize", 0);
        var lastMax = query.GetInt64("lastMax", 0);
        var separator = query.GetString("identityPartsSeparator") is { Length: > 0 } given ? given : "/";
        var lastRangeAt = DateTime.TryParse(query.GetString("lastRangeAt"), CultureInfo.InvariantCulture, DateTimeStyles.AdjustToUniversal | DateTimeStyles.AssumeUniversal, out var at) ? at : default;

        var command = new HiLoRanges.NextCommand(tag, HiLoRanges.NextSize(lastSize, lastRangeAt, DateTime.UtcNow), lastMax);
        await database.EnqueueAsync(command).ConfigureAwait(false);
        var range = command.Result;

        var json = context.StartJson();
        json.WriteStartObject();
        json.WriteString("Prefix", tag + separator);
        json.WriteNumber("Low", range.Low);
        json.WriteNumber("High", range.High);
        json.WriteNumber("LastSize", range.Size);
        json.WriteString("ServerTag", context.Server.NodeTag);
        // Seven fraction digits and a Z: RavenDB's clients parse nothing less.
        json.WriteString("LastRangeAt", range.At.ToString("yyyy-MM-dd'T'HH:mm:ss.fffffff'Z'", CultureInfo.InvariantCulture));
        json.WriteEndObject();
        await context.CompleteJsonAsync().ConfigureAwait(false);
    }

    /// <summary><c>PUT /databases/*/hilo/return?tag=&amp;end=&amp;last=</c>: gives back the unused end of a range (204).</summary>
    [Route("/databases/*/hilo/return", "PUT")]
    [Access(RouteAccess.DatabaseReadWrite)]
    public async ValueTask Return(RequestContext context)
    {
        var database = Server.Databases.GetDatabase(context.GetCaptureMemory(0));
        var query = new UrlQuery(context.Request.QueryString.Value);
        var tag = RequiredTag(query);
        var end = query.GetInt64("end", 0);
        var last = query.GetInt64("last", 0);
        await database.EnqueueAsync(new HiLoRanges.ReturnCommand(tag, end, last)).ConfigureAwait(false);
        context.Response.StatusCode = StatusCodes.Status204NoContent;
    }

    private static string RequiredTag(UrlQuery query)
    {
        var tag = query.GetString("tag");
        if (string.IsNullOrEmpty(tag))
        {
            throw new BadRequestException("Query parameter 'tag' (the collection's id prefix, e.g. users) is required.");
        }
        // The tag names the document that shows its state, Raven/Hilo/{tag}: it must make a valid id.
        if (DocumentIds.Validate(HiLoRanges.DocumentId(tag)) is { } problem)
        {
            throw new BadRequestException("Query parameter 'tag': " + problem);
        }
        return tag;
    }
}
