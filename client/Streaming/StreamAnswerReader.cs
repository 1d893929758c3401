using System.Buffers;
using System.Text;
using System.Text.Json;

namespace Jackdaw.Client.Streaming;

/// <summary>
/// Reads a stream's answer as it arrives, one result at a time, with <see cref="Utf8JsonReader"/>
/// over a buffer that holds at most the current result and what came after it (never the whole
/// answer): <c>{"Results":[...]}</c>, a query's statistics before <c>Results</c>, and an
/// <c>"Error"</c> the server writes when the stream breaks after it started. Each step (a property
/// with its value, a whole result) is tokenized from the last committed state; when the buffer
/// ends inside it, more is read (the buffer grows only for a result larger than it) and the step
/// starts again.
/// </summary>
internal sealed class StreamAnswerReader : IAsyncDisposable
{
    private const int InitialBuffer = 64 * 1024;

    private readonly Stream _body;
    private byte[] _buffer = ArrayPool<byte>.Shared.Rent(InitialBuffer);
    private int _start;
    private int _end;
    private bool _final;
    private JsonReaderState _state;
    private Phase _phase;

    public StreamAnswerReader(Stream body) => _body = body;

    private enum Phase
    {
        Start,
        BeforeResults,
        Results,
        AfterResults,
        Done,
    }

    private enum Step
    {
        NeedMore,
        Continue,
        Result,
        Done,
    }

    /// <summary>
    /// Reads up to the first result: the answer's opening and, for a query, the statistics that
    /// precede <c>Results</c> (into <paramref name="statistics"/> when given).
    /// </summary>
    public async ValueTask StartAsync(StreamQueryStatistics? statistics, CancellationToken token)
    {
        while (_phase is Phase.Start or Phase.BeforeResults)
        {
            if (Advance(statistics, out _, out _) == Step.NeedMore)
            {
                await FillAsync(token).ConfigureAwait(false);
            }
        }
    }

    /// <summary>The next result's JSON, valid until the next call; null after the last.</summary>
    public async ValueTask<ReadOnlyMemory<byte>?> NextAsync(CancellationToken token)
    {
        while (true)
        {
            switch (Advance(null, out var start, out var length))
            {
                case Step.Result:
                    return _buffer.AsMemory(start, length);
                case Step.Done:
                    return null;
                case Step.NeedMore:
                    await FillAsync(token).ConfigureAwait(false);
                    break;
            }
        }
    }

    /// <summary>
    /// One step from the committed state; commits it unless more input is needed. A result's
    /// bytes are <paramref name="resultStart"/> and <paramref name="resultLength"/> in the buffer.
    /// </summary>
    private Step Advance(StreamQueryStatistics? statistics, out int resultStart, out int resultLength)
    {
        resultStart = resultLength = 0;
        var reader = new Utf8JsonReader(_buffer.AsSpan(_start, _end - _start), _final, _state);
        Step step;
        var tokenStart = 0;
        try
        {
            step = _phase switch
            {
                Phase.Start => ReadStart(ref reader),
                Phase.BeforeResults => ReadProperty(ref reader, statistics, beforeResults: true),
                Phase.Results => ReadResult(ref reader, out tokenStart),
                Phase.AfterResults => ReadProperty(ref reader, null, beforeResults: false),
                _ => Step.Done,
            };
        }
        catch (JsonException e)
        {
            throw new JackdawException(_final
                ? "The stream ended before the server finished it (the connection was closed)."
                : $"The stream's answer is not what a stream answers: {e.Message}", e);
        }
        if (step == Step.NeedMore)
        {
            if (_final)
            {
                throw new JackdawException("The stream ended before the server finished it (the connection was closed).");
            }
            return step;
        }
        if (step == Step.Result)
        {
            resultStart = _start + tokenStart;
            resultLength = (int)reader.BytesConsumed - tokenStart;
        }
        _start += (int)reader.BytesConsumed;
        _state = reader.CurrentState;
        return step;
    }

    private Step ReadStart(ref Utf8JsonReader reader)
    {
        if (!reader.Read())
        {
            return Step.NeedMore;
        }
        if (reader.TokenType != JsonTokenType.StartObject)
        {
            throw new JackdawException($"The stream's answer is not a JSON object (it starts with {reader.TokenType}).");
        }
        _phase = Phase.BeforeResults;
        return Step.Continue;
    }

    /// <summary>A property with its value: statistics, <c>Results</c>' opening, an <c>Error</c>, or the answer's end.</summary>
    private Step ReadProperty(ref Utf8JsonReader reader, StreamQueryStatistics? statistics, bool beforeResults)
    {
        if (!reader.Read())
        {
            return Step.NeedMore;
        }
        if (reader.TokenType == JsonTokenType.EndObject)
        {
            if (beforeResults)
            {
                throw new JackdawException("The stream's answer has no \"Results\".");
            }
            _phase = Phase.Done;
            return Step.Done;
        }
        var name = reader.ValueTextEquals("Results"u8) ? 1 : reader.ValueTextEquals("Error"u8) ? 2 : 0;
        var property = statistics is not null && name == 0 ? reader.GetString() : null;
        if (!reader.Read())
        {
            return Step.NeedMore;
        }
        if (name == 1 && beforeResults && reader.TokenType == JsonTokenType.StartArray)
        {
            _phase = Phase.Results;
            return Step.Continue;
        }
        if (name == 2)
        {
            throw new JackdawException("The server stopped the stream: " + (reader.TokenType == JsonTokenType.String ? reader.GetString() : "(no message)"));
        }
        if (reader.TokenType is JsonTokenType.StartObject or JsonTokenType.StartArray)
        {
            return reader.TrySkip() ? Step.Continue : Step.NeedMore;
        }
        if (property is not null)
        {
            ReadStatistic(ref reader, property, statistics!);
        }
        return Step.Continue;
    }

    /// <summary>A whole result (starting at <paramref name="start"/> in the reader's input), or the end of <c>Results</c>.</summary>
    private Step ReadResult(ref Utf8JsonReader reader, out int start)
    {
        start = 0;
        if (!reader.Read())
        {
            return Step.NeedMore;
        }
        if (reader.TokenType == JsonTokenType.EndArray)
        {
            _phase = Phase.AfterResults;
            return Step.Continue;
        }
        start = (int)reader.TokenStartIndex;
        if (reader.TokenType is JsonTokenType.StartObject or JsonTokenType.StartArray && !reader.TrySkip())
        {
            return Step.NeedMore;
        }
        return Step.Result;
    }

    private static void ReadStatistic(ref Utf8JsonReader reader, string property, StreamQueryStatistics statistics)
    {
        switch (property)
        {
            case "ResultEtag" when reader.TokenType == JsonTokenType.Number && reader.TryGetInt64(out var etag):
                statistics.ResultEtag = etag;
                break;
            case "IsStale":
                statistics.IsStale = reader.TokenType == JsonTokenType.True;
                break;
            case "IndexName" when reader.TokenType == JsonTokenType.String:
                statistics.IndexName = reader.GetString();
                break;
            case "TotalResults" when reader.TokenType == JsonTokenType.Number && reader.TryGetInt64(out var total):
                statistics.LongTotalResults = total;
                statistics.TotalResults = (int)Math.Min(total, int.MaxValue);
                break;
            case "IndexTimestamp" when reader.TokenType == JsonTokenType.String && reader.TryGetDateTime(out var timestamp):
                statistics.IndexTimestamp = timestamp.ToUniversalTime();
                break;
        }
    }

    /// <summary>Keeps the uncommitted bytes (moved to the front, the buffer doubled when they fill it) and reads more.</summary>
    private async ValueTask FillAsync(CancellationToken token)
    {
        var pending = _end - _start;
        if (_start > 0)
        {
            Buffer.BlockCopy(_buffer, _start, _buffer, 0, pending);
            _start = 0;
            _end = pending;
        }
        if (_end == _buffer.Length)
        {
            var larger = ArrayPool<byte>.Shared.Rent(_buffer.Length * 2);
            Buffer.BlockCopy(_buffer, 0, larger, 0, _end);
            ArrayPool<byte>.Shared.Return(_buffer);
            _buffer = larger;
        }
        var read = await _body.ReadAsync(_buffer.AsMemory(_end), token).ConfigureAwait(false);
        if (read == 0)
        {
            _final = true;
        }
        _end += read;
    }

    public async ValueTask DisposeAsync()
    {
        await _body.DisposeAsync().ConfigureAwait(false);
        ArrayPool<byte>.Shared.Return(_buffer);
        _buffer = [];
    }

    /// <summary>The first bytes of what is buffered, for messages.</summary>
    public override string ToString() => Encoding.UTF8.GetString(_buffer, _start, Math.Min(200, _end - _start));
}
