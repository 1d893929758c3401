using System.Buffers;
using System.Net.WebSockets;
using System.Text;
using System.Text.Json;
using System.Threading.Channels;
using Jackdaw.Server.WebSockets;

namespace Jackdaw.Server.Indexing;

/// <summary>
/// The indexing performance live feed (<c>GET /databases/{db}/indexes/performance/live</c>, a
/// WebSocket): every new batch of every index of the database as it completes, one text message
/// <c>[{"Name","Performance":[batch]}]</c> at a time (up to 64 batches, grouped by index). A slow
/// reader loses the oldest queued batches (a <c>{"Type":"Dropped","Count"}</c> notice says how
/// many), never the server's memory. The client sends nothing; its messages are read and dropped
/// so that its close is noticed, and one longer than the server's largest WebSocket message ends
/// the feed (1009).
/// </summary>
public static class IndexingPerformanceFeed
{
    /// <summary>The most batches a connection queues before it drops the oldest.</summary>
    public const int QueueCapacity = 1024;

    /// <summary>Serves an accepted WebSocket until the client leaves (or the request is aborted).</summary>
    /// <param name="maxMessageBytes">The longest message the client may send (<c>Limits:MaxWebSocketMessageSize</c>).</param>
    public static async Task RunAsync(WebSocket socket, IndexStore store, int maxMessageBytes, CancellationToken aborted)
    {
        var queue = Channel.CreateBounded<(string Index, IndexingBatch Batch)>(
            new BoundedChannelOptions(QueueCapacity) { FullMode = BoundedChannelFullMode.DropOldest, SingleReader = true });
        var dropped = 0L;
        using var subscription = store.SubscribeBatches((index, batch) =>
        {
            if (!queue.Writer.TryWrite((index.Name, batch)))
            {
                Interlocked.Increment(ref dropped);
            }
        });
        using var closed = CancellationTokenSource.CreateLinkedTokenSource(aborted);
        // Read (and drop) what the client sends, so its close is noticed and ends the feed.
        var tooBig = false;
        var reading = Task.Run(async () =>
        {
            using var reader = new WebSocketMessageReader(socket, maxMessageBytes);
            try
            {
                WebSocketRead read;
                do
                {
                    read = await reader.ReadAsync(closed.Token).ConfigureAwait(false);
                }
                while (read == WebSocketRead.Message);
                tooBig = read == WebSocketRead.TooBig;
            }
            catch (Exception e) when (e is OperationCanceledException or WebSocketException or ObjectDisposedException)
            {
            }
            closed.Cancel();
        });
        try
        {
            while (await queue.Reader.WaitToReadAsync(closed.Token).ConfigureAwait(false))
            {
                var buffer = new ArrayBufferWriter<byte>(4096);
                using (var writer = new Utf8JsonWriter(buffer))
                {
                    writer.WriteStartArray();
                    var batches = new List<(string Index, IndexingBatch Batch)>();
                    while (batches.Count < 64 && queue.Reader.TryRead(out var item))
                    {
                        batches.Add(item);
                    }
                    foreach (var group in batches.GroupBy(b => b.Index))
                    {
                        IndexingPerformanceJson.WriteIndex(writer, group.Key, group.Select(g => g.Batch));
                    }
                    writer.WriteEndArray();
                }
                await socket.SendAsync(buffer.WrittenMemory, WebSocketMessageType.Text, true, closed.Token).ConfigureAwait(false);
                var lost = Interlocked.Exchange(ref dropped, 0);
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
}
