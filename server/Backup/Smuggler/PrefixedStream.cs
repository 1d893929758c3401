namespace Jackdaw.Server.Backup.Smuggler;

/// <summary>A read-only stream of some bytes already read (a dump's first bytes, looked at) followed by the rest of their source.</summary>
internal sealed class PrefixedStream(ReadOnlyMemory<byte> prefix, Stream rest) : Stream
{
    private ReadOnlyMemory<byte> _prefix = prefix;

    public override bool CanRead => true;
    public override bool CanSeek => false;
    public override bool CanWrite => false;
    public override long Length => throw new NotSupportedException();
    public override long Position { get => throw new NotSupportedException(); set => throw new NotSupportedException(); }

    public override int Read(byte[] buffer, int offset, int count) => Read(buffer.AsSpan(offset, count));

    public override int Read(Span<byte> buffer)
    {
        if (_prefix.IsEmpty)
        {
            return rest.Read(buffer);
        }
        var n = Math.Min(buffer.Length, _prefix.Length);
        _prefix.Span[..n].CopyTo(buffer);
        _prefix = _prefix[n..];
        return n;
    }

    public override Task<int> ReadAsync(byte[] buffer, int offset, int count, CancellationToken cancellationToken) =>
        ReadAsync(buffer.AsMemory(offset, count), cancellationToken).AsTask();

    public override ValueTask<int> ReadAsync(Memory<byte> buffer, CancellationToken cancellationToken = default)
    {
        if (_prefix.IsEmpty)
        {
            return rest.ReadAsync(buffer, cancellationToken);
        }
        var n = Math.Min(buffer.Length, _prefix.Length);
        _prefix.Span[..n].CopyTo(buffer.Span);
        _prefix = _prefix[n..];
        return ValueTask.FromResult(n);
    }

    public override void Flush()
    {
    }

    public override long Seek(long offset, SeekOrigin origin) => throw new NotSupportedException();
    public override void SetLength(long value) => throw new NotSupportedException();
    public override void Write(byte[] buffer, int offset, int count) => throw new NotSupportedException();
}
