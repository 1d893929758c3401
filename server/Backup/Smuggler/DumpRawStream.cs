namespace Jackdaw.Server.Backup.Smuggler;

/// <summary>
/// The <paramref name="length"/> raw bytes after an attachment's header in a dump, as a read-only
/// stream (what <c>AttachmentUpload</c> reads, as it reads a request body): nothing is buffered
/// beyond what the dump's reader holds, and a dump that ends early fails the read.
/// </summary>
internal sealed class DumpRawStream(DumpReader dump, long length) : Stream
{
    private readonly long _length = length;
    private long _remaining = length;

    public override bool CanRead => true;

    public override bool CanSeek => false;

    public override bool CanWrite => false;

    public override long Length => _length;

    public override long Position
    {
        get => _length - _remaining;
        set => throw new NotSupportedException("A dump's attachment is read once, in order.");
    }

    public override async ValueTask<int> ReadAsync(Memory<byte> buffer, CancellationToken cancellationToken = default)
    {
        if (_remaining == 0 || buffer.IsEmpty)
        {
            return 0;
        }
        var read = await dump.ReadRawAsync(buffer[..(int)Math.Min(buffer.Length, _remaining)]).ConfigureAwait(false);
        _remaining -= read;
        return read;
    }

    public override Task<int> ReadAsync(byte[] buffer, int offset, int count, CancellationToken cancellationToken) =>
        ReadAsync(buffer.AsMemory(offset, count), cancellationToken).AsTask();

    public override int Read(byte[] buffer, int offset, int count) => ReadAsync(buffer, offset, count, CancellationToken.None).GetAwaiter().GetResult();

    /// <summary>Steps over what was not read (an upload that stopped early), so the dump reads on after it.</summary>
    public async ValueTask SkipRestAsync()
    {
        if (_remaining > 0)
        {
            await dump.SkipRawAsync(_remaining).ConfigureAwait(false);
        }
        _remaining = 0;
    }

    public override void Flush()
    {
    }

    public override long Seek(long offset, SeekOrigin origin) => throw new NotSupportedException("A dump's attachment is read once, in order.");

    public override void SetLength(long value) => throw new NotSupportedException();

    public override void Write(byte[] buffer, int offset, int count) => throw new NotSupportedException();
}
