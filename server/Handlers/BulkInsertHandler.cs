using System.Buffers;
using System.IO.Pipelines;
using Jackdaw.Server.Documents;
using Jackdaw.Server.Documents.Commands;
using Jackdaw.Server.Hosting;
using Jackdaw.Server.Http;
using Jackdaw.Server.Routing;
using Jackdaw.Storage.Blittable;
using Microsoft.AspNetCore.Http.Features;

namespace Jackdaw.Server.Handlers;

/// <summary>
/// <c>POST /databases/*/bulk_insert</c>: a stream of newline-delimited <c>{"Id":…,"Document":{…}}</c>
/// lines, parsed as they arrive and committed in batches through the merger, one batch in flight
/// while the next is parsed. The answer, at the end of the body, is <c>{"Count":N}</c>. A bad line
/// or a broken stream stops it: every batch committed before stays, the batch being parsed is not
/// applied, and the error names the line and the count committed.
/// </summary>
public sealed class BulkInsertHandler(ServerContext server) : HandlerBase(server)
{
    private const int MaxBatchDocuments = 1024;
    private const long MaxBatchBytes = 8 * 1024 * 1024;
    private const int MaxInFlight = 2;

    [Route("/databases/*/bulk_insert", "POST")]
    public async ValueTask Post(RequestContext context)
    {
        var database = Server.Databases.GetDatabase(context.GetCapture(0));
        // The body is a stream of documents, each committed as it comes: the per-request body
        // limit (meant for single documents and batches) does not apply; each line is bounded below.
        if (context.HttpContext.Features.Get<IHttpMaxRequestBodySizeFeature>() is { IsReadOnly: false } limit)
            limit.MaxRequestBodySize = null;
        var maxLine = context.Server.Options.MaxRequestBodySize;
        var body = context.Request.BodyReader;
        var logger = context.Server.LoggerFactory.CreateLogger<BulkInsertHandler>();

        // Up to MaxInFlight batches are committing (built, then waiting for their journal write)
        // while the next is parsed; each holds its own context until it is durable.
        var idle = new Stack<JsonOperationContext>();
        var inFlight = new Queue<(Task Commit, int Count, JsonOperationContext Context)>();
        var parsing = new JsonOperationContext();
        var stream = new BatchStream();
        var batch = new List<BatchOperation>(MaxBatchDocuments);
        long batchBytes = 0;
        long committed = 0;
        long line = 0;

        // Waits for the oldest committing batch and counts it; its context is reused.
        async ValueTask DrainOneAsync()
        {
            var (commit, count, used) = inFlight.Peek();
            try
            {
                await commit.ConfigureAwait(false);
            }
            finally
            {
                inFlight.Dequeue();
                used.Reset();
                idle.Push(used);
            }
            committed += count;
        }

        async ValueTask DrainAsync()
        {
            while (inFlight.Count > 0)
                await DrainOneAsync().ConfigureAwait(false);
        }

        async ValueTask SendBatchAsync()
        {
            if (batch.Count == 0)
                return;
            // Count batches already done (and surface a failure) before queueing more.
            while (inFlight.Count > 0 && (inFlight.Count >= MaxInFlight || inFlight.Peek().Commit.IsCompleted))
                await DrainOneAsync().ConfigureAwait(false);
            inFlight.Enqueue((database.Merger.EnqueueAsync(new BatchCommand(batch, parsing, stream)), batch.Count, parsing));
            batch = new List<BatchOperation>(MaxBatchDocuments);
            batchBytes = 0;
            parsing = idle.TryPop(out var next) ? next : new JsonOperationContext();
        }

        try
        {
            while (true)
            {
                ReadResult result;
                try
                {
                    result = await body.ReadAsync(context.RequestAborted).ConfigureAwait(false);
                }
                catch (Exception e) when (e is IOException or OperationCanceledException or BadHttpRequestException)
                {
                    await DrainAsync().ConfigureAwait(false);
                    LogBrokenStream(logger, e, database.Name, committed, line);
                    throw;
                }

                var buffer = result.Buffer;
                if (buffer.Length > maxLine && buffer.PositionOf((byte)'\n') is null)
                {
                    body.AdvanceTo(buffer.End);
                    throw LineTooLong(line + 1, maxLine);
                }
                var full = false;
                while (!full && TryReadLine(ref buffer, result.IsCompleted, out var text))
                {
                    line++;
                    if (text.Length > maxLine)
                    {
                        body.AdvanceTo(buffer.Start, buffer.End);
                        throw LineTooLong(line, maxLine);
                    }
                    if (IsBlank(text))
                        continue;
                    DocumentToPut document;
                    try
                    {
                        document = BatchParser.ParseInsertLine(text, parsing, line);
                    }
                    catch (Exception e) when (e is HttpErrorException or BlittableParseException or System.Text.Json.JsonException)
                    {
                        body.AdvanceTo(buffer.Start, buffer.End);
                        await DrainAsync().ConfigureAwait(false);
                        throw HttpErrorException.BadRequest($"Bulk insert stopped at line {line}: {e.Message} {committed} document(s) were committed before it; the {batch.Count} parsed after them were not.", e);
                    }
                    batch.Add(new BatchOperation(document.Id, document, null));
                    batchBytes += text.Length;
                    full = batch.Count >= MaxBatchDocuments || batchBytes >= MaxBatchBytes;
                }

                // A full batch leaves complete lines unread: mark nothing more as examined so the
                // next read returns them at once.
                body.AdvanceTo(buffer.Start, full ? buffer.Start : result.Buffer.End);
                if (full)
                    await SendBatchAsync().ConfigureAwait(false);
                else if (result.IsCompleted)
                    break;
            }

            await SendBatchAsync().ConfigureAwait(false);
            await DrainAsync().ConfigureAwait(false);
        }
        finally
        {
            // Never leave a batch committing against a context that is about to be disposed.
            while (inFlight.TryDequeue(out var pending))
            {
                try
                {
                    await pending.Commit.ConfigureAwait(false);
                }
                catch (Exception e)
                {
                    LogBrokenStream(logger, e, database.Name, committed, line);
                }
                pending.Context.Dispose();
            }
            parsing.Dispose();
            while (idle.TryPop(out var spare))
                spare.Dispose();
        }

        var json = context.StartJson();
        json.WriteStartObject();
        json.WriteNumber("Count", committed);
        json.WriteEndObject();
        await context.CompleteJsonAsync().ConfigureAwait(false);
    }

    /// <summary>Takes the next line off <paramref name="buffer"/>; at the end of the body the rest is a line too.</summary>
    private static bool TryReadLine(ref ReadOnlySequence<byte> buffer, bool isCompleted, out ReadOnlySequence<byte> line)
    {
        var newline = buffer.PositionOf((byte)'\n');
        if (newline is { } position)
        {
            line = buffer.Slice(0, position);
            buffer = buffer.Slice(buffer.GetPosition(1, position));
            return true;
        }
        if (isCompleted && !buffer.IsEmpty)
        {
            line = buffer;
            buffer = buffer.Slice(buffer.End);
            return true;
        }
        line = default;
        return false;
    }

    private static bool IsBlank(ReadOnlySequence<byte> line)
    {
        foreach (var segment in line)
        {
            if (segment.Span.IndexOfAnyExcept(" \t\r"u8) >= 0)
                return false;
        }
        return true;
    }

    private static HttpErrorException LineTooLong(long line, long maxLine) =>
        new(StatusCodes.Status413PayloadTooLarge, ErrorTypes.PayloadTooLarge, $"Bulk insert line {line} is longer than the largest request body allowed ({maxLine} bytes); nothing from it on was committed.");

    private static void LogBrokenStream(ILogger logger, Exception e, string database, long committed, long line) =>
        logger.LogWarning(e, "Bulk insert into {Database} ended early at line {Line}; {Committed} document(s) had been committed", database, line, committed);
}
