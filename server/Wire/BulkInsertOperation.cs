using System.Buffers;
using System.IO.Pipelines;
using Jackdaw.Server.Databases;
using Jackdaw.Server.Documents.Commands;
using Jackdaw.Server.Errors;
using System.Text.Json;
using Jackdaw.Storage.Blittable;

namespace Jackdaw.Server.Wire;

/// <summary>
/// Ingests a stream of newline-delimited <c>{"Id":…,"Document":{…}}</c> lines into a database:
/// lines are parsed as they arrive and committed in batches through the merger, up to
/// <see cref="MaxInFlight"/> batches committing while the next is parsed. A bad line or a broken
/// stream stops it: every batch committed before stays, the batch being parsed is not applied, and
/// the error names the line and the count committed. A tracked insert (RavenDB's, with an
/// operation id) counts into its <see cref="DatabaseOperation"/> as it goes, for the progress the
/// operation publishes: each document read, each batch once durable.
/// </summary>
/// <remarks>It lives beside <see cref="BatchParser"/>, whose line format it reads.</remarks>
/// <param name="maxLine">The longest line, in bytes, and the setting that decides it (for the error that names it).</param>
public sealed partial class BulkInsertOperation(DocumentDatabase database, (long Bytes, string Setting) maxLine, ILogger logger, bool jsonArray = false, bool skipUnchanged = false, DatabaseOperation? tracked = null)
{
    private static readonly JsonReaderOptions ScanOptions = new() { MaxDepth = 1024 };
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
    private long _batchesSent;

    // RavenDB's form: where the array scan stands, and the element being scanned across reads.
    private ArrayPart _part = ArrayPart.Open;
    private bool _inElement;
    private long _scanned;
    private int _depth;
    private JsonReaderState _scanState;
    private bool _ended;

    private enum ArrayPart
    {
        Open,
        FirstElementOrClose,
        Element,
        CommaOrClose,
    }

    /// <summary>The documents committed so far.</summary>
    public long Committed => _committed;

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
                if (!jsonArray && buffer.Length > maxLine.Bytes && buffer.PositionOf((byte)'\n') is null)
                {
                    body.AdvanceTo(buffer.End);
                    throw LineTooLong(_line + 1);
                }
                var full = false;
                while (!full && TryReadItem(ref buffer, result.IsCompleted, out var text))
                {
                    _line++;
                    if (text.Length > maxLine.Bytes)
                    {
                        body.AdvanceTo(buffer.Start, buffer.End);
                        throw LineTooLong(_line);
                    }
                    if (IsBlank(text))
                    {
                        continue;
                    }
                    DocumentToPut? document;
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
                    if (document is null)
                    {
                        continue;
                    }
                    _batch.Add(new BatchOperation(document.Id, document, null));
                    tracked?.DocumentProcessed();
                    _batchBytes += text.Length;
                    full = _batch.Count >= MaxBatchDocuments || _batchBytes >= MaxBatchBytes;
                }

                // A full batch leaves complete lines unread: mark nothing more as examined so the
                // next read returns them at once.
                body.AdvanceTo(buffer.Start, full ? buffer.Start : result.Buffer.End);
                if (full)
                {
                    await SendBatchAsync().ConfigureAwait(false);
                }
                else if (result.IsCompleted || _ended)
                {
                    break;
                }
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
            {
                spare.Dispose();
            }
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
        {
            await DrainOneAsync().ConfigureAwait(false);
        }
    }

    private async ValueTask SendBatchAsync()
    {
        if (_batch.Count == 0)
        {
            return;
        }
        // Count batches already done (and surface a failure) before queueing more.
        while (_inFlight.Count > 0 && (_inFlight.Count >= MaxInFlight || _inFlight.Peek().Commit.IsCompleted))
        {
            await DrainOneAsync().ConfigureAwait(false);
        }
        var commit = database.EnqueueAsync(new BatchCommand(_batch, _parsing, _stream) { SkipUnchanged = skipUnchanged });
        if (tracked is not null)
        {
            CountWhenDurable(commit, tracked, ++_batchesSent, _batch.Count, _batch[^1].Id);
        }
        _inFlight.Enqueue((commit, _batch.Count, _parsing));
        _batch = new List<BatchOperation>(MaxBatchDocuments);
        _batchBytes = 0;
        _parsing = _idle.TryPop(out var next) ? next : new JsonOperationContext();
    }

    /// <summary>
    /// The operation's progress counts a batch as soon as it is durable, not when this stream next
    /// looks (which waits for the client's next batch): a client that pauses still sees its count.
    /// </summary>
    private static void CountWhenDurable(Task commit, DatabaseOperation tracked, long batch, int count, string lastId) =>
        commit.ContinueWith(
            static (task, state) =>
            {
                var (operation, batch, count, lastId) = ((DatabaseOperation, long, int, string))state!;
                if (task.IsCompletedSuccessfully)
                {
                    operation.BatchCommitted(batch, count, lastId);
                }
            },
            (tracked, batch, count, lastId),
            CancellationToken.None,
            TaskContinuationOptions.ExecuteSynchronously,
            TaskScheduler.Default);

    private bool TryReadItem(ref ReadOnlySequence<byte> buffer, bool isCompleted, out ReadOnlySequence<byte> item)
    {
        if (!jsonArray)
        {
            return TryReadLine(ref buffer, isCompleted, out item);
        }
        try
        {
            return TryReadElement(ref buffer, isCompleted, out item);
        }
        catch (JsonException e)
        {
            throw new BadRequestException($"Bulk insert stopped at command {_line + 1}: the body is not valid JSON: {JsonSyntaxErrors.Describe(e)} {_committed} document(s) were committed before it.", e);
        }
    }

    /// <summary>
    /// Takes the next element off RavenDB's <c>[cmd,cmd,...]</c> body. An element that arrives in
    /// pieces is scanned once: the scan's reader state and depth carry over to the next read. The
    /// closing <c>]</c> ends the stream (<see cref="_ended"/>): RavenDB's clients never end the body.
    /// </summary>
    private bool TryReadElement(ref ReadOnlySequence<byte> buffer, bool isCompleted, out ReadOnlySequence<byte> item)
    {
        item = default;
        while (!_ended)
        {
            if (_inElement)
            {
                var reader = new Utf8JsonReader(buffer.Slice(_scanned), isCompleted, _scanState);
                while (reader.Read())
                {
                    if (reader.TokenType is JsonTokenType.StartObject or JsonTokenType.StartArray)
                    {
                        _depth++;
                    }
                    else if (reader.TokenType is JsonTokenType.EndObject or JsonTokenType.EndArray && --_depth == 0)
                    {
                        var end = _scanned + reader.BytesConsumed;
                        item = buffer.Slice(0, end);
                        buffer = buffer.Slice(end);
                        _inElement = false;
                        _part = ArrayPart.CommaOrClose;
                        return true;
                    }
                }
                _scanned += reader.BytesConsumed;
                _scanState = reader.CurrentState;
                if (_scanned > maxLine.Bytes)
                {
                    throw LineTooLong(_line + 1);
                }
                if (isCompleted)
                {
                    throw new BadRequestException($"Bulk insert stopped at command {_line + 1}: the body ended inside it. {_committed} document(s) were committed before it.");
                }
                return false;
            }

            buffer = TrimStart(buffer);
            if (buffer.IsEmpty)
            {
                if (isCompleted)
                {
                    throw new BadRequestException($"Bulk insert stopped: the body ended before its closing ']'. {_committed} document(s) were committed.");
                }
                return false;
            }

            var next = buffer.FirstSpan[0];
            switch (_part)
            {
                case ArrayPart.Open when next == (byte)'[':
                    _part = ArrayPart.FirstElementOrClose;
                    buffer = buffer.Slice(1);
                    break;
                case ArrayPart.FirstElementOrClose or ArrayPart.CommaOrClose when next == (byte)']':
                    _ended = true;
                    buffer = buffer.Slice(1);
                    break;
                case ArrayPart.CommaOrClose when next == (byte)',':
                    _part = ArrayPart.Element;
                    buffer = buffer.Slice(1);
                    break;
                case ArrayPart.FirstElementOrClose or ArrayPart.Element when next == (byte)'{':
                    _inElement = true;
                    _scanned = 0;
                    _depth = 0;
                    _scanState = new JsonReaderState(ScanOptions);
                    break;
                default:
                    throw new BadRequestException(_part == ArrayPart.Open
                        ? "A bulk insert with an operation id is RavenDB's form: a JSON array of commands [{\"Id\":...,\"Type\":\"PUT\",\"Document\":{...}},...]."
                        : $"Bulk insert stopped at command {_line + 1}: expected {(_part == ArrayPart.CommaOrClose ? "',' or ']'" : "a command object")}, found '{(char)next}'. {_committed} document(s) were committed before it.");
            }
        }
        return false;
    }

    private static ReadOnlySequence<byte> TrimStart(ReadOnlySequence<byte> buffer)
    {
        while (!buffer.IsEmpty)
        {
            var span = buffer.FirstSpan;
            var skip = span.IndexOfAnyExcept(" \t\r\n"u8);
            if (skip >= 0)
            {
                return buffer.Slice(skip);
            }
            buffer = buffer.Slice(span.Length);
        }
        return buffer;
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
            {
                return false;
            }
        }
        return true;
    }

    private PayloadTooLargeException LineTooLong(long line) =>
        new($"Bulk insert line {line} is longer than {maxLine.Bytes.ToString("N0", System.Globalization.CultureInfo.InvariantCulture)} bytes, the largest document allowed ({maxLine.Setting}); nothing from it on was committed.");

    [LoggerMessage(Level = LogLevel.Warning, Message = "Bulk insert into {Database} ended early at line {Line}; {Committed} document(s) had been committed")]
    private static partial void LogBrokenStream(ILogger logger, Exception exception, string database, long committed, long line);
}
