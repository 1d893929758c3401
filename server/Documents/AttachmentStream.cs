using Jackdaw.Storage.Engine;

namespace Jackdaw.Server.Documents;

/// <summary>
/// A read-only, seekable stream over an attachment's content: its chunks in <c>AttachmentChunks</c>,
/// read from the snapshot of the reader that opened it (valid only while that reader lives). Each
/// read looks its chunk up in the tree and copies from the mapped pages; nothing else is buffered.
/// </summary>
public sealed class AttachmentStream : Stream
{
    private readonly Tree? _chunks;
    private readonly long _streamId;
    private readonly long _length;
    private long _position;
    private bool _disposed;

    internal AttachmentStream(Tree? chunks, long streamId, long length)
    {
        _chunks = chunks;
        _streamId = streamId;
        _length = length;
    }

    public override bool CanRead => !_disposed;

    public override bool CanSeek => !_disposed;

    public override bool CanWrite => false;

    public override long Length => _length;

    public override long Position
    {
        get => _position;
        set
        {
            ArgumentOutOfRangeException.ThrowIfNegative(value);
            _position = value;
        }
    }

    public override int Read(byte[] buffer, int offset, int count) => Read(buffer.AsSpan(offset, count));

    public override int Read(Span<byte> buffer)
    {
        ObjectDisposedException.ThrowIf(_disposed, this);
        var total = 0;
        Span<byte> key = stackalloc byte[AttachmentStreams.ChunkKeySize];
        while (!buffer.IsEmpty && _position < _length)
        {
            var chunk = (int)(_position / AttachmentStreams.ChunkSize);
            var offset = (int)(_position % AttachmentStreams.ChunkSize);
            AttachmentStreams.WriteChunkKey(key, _streamId, chunk);
            if (_chunks is null || !_chunks.TryGet(key, out var bytes) || bytes.Length <= offset)
            {
                throw new InvalidDataException($"Attachment stream {_streamId} has no chunk {chunk} (or it is short) though its content is {_length} bytes: the attachment trees are inconsistent.");
            }
            var length = (int)Math.Min(Math.Min(bytes.Length - offset, buffer.Length), _length - _position);
            bytes.Slice(offset, length).CopyTo(buffer);
            buffer = buffer[length..];
            _position += length;
            total += length;
        }
        return total;
    }

    public override ValueTask<int> ReadAsync(Memory<byte> buffer, CancellationToken cancellationToken = default)
    {
        cancellationToken.ThrowIfCancellationRequested();
        return ValueTask.FromResult(Read(buffer.Span));
    }

    public override Task<int> ReadAsync(byte[] buffer, int offset, int count, CancellationToken cancellationToken) =>
        ReadAsync(buffer.AsMemory(offset, count), cancellationToken).AsTask();

    public override long Seek(long offset, SeekOrigin origin)
    {
        var target = origin switch
        {
            SeekOrigin.Begin => offset,
            SeekOrigin.Current => _position + offset,
            SeekOrigin.End => _length + offset,
            _ => throw new ArgumentOutOfRangeException(nameof(origin)),
        };
        if (target < 0)
        {
            throw new IOException($"Cannot seek to {target}: before the start of the attachment.");
        }
        _position = target;
        return target;
    }

    public override void Flush()
    {
    }

    public override void SetLength(long value) => throw new NotSupportedException("An attachment stream is read-only.");

    public override void Write(byte[] buffer, int offset, int count) => throw new NotSupportedException("An attachment stream is read-only.");

    protected override void Dispose(bool disposing)
    {
        _disposed = true;
        base.Dispose(disposing);
    }
}
