using Jackdaw.Server.Queries;
using Jackdaw.Server.Databases;
using Jackdaw.Server.Errors;
using Jackdaw.Server.Hosting;
using Jackdaw.Server.Wire;
using Jackdaw.Server.Routing;
using Jackdaw.Server.Security;

namespace Jackdaw.Server.Handlers;

/// <summary>
/// <c>/databases/*/queries</c>, RavenDB's query endpoint (planning and running in
/// <see cref="QueryRunner"/>). The answer carries <c>ETag</c> = its <c>ResultEtag</c>; a request whose
/// <c>If-None-Match</c> still matches gets 304 with no body.
/// </summary>
public sealed class QueriesHandler(ServerContext server) : HandlerBase(server)
{
    /// <summary>
    /// <c>POST /databases/*/queries</c> with <c>{"Query":"from Orders where ...","QueryParameters":{...},
    /// "WaitForNonStaleResults":false,"WaitForNonStaleResultsTimeout":"00:00:15"}</c>, optionally
    /// <c>?start=&amp;pageSize=&amp;timings=true</c>.
    /// </summary>
    [Route("/databases/*/queries", "POST")]
    [Access(RouteAccess.DatabaseRead)]
    public async ValueTask Post(RequestContext context)
    {
        var database = Server.Databases.GetDatabase(context.GetCaptureMemory(0));
        var request = Paged(context, await QueryRequestReader.ReadAsync(context.Request.BodyReader, context.RequestAborted).ConfigureAwait(false));
        if (Debug(context) is { } debug)
        {
            await ExplainAsync(context, database, request, debug).ConfigureAwait(false);
            return;
        }
        await AnswerAsync(context, database, request).ConfigureAwait(false);
    }

    /// <summary><c>GET /databases/*/queries?query=[&amp;waitForNonStaleResults=true&amp;waitForNonStaleResultsTimeout=00:00:15][&amp;start=&amp;pageSize=&amp;timings=true]</c>.</summary>
    [Route("/databases/*/queries", "GET")]
    [Access(RouteAccess.DatabaseRead)]
    public ValueTask Get(RequestContext context)
    {
        var database = Server.Databases.GetDatabase(context.GetCaptureMemory(0));
        var request = Paged(context, QueryRequestReader.FromQueryString(context.Request.QueryString.Value));
        return Debug(context) is { } debug ? ExplainAsync(context, database, request, debug) : AnswerAsync(context, database, request);
    }

    /// <summary>
    /// <c>?start=&amp;pageSize=</c> (a page on top of the query's own <c>offset</c> and <c>limit</c>, as
    /// RavenDB's GET form reads them) and <c>?timings=true</c> (the answer's <c>Timings</c>, as
    /// <c>include timings()</c>): the studio's query page pages and times any query without
    /// rewriting its text.
    /// </summary>
    private static QueryRequest Paged(RequestContext context, QueryRequest request)
    {
        var query = new UrlQuery(context.Request.QueryString.Value);
        var start = query.GetInt64("start", 0);
        long? pageSize = query.GetString("pageSize") is { Length: > 0 } ? query.GetInt64("pageSize", 0, max: context.Server.Options.Limits.MaxQueryLimit) : null;
        var timings = query.GetString("timings") is { Length: > 0 } flag
            && (bool.TryParse(flag, out var on) ? on : throw new BadRequestException($"timings={flag} is not true or false."));
        return start == 0 && pageSize is null && !timings ? request : request with { Start = start, PageSize = pageSize, IncludeTimings = timings };
    }

    /// <summary>The <c>debug</c> parameter, when given.</summary>
    private static string? Debug(RequestContext context) =>
        new UrlQuery(context.Request.QueryString.Value).GetString("debug") is { Length: > 0 } debug ? debug : null;

    /// <summary><c>?debug=explain</c>: which index would answer the query, and why (RavenDB's <c>ExplainQueryCommand</c>).</summary>
    private static async ValueTask ExplainAsync(RequestContext context, DocumentDatabase database, QueryRequest request, string debug)
    {
        if (!string.Equals(debug, "explain", StringComparison.OrdinalIgnoreCase))
        {
            throw new BadRequestException($"debug={debug} is not supported; debug=explain tells which index a query would use and why.");
        }
        var body = QueryRunner.Explain(database, request);
        var response = context.Response;
        response.StatusCode = StatusCodes.Status200OK;
        response.ContentType = JsonErrors.JsonContentType;
        await response.BodyWriter.WriteAsync(body, context.RequestAborted).ConfigureAwait(false);
    }

    private static async ValueTask AnswerAsync(RequestContext context, DocumentDatabase database, QueryRequest request)
    {
        var ifNoneMatch = context.Request.Headers.IfNoneMatch.Count > 0 ? context.Request.Headers.IfNoneMatch[0] : null;
        var answer = await QueryRunner.RunAsync(database, request, context.Server.Options.Limits.MaxQueryLimit, ifNoneMatch, context.RequestAborted).ConfigureAwait(false);
        var response = context.Response;
        response.Headers.ETag = "\"" + answer.ResultEtag + "\"";
        if (answer.NotModified)
        {
            response.StatusCode = StatusCodes.Status304NotModified;
            return;
        }
        response.StatusCode = StatusCodes.Status200OK;
        response.ContentType = JsonErrors.JsonContentType;
        await response.BodyWriter.WriteAsync(answer.Body, context.RequestAborted).ConfigureAwait(false);
    }
}
