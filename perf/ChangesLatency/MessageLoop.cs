// The read loop the WebSocket receivers share: whole text messages, in order, with their arrival time.
using System.Net.WebSockets;

internal static class MessageLoop
{
    /// <summary>
    /// Reads messages until <paramref name="stop"/> (returns) or the server closes the socket (throws
    /// <see cref="InvalidOperationException"/> naming its close status). <paramref name="handle"/>
    /// gets each whole message and the microsecond it was read; the memory is reused after it returns.
    /// The socket is disposed at the end.
    /// </summary>
    public static async Task RunAsync(ClientWebSocket socket, int bufferSize, Func<ReadOnlyMemory<byte>, int, ValueTask> handle, CancellationToken stop)
    {
        var buffer = new byte[bufferSize];
        var count = 0;
        try
        {
            while (true)
            {
                if (count == buffer.Length)
                {
                    Array.Resize(ref buffer, buffer.Length * 2);
                }
                var result = await socket.ReceiveAsync(buffer.AsMemory(count), stop);
                if (result.MessageType == WebSocketMessageType.Close)
                {
                    throw new InvalidOperationException($"closed by the server: {socket.CloseStatus} {socket.CloseStatusDescription}");
                }
                count += result.Count;
                if (!result.EndOfMessage)
                {
                    continue;
                }
                var now = Clock.NowUs();
                await handle(buffer.AsMemory(0, count), now);
                count = 0;
            }
        }
        catch (OperationCanceledException) when (stop.IsCancellationRequested)
        {
        }
        finally
        {
            socket.Abort();
            socket.Dispose();
        }
    }
}
