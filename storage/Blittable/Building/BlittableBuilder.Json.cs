using System.Buffers;
using System.Buffers.Text;
using System.Globalization;
using System.Runtime.CompilerServices;
using System.Runtime.Intrinsics;
using System.Text.Json;
using System.Text.Unicode;

namespace Jackdaw.Storage.Blittable;

// The JSON side of the builder: a Utf8JsonReader loop feeding the token API, whole or streaming.
public sealed partial class BlittableBuilder
{
    private static readonly JsonReaderOptions ReaderOptions = new()
    {
        // Our own limit (BlittableFormat.MaxDepth) is checked first and reports TooDeep.
        MaxDepth = BlittableFormat.MaxDepth + 8,
        CommentHandling = JsonCommentHandling.Disallow,
        AllowTrailingCommas = false,
    };

    private JsonReaderState _readerState;
    private long _consumed;        // input bytes consumed by earlier Feed calls
    private long _lines;           // '\n' bytes among them (the reader's line number where they end)
    private long _lineStart;       // input offset of the line the next Feed starts in
    private bool _linesUnknown;    // the Feed that ended the root did not count its lines (errors after it are not located)
    private bool _sawToken;
    private bool _inputValidated;   // the whole input passed Utf8.IsValid: strings need no check of their own
    private bool _readerStateValid;

    private void ResetReaderState()
    {
        // The reader state itself is created on first use (Feed or the slow path), not per document.
        _readerStateValid = false;
        _inputValidated = false;
        _consumed = 0;
        _lines = 0;
        _lineStart = 0;
        _linesUnknown = false;
        _sawToken = false;
    }

    internal BlittableDocument ParseWhole(ReadOnlySpan<byte> utf8Json)
    {
        try
        {
            BuildWhole(utf8Json);
        }
        catch (BlittableParseException e) when (e.Line == 0)
        {
            throw Located(e, utf8Json);
        }

        return CompleteBuilt();
    }

    /// <summary>Parses the object at the start of <paramref name="utf8Json"/>; what follows it is the caller's.</summary>
    internal BlittableDocument ParseObjectPrefix(ReadOnlySpan<byte> utf8Json, out int consumed)
    {
        try
        {
            consumed = BuildWhole(utf8Json, rootMayBeFollowed: true);
        }
        catch (BlittableParseException e) when (e.Line == 0)
        {
            throw Located(e, utf8Json);
        }

        return CompleteBuilt();
    }

    /// <summary>Cold path: <paramref name="error"/> with the line and column of its position in <paramref name="input"/>, the whole input.</summary>
    [MethodImpl(MethodImplOptions.NoInlining)]
    private static BlittableParseException Located(BlittableParseException error, ReadOnlySpan<byte> input)
    {
        if (error.Position < 0 || error.Position > input.Length)
        {
            return error;
        }

        var before = input[..(int)error.Position];
        var lineStart = before.LastIndexOf((byte)'\n') + 1;
        return error.At(before.Count((byte)'\n') + 1, error.Position - lineStart + 1);
    }

    /// <summary>
    /// Cold path: <paramref name="error"/> located in a Feed's <paramref name="data"/>, which starts at
    /// input offset <see cref="_consumed"/>, after <see cref="_lines"/> line ends, in the line that starts at <see cref="_lineStart"/>.
    /// </summary>
    [MethodImpl(MethodImplOptions.NoInlining)]
    private BlittableParseException Located(BlittableParseException error, ReadOnlySequence<byte> data)
    {
        var into = error.Position - _consumed;
        if (error.Line != 0 || _linesUnknown || into < 0 || into > data.Length)
        {
            return error;
        }

        var before = data.Slice(0, into).ToArray().AsSpan();
        var newlines = before.Count((byte)'\n');
        var lineStart = newlines == 0 ? _lineStart : _consumed + before.LastIndexOf((byte)'\n') + 1;
        return error.At(_lines + newlines + 1, error.Position - lineStart + 1);
    }

    /// <summary>Builds a document from input held whole in one span (the caller completes it); returns the bytes read.</summary>
    private int BuildWhole(ReadOnlySpan<byte> utf8Json, bool rootMayBeFollowed = false)
    {
        // In Memory mode UTF-8 is checked per string as it is copied (only strings and names can hold
        // bytes >= 0x80: the reader rejects them anywhere else), not in an upfront pass over the whole
        // input; so is an object embedded in a larger text, whose rest is not ours to check. Disk mode
        // copies strings through the compressor, so its whole inputs keep the one upfront pass (per
        // string checks measured ~1% slower there). Every error path checks the whole input first, so
        // InvalidUtf8 still wins over any other error and carries the position of the first invalid
        // byte, as the upfront pass did.
        // Tokenizing is System.Text.Json's job (a hand-written scanner measured ~1.3x faster here, but
        // the project keeps JSON tokenizing to Utf8JsonReader; see perf/RESULTS.md).
        _inputValidated = _mode == BlittableMode.Disk && !rootMayBeFollowed;
        if (_inputValidated && !Utf8.IsValid(utf8Json))
        {
            AbandonReportingUtf8(utf8Json);
        }

        var reader = new Utf8JsonReader(utf8Json, isFinalBlock: true, new JsonReaderState(ReaderOptions));
        try
        {
            ReadTokens(ref reader, utf8Json);
        }
        catch (JsonException e)
        {
            AbandonReportingUtf8(utf8Json);
            var input = new ReadOnlySequence<byte>(utf8Json.ToArray());
            throw Translate(e, ref reader, IsValidPrefix(input, new JsonReaderState(ReaderOptions)), input);
        }
        catch (InvalidOperationException e) when (e is not ObjectDisposedException)
        {
            AbandonReportingUtf8(utf8Json);
            throw new BlittableParseException(BlittableParseError.InvalidUtf8, reader.TokenStartIndex, "A string holds an escaped lone surrogate, which has no UTF-8 form", e);
        }
        catch (BlittableParseException)
        {
            AbandonReportingUtf8(utf8Json);
            throw;
        }
        catch
        {
            Abandon();
            throw;
        }

        if (!_rootDone)
        {
            AbandonReportingUtf8(utf8Json);
            ThrowParse(BlittableParseError.Truncated, utf8Json.Length, "The JSON text ended before its root object was closed");
        }

        if (rootMayBeFollowed)
        {
            return (int)reader.BytesConsumed;
        }

        var rest = utf8Json.Slice((int)reader.BytesConsumed);
        var garbage = IndexOfNonWhitespace(rest);
        if (garbage >= 0)
        {
            AbandonReportingUtf8(utf8Json);
            ThrowParse(BlittableParseError.TrailingData, reader.BytesConsumed + garbage, "Data follows the root object");
        }

        return utf8Json.Length;
    }

    /// <summary>
    /// Cold path of every whole-input error: drops the document being built, then reports invalid
    /// UTF-8 anywhere in the input first (so it wins over any other error); returns otherwise.
    /// </summary>
    [MethodImpl(MethodImplOptions.NoInlining)]
    private void AbandonReportingUtf8(ReadOnlySpan<byte> utf8Json)
    {
        Abandon();
        var invalid = FirstInvalidUtf8(utf8Json);
        if (invalid < utf8Json.Length)
        {
            ThrowParse(BlittableParseError.InvalidUtf8, invalid, "The input is not valid UTF-8");
        }
    }

    /// <summary>
    /// Feeds the next part of the input. Returns how far the input was consumed: keep the rest and
    /// pass it again, followed by more data (for a PipeReader: AdvanceTo(consumed, data.End)).
    /// Pass <paramref name="isFinalBlock"/> true with the last data (possibly empty).
    /// </summary>
    public SequencePosition Feed(ReadOnlySequence<byte> data, bool isFinalBlock)
    {
        try
        {
            return FeedCore(data, isFinalBlock);
        }
        catch (BlittableParseException e)
        {
            // As in a whole parse, an invalid byte wins over any other error (an escaped lone
            // surrogate included), as far as the input has been seen: what earlier calls consumed
            // was checked as it was read (strings and names one by one, and the reader allows no
            // other byte >= 0x80), so this call's data is the rest.
            var error = e;
            try
            {
                ThrowIfInvalidUtf8(data, isFinalBlock);
            }
            catch (BlittableParseException invalid)
            {
                error = invalid;
            }

            throw Located(error, data);
        }
    }

    /// <summary>Cold path: throws InvalidUtf8 at the first invalid byte of <paramref name="data"/>, if any (a character cut by the end of data that is not final is not).</summary>
    [MethodImpl(MethodImplOptions.NoInlining)]
    private void ThrowIfInvalidUtf8(ReadOnlySequence<byte> data, bool isFinalBlock)
    {
        var bytes = data.IsSingleSegment ? data.FirstSpan : data.ToArray();
        var invalid = FirstInvalidUtf8(bytes, isFinalBlock);
        if (invalid < bytes.Length)
        {
            ThrowParse(BlittableParseError.InvalidUtf8, _consumed + invalid, "The input is not valid UTF-8");
        }
    }

    private SequencePosition FeedCore(ReadOnlySequence<byte> data, bool isFinalBlock)
    {
        if (!_active)
        {
            throw new InvalidOperationException("No document is being built: call JsonOperationContext.StartParse first.");
        }

        if (_rootDone)
        {
            // Only whitespace may follow the root object.
            var garbage = IndexOfNonWhitespace(data);
            if (garbage >= 0)
            {
                Abandon();
                ThrowParse(BlittableParseError.TrailingData, _consumed + garbage, "Data follows the root object");
            }

            _consumed += data.Length;
            return data.End;
        }

        if (isFinalBlock && _consumed == 0 && !_readerStateValid && data.IsSingleSegment)
        {
            // The whole body in one piece (the usual small request): the whole-span path.
            BuildWhole(data.FirstSpan);
            _consumed = data.Length;
            return data.End;
        }

        if (!_readerStateValid)
        {
            _readerState = new JsonReaderState(ReaderOptions);
            _readerStateValid = true;
        }

        var startState = _readerState;
        var reader = new Utf8JsonReader(data, isFinalBlock, _readerState);
        try
        {
            ReadTokens(ref reader, default);
        }
        catch (JsonException e)
        {
            Abandon();
            throw Translate(e, ref reader, isFinalBlock && IsValidPrefix(data, startState), data);
        }
        catch (InvalidOperationException e) when (e is not ObjectDisposedException)
        {
            Abandon();
            throw InvalidUtf8InToken(ref reader, data, e);
        }
        catch (BlittableParseException e) when (e.Error == BlittableParseError.InvalidUtf8 && e.InnerException is null)
        {
            Abandon();
            throw InvalidUtf8InToken(ref reader, data, null);
        }
        catch (Exception e) when (e is IndexOutOfRangeException or ArgumentOutOfRangeException)
        {
            // Utf8JsonReader itself fails so on some segmentations of bad input (an invalid literal
            // cut by an empty last segment): the same data in one array tells what is wrong with it.
            Abandon();
            throw ErrorOfContiguous(data, startState, isFinalBlock, e);
        }
        catch
        {
            Abandon();
            throw;
        }

        _readerState = reader.CurrentState;
        var consumed = reader.BytesConsumed;
        if (_rootDone)
        {
            var rest = data.Slice(consumed);
            var garbage = IndexOfNonWhitespace(rest);
            if (garbage >= 0)
            {
                Abandon();
                ThrowParse(BlittableParseError.TrailingData, _consumed + consumed + garbage, "Data follows the root object");
            }

            // Lines are counted only to locate errors: not over the whole document on the way out.
            _linesUnknown = true;
            _consumed += data.Length;
            return data.End;
        }

        if (isFinalBlock)
        {
            Abandon();
            ThrowParse(BlittableParseError.Truncated, _consumed + data.Length, "The JSON text ended before its root object was closed");
        }

        CountLines(data.Slice(0, consumed));
        _consumed += consumed;
        return data.GetPosition(consumed);
    }

    /// <summary>
    /// Cold path of a streaming parse: the string or name at the reader's token is not valid UTF-8 (or
    /// the reader could not unescape it). Points at its first invalid byte, as a whole parse does
    /// (escapes are ASCII, so the raw text holds the invalid bytes the value had); with none, the
    /// string holds an escaped lone surrogate.
    /// </summary>
    private BlittableParseException InvalidUtf8InToken(ref Utf8JsonReader reader, ReadOnlySequence<byte> data, Exception? inner)
    {
        // The token only: bytes after it may be a character split by the end of this Feed's data.
        var token = data.Slice(reader.TokenStartIndex, Math.Max(0, reader.BytesConsumed - reader.TokenStartIndex)).ToArray();
        var invalid = FirstInvalidUtf8(token);
        return invalid < token.Length
            ? new BlittableParseException(BlittableParseError.InvalidUtf8, _consumed + reader.TokenStartIndex + invalid, "The input is not valid UTF-8", inner)
            : new BlittableParseException(BlittableParseError.InvalidUtf8, _consumed + reader.TokenStartIndex, "A string holds an escaped lone surrogate, which has no UTF-8 form", inner);
    }

    /// <summary>Cold path: the error the reader gives for <paramref name="data"/> held in one array.</summary>
    private BlittableParseException ErrorOfContiguous(ReadOnlySequence<byte> data, JsonReaderState state, bool isFinalBlock, Exception inner)
    {
        var copy = new ReadOnlySequence<byte>(data.ToArray());
        var again = new Utf8JsonReader(copy, isFinalBlock, state);
        try
        {
            while (again.Read())
            {
            }
        }
        catch (JsonException e)
        {
            return Translate(e, ref again, isFinalBlock && IsValidPrefix(copy, state), copy);
        }

        return new BlittableParseException(BlittableParseError.InvalidJson, _consumed + again.BytesConsumed, "The JSON text could not be read: " + inner.Message, inner);
    }

    /// <summary>Finishes a streaming parse; the root object must have been closed.</summary>
    public BlittableDocument Complete()
    {
        if (!_active)
        {
            throw new InvalidOperationException("No document is being built: call JsonOperationContext.StartParse first.");
        }

        if (!_rootDone)
        {
            Abandon();
            ThrowParse(BlittableParseError.Truncated, _consumed, "The JSON text ended before its root object was closed");
        }

        return CompleteBuilt();
    }

    /// <summary>Cold path: whether the input is a valid beginning of JSON that merely stops too soon.</summary>
    private static bool IsValidPrefix(ReadOnlySequence<byte> data, JsonReaderState state)
    {
        try
        {
            var reader = new Utf8JsonReader(data, isFinalBlock: false, state);
            while (reader.Read())
            {
                if (reader.CurrentDepth == 0 && reader.TokenType is JsonTokenType.EndObject or JsonTokenType.EndArray)
                {
                    return false;
                }
            }

            return true;
        }
        catch (JsonException)
        {
            return false;
        }
    }

    /// <summary>Notes the line breaks of input about to be consumed (streaming only), for error positions.</summary>
    private void CountLines(ReadOnlySequence<byte> consumed)
    {
        var offset = _consumed;
        foreach (var segment in consumed)
        {
            var span = segment.Span;
            var count = span.Count((byte)'\n');
            if (count > 0)
            {
                _lines += count;
                _lineStart = offset + span.LastIndexOf((byte)'\n') + 1;
            }

            offset += span.Length;
        }
    }

    /// <summary>
    /// The input offset of a JsonException's (line, byte in line), both counted by the reader from
    /// the start of the input; <paramref name="data"/> is the input from offset <paramref name="consumed"/>
    /// on, before which <paramref name="lines"/> lines ended, the last at <paramref name="lineStart"/>.
    /// The reader counts a line at each '\n', which JSON allows only as whitespace.
    /// </summary>
    private static long? OffsetOf(JsonException e, ReadOnlySequence<byte> data, long consumed = 0, long lines = 0, long lineStart = 0)
    {
        if (e.LineNumber is not { } line || e.BytePositionInLine is not { } inLine || line < lines)
        {
            return null;
        }

        var start = lineStart;
        var offset = consumed;
        var remaining = line - lines;
        foreach (var segment in data)
        {
            var span = segment.Span;
            var from = 0;
            while (remaining > 0)
            {
                var index = span.Slice(from).IndexOf((byte)'\n');
                if (index < 0)
                {
                    break;
                }

                from += index + 1;
                start = offset + from;
                remaining--;
            }

            if (remaining == 0)
            {
                break;
            }

            offset += span.Length;
        }

        return remaining == 0 ? start + inLine : null;
    }

    private BlittableParseException Translate(JsonException e, ref Utf8JsonReader reader, bool truncated, ReadOnlySequence<byte> data)
    {
        // The reader's byte in line can drift when a literal was split across segments of an earlier
        // Feed: an offset outside this Feed's data is not believed.
        var position = OffsetOf(e, data, _consumed, _lines, _lineStart) is { } offset && offset >= _consumed && offset <= _consumed + data.Length
            ? offset
            : _consumed + reader.BytesConsumed;

        var error = BlittableParseError.InvalidJson;
        if (truncated)
        {
            error = BlittableParseError.Truncated;
        }
        else if (e.Message.Contains("depth", StringComparison.OrdinalIgnoreCase) && reader.CurrentDepth >= BlittableFormat.MaxDepth)
        {
            error = BlittableParseError.TooDeep;
        }

        return new BlittableParseException(error, position, JsonSyntaxErrors.WhatIsWrong(e), e);
    }

    /// <param name="whole">The whole input when the reader reads one span (then short names and
    /// strings are handled with 32-byte moves), else empty.</param>
    private void ReadTokens(ref Utf8JsonReader reader, ReadOnlySpan<byte> whole)
    {
        if (_depth == 0 && !ReadRoot(ref reader))
        {
            return;
        }

        // From here on every value is inside the root object (the loop returns when the root closes),
        // so no token needs the "not an object" check. Names and strings, most of the tokens, are
        // tested before the switch: two well-predicted branches instead of an indirect jump.
        while (reader.Read())
        {
            var type = reader.TokenType;
            if (type == JsonTokenType.PropertyName)
            {
                OnPropertyName(ref reader, whole);
                continue;
            }

            if (type == JsonTokenType.String)
            {
                OnString(ref reader, whole);
                continue;
            }

            switch (type)
            {
                case JsonTokenType.Number:
                    OnNumber(ref reader);
                    break;
                case JsonTokenType.StartObject:
                    BeginObject(Position(ref reader));
                    break;
                case JsonTokenType.EndObject:
                    EndObject();
                    if (_depth == 0)
                    {
                        return;
                    }

                    break;
                case JsonTokenType.StartArray:
                    BeginArray(Position(ref reader));
                    break;
                case JsonTokenType.EndArray:
                    EndArray();
                    break;
                case JsonTokenType.True:
                    WriteBoolean(true);
                    break;
                case JsonTokenType.False:
                    WriteBoolean(false);
                    break;
                case JsonTokenType.Null:
                    WriteNull();
                    break;
                default:
                    ThrowUnexpected(ref reader);
                    break;
            }
        }
    }

    /// <summary>Reads the first token, which must open the root object; false when the data ends first.</summary>
    private bool ReadRoot(ref Utf8JsonReader reader)
    {
        if (!reader.Read())
        {
            return false;
        }

        if (reader.TokenType != JsonTokenType.StartObject)
        {
            ThrowNotAnObject(ref reader);
        }

        if (_sawToken)
        {
            ThrowParse(BlittableParseError.TrailingData, Position(ref reader), "Data follows the root object");
        }

        _sawToken = true;
        BeginObject(Position(ref reader));
        return true;
    }

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private long Position(ref Utf8JsonReader reader) => _consumed + reader.TokenStartIndex;

    [MethodImpl(MethodImplOptions.NoInlining)]
    private void ThrowNotAnObject(ref Utf8JsonReader reader) =>
        ThrowParse(BlittableParseError.NotAnObject, Position(ref reader), $"A document must be a JSON object, not {reader.TokenType}");

    [MethodImpl(MethodImplOptions.NoInlining)]
    private void ThrowUnexpected(ref Utf8JsonReader reader) =>
        ThrowParse(BlittableParseError.InvalidJson, Position(ref reader), $"Unexpected token {reader.TokenType}");

    [MethodImpl(MethodImplOptions.NoInlining)]
    private void ThrowNotFinite(ref Utf8JsonReader reader, ReadOnlySpan<byte> text) =>
        ThrowParse(BlittableParseError.NumberOutOfRange, Position(ref reader), $"The number {System.Text.Encoding.ASCII.GetString(text)} is not a finite double");

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private ReadOnlySpan<byte> GetUnescaped(ref Utf8JsonReader reader, out bool escaped)
    {
        escaped = reader.ValueIsEscaped;
        if (!escaped && !reader.HasValueSequence)
        {
            return reader.ValueSpan;
        }

        return CopyUnescaped(ref reader);
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    private ReadOnlySpan<byte> CopyUnescaped(ref Utf8JsonReader reader)
    {
        var length = reader.HasValueSequence ? reader.ValueSequence.Length : reader.ValueSpan.Length;
        if (_scratch.Length < length)
        {
            WorkingArray.Grow(ref _scratch, length, keepContent: false);
        }

        var written = reader.CopyString(_scratch);
        return _scratch.AsSpan(0, written);
    }

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private void OnPropertyName(ref Utf8JsonReader reader, ReadOnlySpan<byte> whole)
    {
        if (Vector256.IsHardwareAccelerated && !reader.ValueIsEscaped && !reader.HasValueSequence)
        {
            // A short name of a known shape: compared with the guessed name in one 32-byte step.
            // The value of a name token starts right after its opening quote.
            var start = reader.TokenStartIndex + 1;
            var length = reader.ValueSpan.Length;
            if (length <= ShortChunk && start + ShortChunk <= whole.Length)
            {
                var chunk = whole.Slice((int)start, ShortChunk);
                var guess = GuessName();
                if (guess >= 0 && _names.MatchesChunk(guess, chunk, length))
                {
                    UseName(guess, _consumed + reader.TokenStartIndex);
                    return;
                }

                guess = AlternateName();
                if (guess >= 0 && _names.MatchesChunk(guess, chunk, length))
                {
                    RememberName(guess);
                    UseName(guess, _consumed + reader.TokenStartIndex);
                    return;
                }
            }
        }

        var name = GetUnescaped(ref reader, out var escaped);
        PropertyName(name, escaped, Position(ref reader), validateUtf8: !_inputValidated);
    }

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private void OnString(ref Utf8JsonReader reader, ReadOnlySpan<byte> whole)
    {
        if (Vector256.IsHardwareAccelerated && !reader.ValueIsEscaped && !reader.HasValueSequence)
        {
            var start = reader.TokenStartIndex + 1;
            var length = reader.ValueSpan.Length;
            var window = length <= ShortChunk ? ShortChunk : 2 * ShortChunk;
            if (length < 2 * ShortChunk && start + window <= whole.Length
                && TryWriteShortString(whole.Slice((int)start, window), length))
            {
                return;
            }
        }

        var written = reader.ValueIsEscaped && !reader.HasValueSequence && _mode == BlittableMode.Memory
            ? TryWriteEscapedString(ref reader)
            : TryWriteInputString(GetUnescaped(ref reader, out var escaped), escaped);
        if (!written)
        {
            ThrowParse(BlittableParseError.InvalidUtf8, Position(ref reader), "A string is not valid UTF-8");
        }
    }

    /// <summary>
    /// Memory mode, an escaped string: unescaped straight into the document (never longer than its
    /// escaped form), then one scan finds the bytes to escape on output and checks UTF-8. False,
    /// with nothing written, when it is not valid UTF-8.
    /// </summary>
    private bool TryWriteEscapedString(ref Utf8JsonReader reader)
    {
        var rawLength = reader.ValueSpan.Length;
        var headerSize = VarIntSize(((uint)rawLength << 1) | 1);
        Ensure(headerSize + rawLength);
        var pos = _pos;
        var data = _buffer.AsSpan(pos + headerSize, rawLength);
        data = data.Slice(0, reader.CopyString(data));
        if (!FindEscapesCheckingUtf8(data))
        {
            return false;
        }

        var header = StringHeader(data.Length);
        var size = VarIntSize(header);
        if (size != headerSize)
        {
            // Unescaping shortened it past a length boundary: its header is shorter than reserved.
            data.CopyTo(_buffer.AsSpan(pos + size));
        }

        BlittableFormat.WriteVarInt(_buffer, pos, header);
        var position = pos - _start;
        _pos = pos + size + data.Length;
        Ensure(5 + (_escapeCount * 5));
        _pos = WriteEscapeList(_buffer, _pos);
        AddEntry(BlittableType.String, position);
        return true;
    }

    private void OnNumber(ref Utf8JsonReader reader)
    {
        ReadOnlySpan<byte> text;
        if (!reader.HasValueSequence)
        {
            text = reader.ValueSpan;
        }
        else
        {
            var sequence = reader.ValueSequence;
            if (_scratch.Length < sequence.Length)
            {
                WorkingArray.Grow(ref _scratch, sequence.Length, keepContent: false);
            }

            sequence.CopyTo(_scratch);
            text = _scratch.AsSpan(0, (int)sequence.Length);
        }

        if (TryParseCanonicalInteger(text, out var value))
        {
            WriteInteger(value);
            return;
        }

        if (_mode == BlittableMode.Disk && !IsFiniteNumber(text))
        {
            ThrowNotFinite(ref reader, text);
        }

        WriteNumberText(text);
    }

    /// <summary>True for integer text that formats back to the same bytes (no '-0', fits a long).</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal static bool TryParseCanonicalInteger(ReadOnlySpan<byte> text, out long value)
    {
        value = 0;
        var negative = text.Length > 0 && text[0] == (byte)'-';
        var digits = negative ? text.Slice(1) : text;
        if (digits.Length is 0 or > 18)
        {
            return digits.Length is 19 && TryParseLongSlow(text, out value);
        }

        long result = 0;
        foreach (var c in digits)
        {
            var d = (uint)(c - '0');
            if (d > 9)
            {
                return false;
            }

            result = (result * 10) + d;
        }

        if (negative && result == 0)
        {
            return false;
        }

        // JSON forbids leading zeros, so the text is the canonical form of the value.
        value = negative ? -result : result;
        return true;
    }

    private static bool TryParseLongSlow(ReadOnlySpan<byte> text, out long value)
    {
        foreach (var c in text)
        {
            if (c is (byte)'.' or (byte)'e' or (byte)'E')
            {
                value = 0;
                return false;
            }
        }

        return Utf8Parser.TryParse(text, out value, out var consumed) && consumed == text.Length;
    }

    /// <summary>
    /// Whether a JSON number (already validated by the reader) is a finite double. Without an
    /// exponent, fewer than 300 characters stay far below double.MaxValue (about 1.8e308), so only
    /// the rare number with an exponent, or a huge one, is parsed.
    /// </summary>
    internal static bool IsFiniteNumber(ReadOnlySpan<byte> text) =>
        (text.Length < 300 && text.IndexOfAny((byte)'e', (byte)'E') < 0)
        || (double.TryParse(text, NumberStyles.Float, CultureInfo.InvariantCulture, out var value) && double.IsFinite(value));

    /// <summary>
    /// Offset of the first byte of <paramref name="span"/> that is not valid UTF-8, or its length when
    /// there is none. With <paramref name="isFinalBlock"/> false a character cut by the end is not invalid.
    /// </summary>
    private static long FirstInvalidUtf8(ReadOnlySpan<byte> span, bool isFinalBlock = true)
    {
        if (Utf8.IsValid(span))
        {
            return span.Length;
        }

        Span<char> chars = stackalloc char[1024];
        var position = 0;
        while (true)
        {
            var status = Utf8.ToUtf16(span.Slice(position), chars, out var read, out _, replaceInvalidSequences: false, isFinalBlock);
            position += read;
            switch (status)
            {
                case OperationStatus.DestinationTooSmall:
                    continue;
                case OperationStatus.InvalidData:
                    return position;
                default:
                    // Done, or NeedMoreData: only a character cut by the end of data that is not final.
                    return span.Length;
            }
        }
    }

    private static int IndexOfNonWhitespace(ReadOnlySpan<byte> span)
    {
        for (var i = 0; i < span.Length; i++)
        {
            if (span[i] is not ((byte)' ' or (byte)'\t' or (byte)'\r' or (byte)'\n'))
            {
                return i;
            }
        }

        return -1;
    }

    private static long IndexOfNonWhitespace(ReadOnlySequence<byte> sequence)
    {
        long offset = 0;
        foreach (var segment in sequence)
        {
            var index = IndexOfNonWhitespace(segment.Span);
            if (index >= 0)
            {
                return offset + index;
            }

            offset += segment.Length;
        }

        return -1;
    }
    /// <summary>Writes one JSON value given as text (for patches) at the current position.</summary>
    internal void WriteRawJsonValue(ReadOnlySpan<byte> utf8Json)
    {
        var reader = new Utf8JsonReader(utf8Json, isFinalBlock: true, new JsonReaderState(ReaderOptions));
        var depth = _depth;
        try
        {
            ReadTokens(ref reader, default);
        }
        catch (JsonException e)
        {
            var position = OffsetOf(e, new ReadOnlySequence<byte>(utf8Json.ToArray())) ?? reader.BytesConsumed;
            throw new BlittableParseException(BlittableParseError.InvalidJson, position, "Invalid raw JSON in a patch: " + JsonSyntaxErrors.WhatIsWrong(e), e);
        }
        catch (InvalidOperationException e) when (e is not ObjectDisposedException)
        {
            throw new BlittableParseException(BlittableParseError.InvalidUtf8, reader.TokenStartIndex, "A string in raw JSON of a patch holds an escaped lone surrogate, which has no UTF-8 form", e);
        }

        if (_depth != depth || reader.BytesConsumed == 0)
        {
            ThrowParse(BlittableParseError.InvalidJson, reader.BytesConsumed, "A raw JSON value in a patch is not one complete value");
        }
    }
}
