using System.Buffers;
using System.IO.Pipelines;
using System.Text.Json;
using Jackdaw.Server.Errors;
using Jackdaw.Storage.Blittable;

namespace Jackdaw.Server.Wire;

/// <summary>How a stream's answer is laid out (RavenDB's <c>format</c> query parameter).</summary>
public enum StreamFormat
{
    /// <summary>One JSON object: <c>{"Results":[...]}</c>, a query's statistics first.</summary>
    Json,

    /// <summary>JSON lines, as RavenDB's Node.js client asks (<c>format=jsonl</c>): a document per line; a query's <c>{"Stats":{...}}</c> then <c>{"Item":{...}}</c> lines.</summary>
    Jsonl,
}

/// <summary>
/// The statistics a query stream writes before its first result (RavenDB's
/// <c>StreamQueryStatistics</c>): known once the query is planned, before anything is read.
/// </summary>
public readonly record struct StreamQueryStatistics(string ResultEtag, bool IsStale, string IndexName, long TotalResults, DateTime IndexTimestamp);

/// <summary>
/// Writes a stream's answer in RavenDB's shapes, to the response's <see cref="PipeWriter"/>, one
/// result at a time; the caller flushes when <see cref="ShouldFlush"/> says so. JSON:
/// <c>{"Results":[doc,doc]}</c> (a query: <c>{"ResultEtag":n,"IsStale":b,"IndexName":s,"TotalResults":n,"IndexTimestamp":s,"Results":[...]}</c>);
/// JSON lines: one document per line (a query: a <c>{"Stats":{...}}</c> line, then
/// <c>{"Item":doc}</c> lines). An error after the first byte ends the stream in its shape:
/// <c>...],"Error":"message"}</c>, or a <c>{"Error":"message"}</c> line.
/// Everything is written through this writer's own <see cref="IBufferWriter{T}"/>, which counts the
/// body's bytes into <c>written</c> at each flush (the response-size metrics; the pipe's
/// <c>UnflushedBytes</c> would also count the chunked encoding's framing).
/// </summary>
public sealed class StreamResultsWriter(PipeWriter pipe, StreamFormat format, ResponseByteCount? written = null) : IBufferWriter<byte>
{
    /// <summary>Flush once this much is buffered: large enough that flushes cost little, small enough to stream.</summary>
    public const int FlushThreshold = 64 * 1024;

    private IBufferWriter<byte> Writer => this;

    private long _unflushed;

    private bool _query;
    private bool _first = true;
    private bool _ended;

    /// <summary>The format a <c>format</c> query parameter names: none or <c>json</c> is JSON, <c>jsonl</c> JSON lines.</summary>
    /// <exception cref="FeatureNotSupportedException"><c>csv</c> (RavenDB's export format).</exception>
    /// <exception cref="BadRequestException">Any other value.</exception>
    public static StreamFormat ParseFormat(string? format)
    {
        if (string.IsNullOrEmpty(format) || string.Equals(format, "json", StringComparison.OrdinalIgnoreCase))
        {
            return StreamFormat.Json;
        }
        if (string.Equals(format, "jsonl", StringComparison.OrdinalIgnoreCase))
        {
            return StreamFormat.Jsonl;
        }
        if (string.Equals(format, "csv", StringComparison.OrdinalIgnoreCase))
        {
            throw new FeatureNotSupportedException("Streaming as CSV (format=csv) is not supported by Jackdaw (yet); use format=json or format=jsonl.");
        }
        throw new BadRequestException($"Unknown stream format '{format}': use json (the default) or jsonl.");
    }

    /// <summary>Whether anything was written: from then on an error can only be reported inside the stream.</summary>
    public bool Started { get; private set; }

    public bool ShouldFlush => pipe.UnflushedBytes >= FlushThreshold;

    /// <summary>Starts a stream of documents (<c>streams/docs</c>).</summary>
    public void StartDocuments()
    {
        Started = true;
        if (format == StreamFormat.Json)
        {
            Writer.Write("{\"Results\":["u8);
        }
    }

    /// <summary>Starts a query's stream with its statistics.</summary>
    public void StartQuery(in StreamQueryStatistics statistics)
    {
        Started = true;
        _query = true;
        var stats = new ArrayBufferWriter<byte>(256);
        using (var json = new Utf8JsonWriter(stats, JsonDefaults.WriterOptions))
        {
            json.WriteStartObject();
            json.WritePropertyName("ResultEtag"u8);
            json.WriteRawValue(statistics.ResultEtag, skipInputValidation: true);
            json.WriteBoolean("IsStale"u8, statistics.IsStale);
            json.WriteString("IndexName"u8, statistics.IndexName);
            json.WriteNumber("TotalResults"u8, statistics.TotalResults);
            json.WriteString("IndexTimestamp"u8, JsonDefaults.FormatTime(statistics.IndexTimestamp));
            json.WriteEndObject();
        }
        if (format == StreamFormat.Jsonl)
        {
            Writer.Write("{\"Stats\":"u8);
            Writer.Write(stats.WrittenSpan);
            Writer.Write("}\n"u8);
        }
        else
        {
            // The statistics' properties, then the results, in one object.
            Writer.Write(stats.WrittenSpan[..^1]);
            Writer.Write(",\"Results\":["u8);
        }
    }

    /// <summary>Writes a stored document as one result.</summary>
    public void WriteDocument(ReadOnlySpan<byte> blittable)
    {
        BeginResult();
        BlittableJsonWriter.WriteTo(blittable, this);
        EndResult();
    }

    /// <summary>Starts a result the caller writes itself into <see cref="Output"/> (a projection); end it with <see cref="EndResult"/>.</summary>
    public void BeginResult()
    {
        if (format == StreamFormat.Json)
        {
            if (!_first)
            {
                Writer.Write(","u8);
            }
            _first = false;
        }
        else if (_query)
        {
            Writer.Write("{\"Item\":"u8);
        }
    }

    public IBufferWriter<byte> Output => this;

    public void EndResult()
    {
        if (format == StreamFormat.Jsonl)
        {
            Writer.Write(_query ? "}\n"u8 : "\n"u8);
        }
    }

    /// <summary>Ends the stream after its last result.</summary>
    public void End()
    {
        _ended = true;
        if (format == StreamFormat.Json)
        {
            Writer.Write("]}"u8);
        }
    }

    /// <summary>
    /// Sends what is buffered; false when the client is gone (the stream should stop quietly).
    /// Waits while the client reads slower than the stream writes.
    /// </summary>
    public async ValueTask<bool> FlushAsync(CancellationToken cancellationToken)
    {
        CountWritten();
        var result = await pipe.FlushAsync(cancellationToken).ConfigureAwait(false);
        return !result.IsCompleted && !result.IsCanceled;
    }

    /// <summary>Ends a started stream with an error in its shape, and sends it.</summary>
    public async ValueTask WriteErrorAsync(string message, CancellationToken cancellationToken)
    {
        if (_ended)
        {
            return;
        }
        _ended = true;
        if (format == StreamFormat.Json)
        {
            Writer.Write("],\"Error\":"u8);
        }
        else
        {
            Writer.Write("{\"Error\":"u8);
        }
        using (var json = new Utf8JsonWriter(this, JsonDefaults.WriterOptions))
        {
            json.WriteStringValue(message);
        }
        Writer.Write(format == StreamFormat.Json ? "}"u8 : "}\n"u8);
        CountWritten();
        await pipe.FlushAsync(cancellationToken).ConfigureAwait(false);
    }

    public void Advance(int count)
    {
        pipe.Advance(count);
        _unflushed += count;
    }

    public Memory<byte> GetMemory(int sizeHint = 0) => pipe.GetMemory(sizeHint);

    public Span<byte> GetSpan(int sizeHint = 0) => pipe.GetSpan(sizeHint);

    private void CountWritten()
    {
        written?.Add(_unflushed);
        _unflushed = 0;
    }

    /// <summary>Whether <paramref name="error"/> must be reported inside the stream: something was written, and the client is still there to read it.</summary>
    public bool ReportsInStream(Exception error, CancellationToken cancellationToken) =>
        Started && !cancellationToken.IsCancellationRequested && error is not OperationCanceledException;
}
