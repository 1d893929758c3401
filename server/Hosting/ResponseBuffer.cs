using System.Buffers;
using System.IO.Pipelines;

namespace Jackdaw.Server.Hosting;

/// <summary>
/// The body of an inner request's response (<see cref="InnerRequest"/>): a <see cref="PipeWriter"/>
/// over one pooled array that doubles when full. Nothing is sent anywhere: a flush only says the
/// bytes are there, and <see cref="Reset"/> forgets them, which a pipe over a socket cannot do.
/// </summary>
internal sealed class ResponseBuffer : PipeWriter, IDisposable
{
    private const int MinimumSize = 4096;

    private byte[] _buffer = [];
    private int _written;

    /// <summary>What the handler wrote, valid until the next write or <see cref="Reset"/>.</summary>
    public ReadOnlySpan<byte> Written => _buffer.AsSpan(0, _written);

    public int Length => _written;

    public override bool CanGetUnflushedBytes => true;

    public override long UnflushedBytes => _written;

    public void Reset() => _written = 0;

    public override void Advance(int bytes)
    {
        if ((uint)bytes > (uint)(_buffer.Length - _written))
        {
            throw new ArgumentOutOfRangeException(nameof(bytes), $"Advanced {bytes} bytes with {_buffer.Length - _written} available.");
        }

        _written += bytes;
    }

    public override Memory<byte> GetMemory(int sizeHint = 0)
    {
        Ensure(sizeHint);
        return _buffer.AsMemory(_written);
    }

    public override Span<byte> GetSpan(int sizeHint = 0)
    {
        Ensure(sizeHint);
        return _buffer.AsSpan(_written);
    }

    public override ValueTask<FlushResult> FlushAsync(CancellationToken cancellationToken = default) =>
        new(new FlushResult(isCanceled: false, isCompleted: false));

    public override void CancelPendingFlush()
    {
    }

    public override void Complete(Exception? exception = null)
    {
    }

    public void Dispose()
    {
        if (_buffer.Length > 0)
        {
            ArrayPool<byte>.Shared.Return(_buffer);
        }

        _buffer = [];
        _written = 0;
    }

    private void Ensure(int sizeHint)
    {
        var needed = Math.Max(sizeHint, 1);
        if (_buffer.Length - _written >= needed)
        {
            return;
        }

        Grow(needed);
    }

    private void Grow(int needed)
    {
        var size = Math.Max(Math.Max(_buffer.Length * 2, MinimumSize), checked(_written + needed));
        var bigger = ArrayPool<byte>.Shared.Rent(size);
        _buffer.AsSpan(0, _written).CopyTo(bigger);
        if (_buffer.Length > 0)
        {
            ArrayPool<byte>.Shared.Return(_buffer);
        }

        _buffer = bigger;
    }
}
