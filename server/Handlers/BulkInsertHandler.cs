using Jackdaw.Server.Databases;
using Jackdaw.Server.Errors;
using Jackdaw.Server.Hosting;
using Jackdaw.Server.Wire;
using Jackdaw.Server.Routing;
using Jackdaw.Server.Security;

namespace Jackdaw.Server.Handlers;

/// <summary>
/// <c>POST /databases/*/bulk_insert</c>: a stream of newline-delimited <c>{"Id":…,"Document":{…}}</c>
/// lines, ingested by <see cref="BulkInsertOperation"/>; the answer, at the end of the body, is
/// <c>{"Count":N}</c>. With <c>?id=</c> (an operation id), RavenDB's form: a JSON array of
/// <c>{"Id","Type":"PUT","Document"}</c> commands, answered 204 at its closing <c>]</c>; unless the
/// body is said to be <c>application/x-ndjson</c> (Jackdaw's client following its progress): lines
/// as without an id, answered <c>{"Count":N}</c>. Either way the operation is tracked: its state
/// at <c>operations/state</c>, its progress and end on the changes feed.
/// </summary>
public sealed class BulkInsertHandler(ServerContext server) : HandlerBase(server)
{
    [Route("/databases/*/bulk_insert", "POST")]
    [Access(RouteAccess.DatabaseReadWrite)]
    public async ValueTask Post(RequestContext context)
    {
        var database = Server.Databases.GetDatabase(context.GetCaptureMemory(0));
        // The body is a stream of documents, each committed as it comes: it has a limit of its own
        // (none by default), and each line is bounded as a document.
        context.LimitBody(RequestBodyKind.BulkInsert);
        var (lineBytes, lineSetting) = Server.Options.Limits.BodyLimit(RequestBodyKind.Document, Server.Options.MaxRequestBodySize);
        var logger = context.Server.LoggerFactory.CreateLogger<BulkInsertOperation>();

        // RavenDB's form names an operation (from operations/next-operation-id) and sends a JSON
        // array it never ends: answered 204 at the closing ']', followed by operations/state.
        var query = new UrlQuery(context.Request.QueryString.Value);
        var skipUnchanged = query.GetString("skipOverwriteIfUnchanged") switch
        {
            null => false,
            var value when value.Equals("true", StringComparison.OrdinalIgnoreCase) => true,
            var value when value.Equals("false", StringComparison.OrdinalIgnoreCase) => false,
            var value => throw new BadRequestException($"Query parameter 'skipOverwriteIfUnchanged' is '{value}'; it is true or false."),
        };
        if (query.TryGetRaw("id", out _))
        {
            var tracked = database.Operations.Start(query.GetInt64("id", 0, min: 1));
            using var killOrAbort = CancellationTokenSource.CreateLinkedTokenSource(context.RequestAborted, tracked.Killed);
            var lines = IsNdjson(context.Request.ContentType);
            var insert = new BulkInsertOperation(database, (lineBytes!.Value, lineSetting), logger, jsonArray: !lines, skipUnchanged, tracked);
            // The client may gzip the stream (bulkInsert({ useCompression: true })).
            var body = string.Equals(context.Request.Headers.ContentEncoding, "gzip", StringComparison.OrdinalIgnoreCase)
                ? System.IO.Pipelines.PipeReader.Create(new System.IO.Compression.GZipStream(context.Request.Body, System.IO.Compression.CompressionMode.Decompress))
                : context.Request.BodyReader;
            long count;
            try
            {
                count = await insert.RunAsync(body, killOrAbort.Token).ConfigureAwait(false);
                tracked.Complete(count);
            }
            catch (OperationCanceledException e) when (tracked.Killed.IsCancellationRequested && !context.RequestAborted.IsCancellationRequested)
            {
                var killed = new BadRequestException($"Bulk insert {tracked.Id} was killed (operations/kill); the {insert.Committed} document(s) committed before stay.", e);
                tracked.Fail(ErrorMapping.FailureOf(killed), insert.Committed);
                throw killed;
            }
            catch (Exception e)
            {
                tracked.Fail(ErrorMapping.FailureOf(context.ExplainLimit(e)), insert.Committed);
                throw;
            }
            if (lines)
            {
                await WriteCountAsync(context, count).ConfigureAwait(false);
                return;
            }
            context.Response.StatusCode = StatusCodes.Status204NoContent;
            return;
        }

        // An empty body said to be empty is a mistake (curl --data-binary @file sends nothing when
        // the file does not exist); a streamed one (the client's, with nothing to store) is not.
        if (context.Request.ContentLength == 0)
        {
            throw new BadRequestException("The body is empty: bulk_insert takes one JSON document per line, {\"Id\":...,\"Document\":{...}} or a document with its id in @metadata.@id (with curl --data-binary @file, check that the file exists).");
        }
        var operation = new BulkInsertOperation(database, (lineBytes!.Value, lineSetting), logger, skipUnchanged: skipUnchanged);
        await WriteCountAsync(context, await operation.RunAsync(context.Request.BodyReader, context.RequestAborted).ConfigureAwait(false)).ConfigureAwait(false);
    }

    private static ValueTask WriteCountAsync(RequestContext context, long committed)
    {
        var json = context.StartJson();
        json.WriteStartObject();
        json.WriteNumber("Count", committed);
        json.WriteEndObject();
        return context.CompleteJsonAsync();
    }

    private static bool IsNdjson(string? contentType) =>
        contentType is not null && contentType.AsSpan().TrimStart().StartsWith("application/x-ndjson", StringComparison.OrdinalIgnoreCase);
}
