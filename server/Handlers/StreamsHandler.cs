using Jackdaw.Server.Queries;
using Jackdaw.Server.Documents;
using Jackdaw.Server.Hosting;
using Jackdaw.Server.Wire;
using Jackdaw.Server.Routing;
using Jackdaw.Server.Security;

namespace Jackdaw.Server.Handlers;

/// <summary>
/// <c>/databases/*/streams/...</c>: RavenDB's streams of documents and of query results, any number
/// of them, written as they are read (<see cref="DocumentStream"/>, <see cref="QueryStream"/>) in
/// the answer shapes of <see cref="StreamResultsWriter"/>; <c>format=jsonl</c> gives JSON lines,
/// as RavenDB's Node.js client asks.
/// </summary>
public sealed class StreamsHandler(ServerContext server) : HandlerBase(server)
{
    private const string JsonLinesContentType = "application/jsonl; charset=utf-8";

    /// <summary>
    /// <c>GET /databases/*/streams/docs?startsWith=&amp;matches=&amp;exclude=&amp;startAfter=&amp;start=&amp;pageSize=&amp;format=</c>:
    /// the documents whose id starts with <c>startsWith</c> in id order, or without it every
    /// document, newest change first (see <see cref="DocumentStreamRequest"/>).
    /// </summary>
    [Route("/databases/*/streams/docs", "GET")]
    [Access(RouteAccess.DatabaseRead)]
    public ValueTask Docs(RequestContext context)
    {
        var database = Server.Databases.GetDatabase(context.GetCaptureMemory(0));
        var query = new UrlQuery(context.Request.QueryString.Value);
        var output = Start(context, StreamResultsWriter.ParseFormat(query.GetString("format")));
        var request = new DocumentStreamRequest(
            query.GetString("startsWith"),
            IdPattern.Parse(query.GetString("matches")),
            // RavenDB's clients send "exclude"; its server reads "excludes": take either.
            IdPattern.Parse(query.GetString("exclude") ?? query.GetString("excludes")),
            query.GetString("startAfter"),
            query.GetInt64("start", 0),
            query.GetInt64("pageSize", long.MaxValue));
        return DocumentStream.WriteAsync(output, database, request, context.RequestAborted);
    }

    /// <summary>HEAD of the documents' stream: 200 without reading anything (RavenDB answers it so too).</summary>
    [Route("/databases/*/streams/docs", "HEAD")]
    [Access(RouteAccess.DatabaseRead)]
    public ValueTask DocsHead(RequestContext context)
    {
        Server.Databases.GetDatabase(context.GetCaptureMemory(0));
        context.Response.StatusCode = StatusCodes.Status200OK;
        return ValueTask.CompletedTask;
    }

    /// <summary><c>POST /databases/*/streams/queries[?format=jsonl]</c> with a query's body, as <c>POST /queries</c> takes it.</summary>
    [Route("/databases/*/streams/queries", "POST")]
    [Access(RouteAccess.DatabaseRead)]
    public async ValueTask PostQuery(RequestContext context)
    {
        var database = Server.Databases.GetDatabase(context.GetCaptureMemory(0));
        var format = StreamResultsWriter.ParseFormat(new UrlQuery(context.Request.QueryString.Value).GetString("format"));
        var request = await QueryRequestReader.ReadAsync(context.Request.BodyReader, context.RequestAborted).ConfigureAwait(false);
        await QueryStream.WriteAsync(Start(context, format), database, request, 0, long.MaxValue, context.RequestAborted).ConfigureAwait(false);
    }

    /// <summary>
    /// <c>GET /databases/*/streams/queries?query=&amp;start=&amp;pageSize=&amp;format=</c>: the query in the URL;
    /// <c>start</c> and <c>pageSize</c> page on top of its own <c>offset</c> and <c>limit</c>.
    /// </summary>
    [Route("/databases/*/streams/queries", "GET")]
    [Access(RouteAccess.DatabaseRead)]
    public ValueTask GetQuery(RequestContext context)
    {
        var database = Server.Databases.GetDatabase(context.GetCaptureMemory(0));
        var query = new UrlQuery(context.Request.QueryString.Value);
        var format = StreamResultsWriter.ParseFormat(query.GetString("format"));
        var request = QueryRequestReader.FromQueryString(context.Request.QueryString.Value);
        var start = query.GetInt64("start", 0);
        var pageSize = query.GetInt64("pageSize", long.MaxValue);
        return QueryStream.WriteAsync(Start(context, format), database, request, start, pageSize, context.RequestAborted);
    }

    /// <summary>The answer's status and type, set before anything is written (an error before the first result replaces them).</summary>
    private static StreamResultsWriter Start(RequestContext context, StreamFormat format)
    {
        context.Response.StatusCode = StatusCodes.Status200OK;
        context.Response.ContentType = format == StreamFormat.Jsonl ? JsonLinesContentType : JsonErrors.JsonContentType;
        return new StreamResultsWriter(context.Response.BodyWriter, format, context.ResponseBytes);
    }
}
