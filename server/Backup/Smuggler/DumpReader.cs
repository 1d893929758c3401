using System.Buffers;
using System.IO.Pipelines;
using System.Text.Json;
using Jackdaw.Server.Errors;

namespace Jackdaw.Server.Backup.Smuggler;

/// <summary>
/// Reads a dump's JSON as it is gunzipped, a token or an array element at a time, with
/// <see cref="Utf8JsonReader"/> over a <see cref="PipeReader"/>: the reader's state carries over
/// from one read of the pipe to the next, so nothing is held but the element being read. An
/// element (one document) is scanned once, however many reads it arrives in; one longer than the
/// limit is read past without being held and reported as too large. RavenDB writes an
/// attachment's or a time-series segment's bytes raw, right after its JSON header inside the
/// array: <see cref="ReadRawAsync"/> reads them and <see cref="SkipRawAsync"/> steps over them,
/// the JSON state untouched.
/// </summary>
/// <remarks>A syntax error anywhere (not JSON, cut short) is a <see cref="BadRequestException"/> naming the byte: the dump cannot be read past it.</remarks>
internal sealed class DumpReader(PipeReader pipe, CancellationToken cancel)
{
    private static readonly JsonReaderOptions Options = new() { MaxDepth = 1024 };

    private ReadOnlySequence<byte> _buffer;
    private bool _completed;
    private bool _started;
    private JsonReaderState _state = new(Options);
    private long _offset;
    private long _pendingConsume;

    /// <summary>Bytes of JSON consumed so far (of the gunzipped dump), for messages.</summary>
    public long Offset => _offset;

    public string Where => $"byte {_offset:N0} of the uncompressed dump";

    /// <summary>The next token: a property name (its text in <paramref name="text"/>), a value or a structural token.</summary>
    public async ValueTask<(JsonTokenType Type, string? Text)> NextTokenAsync()
    {
        ConsumePending();
        while (true)
        {
            if (TryReadToken(out var type, out var text))
            {
                return (type, text);
            }
            await FillAsync().ConfigureAwait(false);
        }
    }

    private bool TryReadToken(out JsonTokenType type, out string? text)
    {
        var reader = new Utf8JsonReader(_buffer, _completed, _state);
        try
        {
            if (!reader.Read())
            {
                type = JsonTokenType.None;
                text = null;
                return false;
            }
            type = reader.TokenType;
            text = type is JsonTokenType.PropertyName or JsonTokenType.String ? reader.GetString() : type == JsonTokenType.Number ? System.Text.Encoding.UTF8.GetString(reader.HasValueSequence ? reader.ValueSequence.ToArray() : reader.ValueSpan) : null;
        }
        catch (JsonException e)
        {
            throw Malformed(e, reader.BytesConsumed);
        }
        catch (InvalidOperationException e)
        {
            throw new BadRequestException($"The dump has a name or string that is not valid UTF-8 near {Where}: {e.Message}", e);
        }
        _state = reader.CurrentState;
        Consume(reader.BytesConsumed);
        return true;
    }

    /// <summary>
    /// The next element of the array being read: <c>Done</c> at its end; else the element's JSON
    /// (valid until the next call), or, for one over <paramref name="maxBytes"/>, nothing but its
    /// size once read past.
    /// </summary>
    public async ValueTask<DumpElement> NextElementAsync(long maxBytes)
    {
        ConsumePending();
        long scanned = 0;
        long start = -1;
        var depth = 0;
        var scanState = _state;
        while (true)
        {
            var reader = new Utf8JsonReader(_buffer.Slice(scanned), _completed, scanState);
            try
            {
                while (reader.Read())
                {
                    switch (reader.TokenType)
                    {
                        case JsonTokenType.EndArray when depth == 0:
                            _state = reader.CurrentState;
                            Consume(scanned + reader.BytesConsumed);
                            return DumpElement.Done;
                        case JsonTokenType.StartObject or JsonTokenType.StartArray:
                            if (depth++ == 0)
                            {
                                start = scanned + reader.TokenStartIndex;
                            }
                            break;
                        case JsonTokenType.EndObject or JsonTokenType.EndArray:
                            depth--;
                            break;
                        default:
                            if (depth == 0)
                            {
                                // A bare value where an element object belongs.
                                start = scanned + reader.TokenStartIndex;
                                depth = -1;
                            }
                            break;
                    }
                    if (depth <= 0)
                    {
                        var end = scanned + reader.BytesConsumed;
                        _state = reader.CurrentState;
                        _pendingConsume = end;
                        // Arrived whole in one read but over the limit all the same.
                        if (end - start > maxBytes)
                        {
                            return new DumpElement(default, end - start, depth == 0, TooLarge: true);
                        }
                        return new DumpElement(_buffer.Slice(start, end - start), end - start, depth == 0);
                    }
                }
            }
            catch (JsonException e)
            {
                throw Malformed(e, scanned + reader.BytesConsumed);
            }
            scanned += reader.BytesConsumed;
            scanState = reader.CurrentState;
            if (start >= 0 && scanned - start > maxBytes)
            {
                return await SkipLargeAsync(start, scanned, depth, scanState).ConfigureAwait(false);
            }
            await FillAsync().ConfigureAwait(false);
        }
    }

    /// <summary>Reads past the rest of an element too large to hold, letting go of each read as it is scanned.</summary>
    private async ValueTask<DumpElement> SkipLargeAsync(long start, long scanned, int depth, JsonReaderState scanState)
    {
        Consume(scanned);
        var size = scanned - start;
        while (true)
        {
            await FillAsync().ConfigureAwait(false);
            var reader = new Utf8JsonReader(_buffer, _completed, scanState);
            try
            {
                while (reader.Read())
                {
                    if (reader.TokenType is JsonTokenType.StartObject or JsonTokenType.StartArray)
                    {
                        depth++;
                    }
                    else if (reader.TokenType is JsonTokenType.EndObject or JsonTokenType.EndArray && --depth == 0)
                    {
                        _state = reader.CurrentState;
                        Consume(reader.BytesConsumed);
                        return new DumpElement(default, size + reader.BytesConsumed, IsObject: true, TooLarge: true);
                    }
                }
            }
            catch (JsonException e)
            {
                throw Malformed(e, reader.BytesConsumed);
            }
            size += reader.BytesConsumed;
            scanState = reader.CurrentState;
            Consume(reader.BytesConsumed);
        }
    }

    /// <summary>Reads past a value (the one after a property name) of any size, holding none of it.</summary>
    public async ValueTask SkipValueAsync()
    {
        var (type, _) = await NextTokenAsync().ConfigureAwait(false);
        if (type is not (JsonTokenType.StartObject or JsonTokenType.StartArray))
        {
            return;
        }
        var depth = 1;
        while (depth > 0)
        {
            var (next, _) = await NextTokenAsync().ConfigureAwait(false);
            if (next is JsonTokenType.StartObject or JsonTokenType.StartArray)
            {
                depth++;
            }
            else if (next is JsonTokenType.EndObject or JsonTokenType.EndArray)
            {
                depth--;
            }
        }
    }

    /// <summary>Steps over <paramref name="count"/> raw bytes (an attachment's, after its header element).</summary>
    public async ValueTask SkipRawAsync(long count)
    {
        ConsumePending();
        while (count > 0)
        {
            if (_buffer.IsEmpty)
            {
                await FillAsync().ConfigureAwait(false);
                continue;
            }
            var step = Math.Min(count, _buffer.Length);
            Consume(step);
            count -= step;
        }
    }

    /// <summary>
    /// Copies up to <paramref name="destination"/>'s length of the raw bytes that follow the last
    /// element (an attachment's, after its header) and steps over them; the JSON state is untouched.
    /// </summary>
    /// <returns>The bytes copied, at least one.</returns>
    /// <exception cref="BadRequestException">The dump ends first.</exception>
    public async ValueTask<int> ReadRawAsync(Memory<byte> destination)
    {
        ConsumePending();
        while (_buffer.IsEmpty)
        {
            await FillAsync().ConfigureAwait(false);
        }
        var count = (int)Math.Min(destination.Length, _buffer.Length);
        _buffer.Slice(0, count).CopyTo(destination.Span);
        Consume(count);
        return count;
    }

    /// <summary>After the dump's closing brace only whitespace may follow.</summary>
    public async ValueTask ExpectEndAsync()
    {
        ConsumePending();
        while (true)
        {
            var rest = _buffer;
            foreach (var segment in rest)
            {
                if (segment.Span.IndexOfAnyExcept(" \t\r\n"u8) >= 0)
                {
                    throw new BadRequestException($"The dump has data after its closing '}}' ({Where}).");
                }
            }
            Consume(_buffer.Length);
            if (_completed)
            {
                return;
            }
            await FillAsync().ConfigureAwait(false);
        }
    }

    private void ConsumePending()
    {
        if (_pendingConsume == 0)
        {
            return;
        }
        Consume(_pendingConsume);
        _pendingConsume = 0;
    }

    private void Consume(long bytes)
    {
        _buffer = _buffer.Slice(bytes);
        _offset += bytes;
    }

    /// <summary>More data: what is not consumed stays, and the pipe waits for bytes past what was examined.</summary>
    private async ValueTask FillAsync()
    {
        if (_completed)
        {
            throw new BadRequestException($"The dump ends early, at {Where}: its JSON is cut short (a file not fully written or downloaded?).");
        }
        if (_started)
        {
            pipe.AdvanceTo(_buffer.Start, _buffer.End);
        }
        _started = true;
        ReadResult result;
        try
        {
            result = await pipe.ReadAsync(cancel).ConfigureAwait(false);
        }
        catch (InvalidDataException e)
        {
            throw new BadRequestException($"The dump is not valid gzip at {Where}: {e.Message}", e);
        }
        _buffer = result.Buffer;
        _completed = result.IsCompleted;
    }

    /// <summary>Lets go of the pipe's last read (call once done).</summary>
    public void Release()
    {
        if (_started)
        {
            pipe.AdvanceTo(_buffer.End);
        }
        _started = false;
    }

    private BadRequestException Malformed(JsonException e, long at) =>
        new($"The dump is not valid JSON at byte {_offset + at:N0} of the uncompressed dump: {e.Message.Split(" LineNumber", 2)[0]} Nothing after it was imported.", e);
}

/// <summary>One element of a dump's array, as <see cref="DumpReader.NextElementAsync"/> hands it out.</summary>
/// <param name="Json">Its JSON text; empty when <see cref="TooLarge"/> or <see cref="IsDone"/>.</param>
/// <param name="Size">Its length in bytes of JSON text.</param>
/// <param name="IsObject">False for a bare value (a string, a number...) where an object belongs.</param>
internal readonly record struct DumpElement(ReadOnlySequence<byte> Json, long Size, bool IsObject, bool TooLarge = false, bool IsDone = false)
{
    public static DumpElement Done => new(default, 0, false, IsDone: true);
}
