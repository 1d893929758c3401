using System.Buffers;
using System.Net.WebSockets;

namespace Jackdaw.Server.WebSockets;

/// <summary>
/// Reads a client's messages whole, into one pooled buffer that grows as a message needs, up to
/// <see cref="MaxBytes"/> (the server's <c>Limits:MaxWebSocketMessageSize</c>): whatever a client
/// sends, the server holds at most that much for it. The changes feed, the subscription worker's
/// connection and the indexing performance feed read with it. Not thread-safe (one receive at a
/// time, as the socket allows); dispose it to give the buffer back.
/// </summary>
public sealed class WebSocketMessageReader : IDisposable
{
    private const int FirstBuffer = 4096;

    private readonly WebSocket _socket;
    private byte[] _buffer;
    private int _count;

    public WebSocketMessageReader(WebSocket socket, int maxBytes)
    {
        ArgumentOutOfRangeException.ThrowIfNegativeOrZero(maxBytes);
        _socket = socket;
        MaxBytes = maxBytes;
        _buffer = ArrayPool<byte>.Shared.Rent(Math.Min(FirstBuffer, maxBytes));
    }

    /// <summary>The longest message read whole; a longer one is <see cref="WebSocketRead.TooBig"/>.</summary>
    public int MaxBytes { get; }

    /// <summary>The message last read (until the next read).</summary>
    public ReadOnlyMemory<byte> Message => _buffer.AsMemory(0, _count);

    /// <summary>Whether <see cref="Message"/> is text or binary.</summary>
    public WebSocketMessageType MessageType { get; private set; }

    /// <summary>
    /// Reads the next message whole, or up to the client's close frame, or until it passes
    /// <see cref="MaxBytes"/> (then the rest is left unread: the caller closes the connection).
    /// </summary>
    /// <exception cref="WebSocketException">The connection broke.</exception>
    /// <exception cref="OperationCanceledException"><paramref name="cancellationToken"/> was cancelled (which aborts the socket).</exception>
    public async ValueTask<WebSocketRead> ReadAsync(CancellationToken cancellationToken)
    {
        _count = 0;
        while (true)
        {
            // The pool may hand out a larger array than asked for: the limit is MaxBytes, not its length.
            var room = Math.Min(_buffer.Length, MaxBytes) - _count;
            if (room == 0)
            {
                if (_count >= MaxBytes)
                {
                    return WebSocketRead.TooBig;
                }
                Grow();
                continue;
            }
            var received = await _socket.ReceiveAsync(_buffer.AsMemory(_count, room), cancellationToken).ConfigureAwait(false);
            if (received.MessageType == WebSocketMessageType.Close)
            {
                return WebSocketRead.Closed;
            }
            _count += received.Count;
            if (received.EndOfMessage)
            {
                MessageType = received.MessageType;
                return WebSocketRead.Message;
            }
        }
    }

    public void Dispose()
    {
        if (_buffer.Length > 0)
        {
            ArrayPool<byte>.Shared.Return(_buffer);
        }
        _buffer = [];
        _count = 0;
    }

    private void Grow()
    {
        var larger = ArrayPool<byte>.Shared.Rent((int)Math.Min((long)_buffer.Length * 2, MaxBytes));
        _buffer.AsSpan(0, _count).CopyTo(larger);
        ArrayPool<byte>.Shared.Return(_buffer);
        _buffer = larger;
    }
}
