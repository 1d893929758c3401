using System.Buffers;
using System.IO.Pipelines;
using Jackdaw.Server.Databases;
using Jackdaw.Server.Documents.Commands;
using Jackdaw.Server.Errors;
using Jackdaw.Storage.Blittable;

namespace Jackdaw.Server.Http;

/// <summary>
/// Ingests a stream of newline-delimited <c>{"Id":…,"Document":{…}}</c> lines into a database:
/// lines are parsed as they arrive and committed in batches through the merger, up to
/// <see cref="MaxInFlight"/> batches committing while the next is parsed. A bad line or a broken
/// stream stops it: every batch committed before stays, the batch being parsed is not applied, and
/// the error names the line and the count committed.
/// </summary>
/// <remarks>It lives beside <see cref="BatchParser"/>, whose line format it reads.</remarks>
public sealed partial class BulkInsertOperation(DocumentDatabase database, long maxLineBytes, ILogger logger)
{
    private const int MaxBatchDocuments = 1024;
    private const long MaxBatchBytes = 8 * 1024 * 1024;
    private const int MaxInFlight = 2;

    // Up to MaxInFlight batches are committing (built, then waiting for their journal write)
    // while the next is parsed; each holds its own context until it is durable.
    private readonly Stack<JsonOperationContext> _idle = new();
    private readonly Queue<(Task Commit, int Count, JsonOperationContext Context)> _inFlight = new();
    private readonly BatchStream _stream = new();
    private JsonOperationContext _parsing = new();
    private List<BatchOperation> _batch = new(MaxBatchDocuments);
    private long _batchBytes;
    private long _committed;
    private long _line;

    /// <summary>Reads <paramref name="body"/> to its end; returns the number of documents committed.</summary>
    /// <exception cref="BadRequestException">A line is not a valid document line.</exception>
    /// <exception cref="PayloadTooLargeException">A line is longer than the largest body allowed.</exception>
    public async Task<long> RunAsync(PipeReader body, CancellationToken cancellationToken)
    {
        try
        {
            while (true)
            {
                ReadResult result;
                try
                {
                    result = await body.ReadAsync(cancellationToken).ConfigureAwait(false);
                }
                catch (Exception e) when (e is IOException or OperationCanceledException)
                {
                    // IOException covers the host's bad-request errors (a body cut short).
                    await DrainAsync().ConfigureAwait(false);
                    LogBrokenStream(logger, e, database.Name, _committed, _line);
                    throw;
                }

                var buffer = result.Buffer;
                if (buffer.Length > maxLineBytes && buffer.PositionOf((byte)'\n') is null)
                {
                    body.AdvanceTo(buffer.End);
                    throw LineTooLong(_line + 1);
                }
                var full = false;
                while (!full && TryReadLine(ref buffer, result.IsCompleted, out var text))
                {
                    _line++;
                    if (text.Length > maxLineBytes)
                    {
                        body.AdvanceTo(buffer.Start, buffer.End);
                        throw LineTooLong(_line);
                    }
                    if (IsBlank(text))
                        continue;
                    DocumentToPut document;
                    try
                    {
                        document = BatchParser.ParseInsertLine(text, _parsing, _line);
                    }
                    catch (Exception e) when (e is BadRequestException or BlittableParseException or System.Text.Json.JsonException)
                    {
                        body.AdvanceTo(buffer.Start, buffer.End);
                        await DrainAsync().ConfigureAwait(false);
                        throw new BadRequestException($"Bulk insert stopped at line {_line}: {e.Message} {_committed} document(s) were committed before it; the {_batch.Count} parsed after them were not.", e);
                    }
                    _batch.Add(new BatchOperation(document.Id, document, null));
                    _batchBytes += text.Length;
                    full = _batch.Count >= MaxBatchDocuments || _batchBytes >= MaxBatchBytes;
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
            return _committed;
        }
        finally
        {
            // Never leave a batch committing against a context that is about to be disposed.
            while (_inFlight.TryDequeue(out var pending))
            {
                try
                {
                    await pending.Commit.ConfigureAwait(false);
                }
                catch (Exception e)
                {
                    LogBrokenStream(logger, e, database.Name, _committed, _line);
                }
                pending.Context.Dispose();
            }
            _parsing.Dispose();
            while (_idle.TryPop(out var spare))
                spare.Dispose();
        }
    }

    /// <summary>Waits for the oldest committing batch and counts it; its context is reused.</summary>
    private async ValueTask DrainOneAsync()
    {
        var (commit, count, used) = _inFlight.Peek();
        try
        {
            await commit.ConfigureAwait(false);
        }
        finally
        {
            _inFlight.Dequeue();
            used.Reset();
            _idle.Push(used);
        }
        _committed += count;
    }

    private async ValueTask DrainAsync()
    {
        while (_inFlight.Count > 0)
            await DrainOneAsync().ConfigureAwait(false);
    }

    private async ValueTask SendBatchAsync()
    {
        if (_batch.Count == 0)
            return;
        // Count batches already done (and surface a failure) before queueing more.
        while (_inFlight.Count > 0 && (_inFlight.Count >= MaxInFlight || _inFlight.Peek().Commit.IsCompleted))
            await DrainOneAsync().ConfigureAwait(false);
        _inFlight.Enqueue((database.EnqueueAsync(new BatchCommand(_batch, _parsing, _stream)), _batch.Count, _parsing));
        _batch = new List<BatchOperation>(MaxBatchDocuments);
        _batchBytes = 0;
        _parsing = _idle.TryPop(out var next) ? next : new JsonOperationContext();
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

    private PayloadTooLargeException LineTooLong(long line) =>
        new($"Bulk insert line {line} is longer than the largest request body allowed ({maxLineBytes} bytes); nothing from it on was committed.");

    [LoggerMessage(Level = LogLevel.Warning, Message = "Bulk insert into {Database} ended early at line {Line}; {Committed} document(s) had been committed")]
    private static partial void LogBrokenStream(ILogger logger, Exception exception, string database, long committed, long line);
}
