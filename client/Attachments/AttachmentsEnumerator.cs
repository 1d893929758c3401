using System.Buffers;
using System.Text.Json;

namespace Jackdaw.Client.Attachments;

/// <summary>
/// Walks the answer of <c>POST attachments/bulk</c>: <c>{"AttachmentsMetadata":[details, ...]}</c>
/// and then every attachment's bytes back to back, <c>Size</c> bytes each, in the order of the
/// details. The JSON is read first (the bytes that came with its end are kept); each attachment is
/// then a stream over the next <c>Size</c> bytes of the same answer, read as it arrives. Moving on
/// skips what the previous stream left unread; disposing ends the response.
/// </summary>
internal sealed class AttachmentsEnumerator : IAsyncEnumerator<AttachmentEnumeratorResult>
{
    private const int BufferSize = 64 * 1024;
    private readonly HttpResponseMessage _response;
    private readonly Stream _body;
    private readonly List<AttachmentDetails> _details;
    private byte[] _buffer;
    private int _bufferStart;
    private int _bufferEnd;
    private int _index = -1;
    private SegmentStream? _segment;
    private AttachmentEnumeratorResult? _current;

    private AttachmentsEnumerator(HttpResponseMessage response, Stream body, List<AttachmentDetails> details, byte[] buffer, int start, int end)
    {
        _response = response;
        _body = body;
        _details = details;
        _buffer = buffer;
        _bufferStart = start;
        _bufferEnd = end;
    }

    public AttachmentEnumeratorResult Current => _current ?? throw new InvalidOperationException("MoveNextAsync has not returned true.");

    /// <summary>Reads the answer's JSON head; <paramref name="expected"/> is how many attachments were asked for.</summary>
    public static async Task<AttachmentsEnumerator> StartAsync(HttpResponseMessage response, int expected, CancellationToken token)
    {
        var body = await response.Content.ReadAsStreamAsync(token).ConfigureAwait(false);
        var buffer = ArrayPool<byte>.Shared.Rent(BufferSize);
        var end = 0;
        try
        {
            while (true)
            {
                if (TryFindJsonEnd(buffer.AsSpan(0, end), out var jsonLength))
                {
                    var details = ReadDetails(buffer.AsMemory(0, jsonLength), expected);
                    return new AttachmentsEnumerator(response, body, details, buffer, jsonLength, end);
                }

                if (end == buffer.Length)
                {
                    var larger = ArrayPool<byte>.Shared.Rent(buffer.Length * 2);
                    buffer.AsSpan(0, end).CopyTo(larger);
                    ArrayPool<byte>.Shared.Return(buffer);
                    buffer = larger;
                }

                var read = await body.ReadAsync(buffer.AsMemory(end), token).ConfigureAwait(false);
                if (read == 0)
                {
                    throw new JackdawException("The answer to POST attachments/bulk ended inside its JSON head.");
                }

                end += read;
            }
        }
        catch
        {
            ArrayPool<byte>.Shared.Return(buffer);
            throw;
        }
    }

    public async ValueTask<bool> MoveNextAsync()
    {
        if (_segment is { } previous)
        {
            await previous.SkipRestAsync().ConfigureAwait(false);
            previous.MarkDone();
        }

        _current = null;
        _segment = null;
        if (++_index >= _details.Count)
        {
            _index = _details.Count;
            return false;
        }

        var details = _details[_index];
        _segment = new SegmentStream(this, details.Size, details.Name);
        _current = new AttachmentEnumeratorResult(_segment, details);
        return true;
    }

    public ValueTask DisposeAsync()
    {
        _segment?.MarkDone();
        _body.Dispose();
        _response.Dispose();
        if (_buffer.Length > 0)
        {
            ArrayPool<byte>.Shared.Return(_buffer);
            _buffer = [];
        }

        return ValueTask.CompletedTask;
    }

    /// <summary>Whether <paramref name="data"/> starts with a whole JSON value (whitespace around it allowed), and how long it is.</summary>
    internal static bool TryFindJsonEnd(ReadOnlySpan<byte> data, out int length)
    {
        length = 0;
        var reader = new Utf8JsonReader(data, isFinalBlock: false, default);
        try
        {
            if (!reader.Read() || !reader.TrySkip())
            {
                return false;
            }
        }
        catch (JsonException e)
        {
            throw new JackdawException($"The answer to POST attachments/bulk does not start with JSON: {e.Message}", e);
        }

        length = (int)reader.BytesConsumed;
        return true;
    }

    private static List<AttachmentDetails> ReadDetails(ReadOnlyMemory<byte> json, int expected)
    {
        using var document = JsonDocument.Parse(json);
        if (!document.RootElement.TryGetProperty("AttachmentsMetadata", out var metadata) || metadata.ValueKind != JsonValueKind.Array)
        {
            throw new JackdawException("The answer to POST attachments/bulk has no \"AttachmentsMetadata\" array.");
        }

        var details = metadata.EnumerateArray().Select(e => AttachmentCommands.ReadDetails(e, null, null)).ToList();
        if (details.Count != expected)
        {
            throw new JackdawException($"POST attachments/bulk answered {details.Count} attachments for the {expected} asked for.");
        }

        return details;
    }

    /// <summary>Reads the answer's next bytes: those kept after the JSON head first, then the connection.</summary>
    private async ValueTask<int> ReadAnswerAsync(Memory<byte> destination, CancellationToken token)
    {
        if (_bufferStart < _bufferEnd)
        {
            var count = Math.Min(destination.Length, _bufferEnd - _bufferStart);
            _buffer.AsMemory(_bufferStart, count).CopyTo(destination);
            _bufferStart += count;
            return count;
        }

        return await _body.ReadAsync(destination, token).ConfigureAwait(false);
    }

    /// <summary>The next <c>Size</c> bytes of the answer, as a read-only stream.</summary>
    private sealed class SegmentStream(AttachmentsEnumerator owner, long size, string name) : Stream
    {
        private readonly long _size = size;
        private long _remaining = size;
        private bool _closed;

        public override bool CanRead => !_closed;

        public override bool CanSeek => false;

        public override bool CanWrite => false;

        public override long Length => _size;

        public override long Position
        {
            get => _size - _remaining;
            set => throw new NotSupportedException();
        }

        public override int Read(byte[] buffer, int offset, int count) => ReadAsync(buffer.AsMemory(offset, count)).AsTask().GetAwaiter().GetResult();

        public override Task<int> ReadAsync(byte[] buffer, int offset, int count, CancellationToken cancellationToken) =>
            ReadAsync(buffer.AsMemory(offset, count), cancellationToken).AsTask();

        public override async ValueTask<int> ReadAsync(Memory<byte> buffer, CancellationToken cancellationToken = default)
        {
            ObjectDisposedException.ThrowIf(_closed, this);
            if (_remaining == 0 || buffer.Length == 0)
            {
                return 0;
            }

            var read = await owner.ReadAnswerAsync(buffer[..(int)Math.Min(buffer.Length, _remaining)], cancellationToken).ConfigureAwait(false);
            if (read == 0)
            {
                throw new JackdawException($"The answer to POST attachments/bulk ended {_remaining} bytes before the end of attachment '{name}'.");
            }

            _remaining -= read;
            return read;
        }

        /// <summary>Reads past what the caller left of this attachment, to reach the next one.</summary>
        public async Task SkipRestAsync()
        {
            if (_closed || _remaining == 0)
            {
                return;
            }

            var scratch = ArrayPool<byte>.Shared.Rent(BufferSize);
            try
            {
                while (_remaining > 0)
                {
                    await ReadAsync(scratch.AsMemory(0, (int)Math.Min(scratch.Length, _remaining))).ConfigureAwait(false);
                }
            }
            finally
            {
                ArrayPool<byte>.Shared.Return(scratch);
            }
        }

        public override void Flush()
        {
        }

        public override long Seek(long offset, SeekOrigin origin) => throw new NotSupportedException();

        public override void SetLength(long value) => throw new NotSupportedException();

        public override void Write(byte[] buffer, int offset, int count) => throw new NotSupportedException();

        /// <summary>
        /// The enumeration moved past this attachment. (Disposing the stream does nothing: its bytes
        /// belong to the shared answer, and the enumerator skips what is left when it moves on.)
        /// </summary>
        public void MarkDone() => _closed = true;
    }
}
