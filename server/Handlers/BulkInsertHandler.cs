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

        // Two contexts: one holds the batch being committed, the other the batch being parsed.
        using var first = new JsonOperationContext();
        using var second = new JsonOperationContext();
        var parsing = first;
        var batch = new List<BatchOperation>(MaxBatchDocuments);
        long batchBytes = 0;
        Task? inFlight = null;
        var inFlightCount = 0;
        long committed = 0;
        long line = 0;

        // Waits for the batch being committed, if any, and counts it.
        async ValueTask DrainAsync()
        {
            if (inFlight is not { } pending)
                return;
            inFlight = null;
            await pending.ConfigureAwait(false);
            committed += inFlightCount;
        }

        async ValueTask SendBatchAsync()
        {
            await DrainAsync().ConfigureAwait(false);
            if (batch.Count == 0)
                return;
            inFlight = database.Merger.EnqueueAsync(new BatchCommand(batch, parsing));
            inFlightCount = batch.Count;
            batch = new List<BatchOperation>(MaxBatchDocuments);
            batchBytes = 0;
            parsing = ReferenceEquals(parsing, first) ? second : first;
            parsing.Reset();
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
            if (inFlight is not null)
            {
                try
                {
                    await inFlight.ConfigureAwait(false);
                }
                catch (Exception e)
                {
                    LogBrokenStream(logger, e, database.Name, committed, line);
                }
            }
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
