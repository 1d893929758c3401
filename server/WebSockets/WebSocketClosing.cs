using System.Net.WebSockets;

namespace Jackdaw.Server.WebSockets;

/// <summary>
/// How the server's WebSocket routes (the changes feed, the subscription worker's connection and
/// the indexing performance live feed) end a connection, in one place: the close frame is sent
/// without waiting for the client's (a receive may be pending on another task), and what the
/// client still sends is read and dropped until its close frame completes the handshake.
/// Accepting is on the handlers' side: <c>RequestContext.AcceptWebSocketAsync</c> in Hosting,
/// which refuses a plain request with a 400.
/// </summary>
public static class WebSocketClosing
{
    /// <summary>How long a closing connection waits for the client's close frame before it gives up on it.</summary>
    public static readonly TimeSpan Grace = TimeSpan.FromSeconds(5);

    /// <summary>
    /// Sends the close frame when the socket can still send (it is open, or the client closed
    /// first and waits for our answer). A send that fails or is cancelled aborts the socket: the
    /// client is gone or did not read in time, and nothing more can be said to it.
    /// </summary>
    /// <returns>Whether the close frame was sent.</returns>
    public static async Task<bool> SendCloseAsync(WebSocket socket, WebSocketCloseStatus status, string description, CancellationToken cancellationToken)
    {
        if (socket.State is not (WebSocketState.Open or WebSocketState.CloseReceived))
        {
            return false;
        }
        try
        {
            await socket.CloseOutputAsync(status, description, cancellationToken).ConfigureAwait(false);
            return true;
        }
        catch (Exception e) when (e is WebSocketException or OperationCanceledException or ObjectDisposedException)
        {
            socket.Abort();
            return false;
        }
    }

    /// <summary>
    /// Reads and drops what the client sends until its close frame; returns then, or when the
    /// token is cancelled or the socket breaks (never throws for those).
    /// </summary>
    public static async Task DrainAsync(WebSocket socket, CancellationToken cancellationToken)
    {
        var buffer = new byte[1024];
        try
        {
            while (socket.State is WebSocketState.Open or WebSocketState.CloseSent)
            {
                var received = await socket.ReceiveAsync(buffer.AsMemory(), cancellationToken).ConfigureAwait(false);
                if (received.MessageType == WebSocketMessageType.Close)
                {
                    return;
                }
            }
        }
        catch (Exception e) when (e is OperationCanceledException or WebSocketException or ObjectDisposedException)
        {
        }
    }

    /// <summary><see cref="DrainAsync(WebSocket, CancellationToken)"/> for at most <paramref name="limit"/>.</summary>
    public static async Task DrainAsync(WebSocket socket, TimeSpan limit, CancellationToken cancellationToken)
    {
        using var within = CancellationTokenSource.CreateLinkedTokenSource(cancellationToken);
        within.CancelAfter(limit);
        await DrainAsync(socket, within.Token).ConfigureAwait(false);
    }
}
