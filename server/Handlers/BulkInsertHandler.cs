using Jackdaw.Server.Hosting;
using Jackdaw.Server.Http;
using Jackdaw.Server.Routing;
using Microsoft.AspNetCore.Http.Features;

namespace Jackdaw.Server.Handlers;

/// <summary>
/// <c>POST /databases/*/bulk_insert</c>: a stream of newline-delimited <c>{"Id":…,"Document":{…}}</c>
/// lines, ingested by <see cref="BulkInsertOperation"/>. The answer, at the end of the body, is
/// <c>{"Count":N}</c>.
/// </summary>
public sealed class BulkInsertHandler(ServerContext server) : HandlerBase(server)
{
    [Route("/databases/*/bulk_insert", "POST")]
    public async ValueTask Post(RequestContext context)
    {
        var database = Server.Databases.GetDatabase(context.GetCaptureMemory(0));
        // The body is a stream of documents, each committed as it comes: the per-request body
        // limit (meant for single documents and batches) does not apply; each line is bounded instead.
        if (context.HttpContext.Features.Get<IHttpMaxRequestBodySizeFeature>() is { IsReadOnly: false } limit)
            limit.MaxRequestBodySize = null;
        var operation = new BulkInsertOperation(database, context.Server.Options.MaxRequestBodySize, context.Server.LoggerFactory.CreateLogger<BulkInsertOperation>());
        var committed = await operation.RunAsync(context.Request.BodyReader, context.RequestAborted).ConfigureAwait(false);

        var json = context.StartJson();
        json.WriteStartObject();
        json.WriteNumber("Count", committed);
        json.WriteEndObject();
        await context.CompleteJsonAsync().ConfigureAwait(false);
    }
}
