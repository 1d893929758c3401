using System.Net.WebSockets;

namespace Jackdaw.Server.WebSockets;

/// <summary>
/// One binary message of a WebSocket read as a stream, frame by frame into the caller's buffer:
/// it ends with the message, so a message of any size is read without holding it whole
/// (replication's attachment contents). Read-only, not seekable; read it to its end before the
/// socket's next message is read. A read that gets nothing for <c>idleTimeout</c> is cancelled
/// (which aborts the socket): a peer that stalls mid-message does not hold the connection forever.
/// </summary>
public sealed class WebSocketMessageStream(WebSocket socket, TimeSpan idleTimeout) : Stream
{
    private bool _ended;

    public override bool CanRead => true;

    public override bool CanSeek => false;

    public override bool CanWrite => false;

    public override long Length => throw new NotSupportedException();

    public override long Position
    {
        get => throw new NotSupportedException();
        set => throw new NotSupportedException();
    }

    public override async ValueTask<int> ReadAsync(Memory<byte> buffer, CancellationToken cancellationToken = default)
    {
        while (!_ended && !buffer.IsEmpty)
        {
            using var idle = CancellationTokenSource.CreateLinkedTokenSource(cancellationToken);
            idle.CancelAfter(idleTimeout);
            var received = await socket.ReceiveAsync(buffer, idle.Token).ConfigureAwait(false);
            if (received.MessageType == WebSocketMessageType.Close)
            {
                throw new WebSocketException("The replication connection closed in the middle of an attachment's content.");
            }
            _ended = received.EndOfMessage;
            if (received.Count > 0)
            {
                return received.Count;
            }
        }
        return 0;
    }

    public override Task<int> ReadAsync(byte[] buffer, int offset, int count, CancellationToken cancellationToken) =>
        ReadAsync(buffer.AsMemory(offset, count), cancellationToken).AsTask();

    public override int Read(byte[] buffer, int offset, int count) => throw new NotSupportedException("Read the message asynchronously.");

    public override void Flush()
    {
    }

    public override long Seek(long offset, SeekOrigin origin) => throw new NotSupportedException();

    public override void SetLength(long value) => throw new NotSupportedException();

    public override void Write(byte[] buffer, int offset, int count) => throw new NotSupportedException();
}
