using System.Buffers;
using System.Net.WebSockets;
using System.Text;
using System.Text.Json;
using System.Threading.Channels;

namespace Jackdaw.Server.WebSockets;

/// <summary>
/// A push-only WebSocket feed (the indexing performance live feed, traffic watch): a publisher
/// offers items without ever waiting, into a queue of at most <see cref="Capacity"/> items; when a
/// slow reader lets it fill up, the oldest items are dropped and the next message sent is followed
/// by <c>{"Type":"Dropped","Count":n}</c>. <see cref="RunAsync"/> sends the queue as JSON text
/// messages until the client leaves. The client sends nothing: its messages are read and dropped so
/// that its close is noticed, and one longer than the server's largest WebSocket message ends the
/// feed (1009).
/// </summary>
/// <typeparam name="T">What the publisher offers; written to JSON on the feed's sender, not the publisher's thread.</typeparam>
public sealed class WebSocketFeed<T>
{
    private readonly Channel<T> _queue;
    private long _dropped;

    public WebSocketFeed(int capacity)
    {
        ArgumentOutOfRangeException.ThrowIfNegativeOrZero(capacity);
        Capacity = capacity;
        // DropOldest never refuses a write: the callback is the only way to know an item was lost.
        _queue = Channel.CreateBounded<T>(
            new BoundedChannelOptions(capacity) { FullMode = BoundedChannelFullMode.DropOldest, SingleReader = true },
            _ => Interlocked.Increment(ref _dropped));
    }

    /// <summary>The most items waiting to be sent; past it the oldest are dropped.</summary>
    public int Capacity { get; }

    /// <summary>Items dropped and not yet reported to the client.</summary>
    public long Dropped => Interlocked.Read(ref _dropped);

    /// <summary>Queues an item; never waits (the oldest queued item goes when the queue is full).</summary>
    public void Offer(T item) => _queue.Writer.TryWrite(item);

    /// <summary>
    /// Serves an accepted WebSocket until the client leaves (or <paramref name="aborted"/>): takes up
    /// to <paramref name="maxItemsPerMessage"/> queued items at a time and sends what
    /// <paramref name="write"/> makes of them as one text message.
    /// </summary>
    /// <param name="write">Writes one JSON message of the items given (at least one).</param>
    /// <param name="maxMessageBytes">The longest message the client may send (<c>Limits:MaxWebSocketMessageSize</c>).</param>
    public async Task RunAsync(WebSocket socket, int maxItemsPerMessage, Action<Utf8JsonWriter, IReadOnlyList<T>> write, int maxMessageBytes, CancellationToken aborted)
    {
        ArgumentOutOfRangeException.ThrowIfNegativeOrZero(maxItemsPerMessage);
        using var closed = CancellationTokenSource.CreateLinkedTokenSource(aborted);
        var tooBig = false;
        var reading = Task.Run(async () =>
        {
            tooBig = await ReadUntilClosedAsync(socket, maxMessageBytes, closed.Token).ConfigureAwait(false);
            closed.Cancel();
        });
        try
        {
            var items = new List<T>(maxItemsPerMessage);
            var buffer = new ArrayBufferWriter<byte>(4096);
            using var writer = new Utf8JsonWriter(buffer);
            while (await _queue.Reader.WaitToReadAsync(closed.Token).ConfigureAwait(false))
            {
                items.Clear();
                while (items.Count < maxItemsPerMessage && _queue.Reader.TryRead(out var item))
                {
                    items.Add(item);
                }
                if (items.Count > 0)
                {
                    buffer.ResetWrittenCount();
                    writer.Reset(buffer);
                    write(writer, items);
                    writer.Flush();
                    await socket.SendAsync(buffer.WrittenMemory, WebSocketMessageType.Text, true, closed.Token).ConfigureAwait(false);
                }
                var lost = Interlocked.Exchange(ref _dropped, 0);
                if (lost > 0)
                {
                    await socket.SendAsync(Encoding.UTF8.GetBytes($"{{\"Type\":\"Dropped\",\"Count\":{lost}}}"), WebSocketMessageType.Text, true, closed.Token).ConfigureAwait(false);
                }
            }
        }
        catch (Exception e) when (e is OperationCanceledException or WebSocketException)
        {
        }
        if (tooBig)
        {
            // The reader stopped inside the message: what is left of it, and the client's close, are dropped here.
            await reading.ConfigureAwait(false);
            await WebSocketClosing.SendCloseAsync(socket, WebSocketCloseStatus.MessageTooBig, $"a message may have at most {maxMessageBytes} bytes", aborted).ConfigureAwait(false);
            await WebSocketClosing.DrainAsync(socket, WebSocketClosing.Grace, aborted).ConfigureAwait(false);
            return;
        }
        // A client that closed first is answered too; else the reader waits for the client's close.
        await WebSocketClosing.SendCloseAsync(socket, WebSocketCloseStatus.NormalClosure, "bye", aborted).ConfigureAwait(false);
        await reading.ConfigureAwait(false);
    }

    /// <summary>Reads and drops the client's messages until its close; returns whether one was too long.</summary>
    private static async Task<bool> ReadUntilClosedAsync(WebSocket socket, int maxMessageBytes, CancellationToken cancellationToken)
    {
        using var reader = new WebSocketMessageReader(socket, maxMessageBytes);
        try
        {
            WebSocketRead read;
            do
            {
                read = await reader.ReadAsync(cancellationToken).ConfigureAwait(false);
            }
            while (read == WebSocketRead.Message);
            return read == WebSocketRead.TooBig;
        }
        catch (Exception e) when (e is OperationCanceledException or WebSocketException or ObjectDisposedException)
        {
            return false;
        }
    }
}
