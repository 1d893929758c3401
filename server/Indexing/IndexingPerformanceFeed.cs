using System.Net.WebSockets;
using Jackdaw.Server.WebSockets;

namespace Jackdaw.Server.Indexing;

/// <summary>
/// The indexing performance live feed (<c>GET /databases/{db}/indexes/performance/live</c>, a
/// WebSocket): every new batch of every index of the database as it completes, one text message
/// <c>[{"Name","Performance":[batch]}]</c> at a time (up to 64 batches, grouped by index). A slow
/// reader loses the oldest queued batches (a <c>{"Type":"Dropped","Count"}</c> notice says how
/// many), never the server's memory: the queue and the connection are the server's shared
/// <see cref="WebSocketFeed{T}"/>.
/// </summary>
public static class IndexingPerformanceFeed
{
    /// <summary>The most batches a connection queues before it drops the oldest.</summary>
    public const int QueueCapacity = 1024;

    /// <summary>Serves an accepted WebSocket until the client leaves (or the request is aborted).</summary>
    /// <param name="maxMessageBytes">The longest message the client may send (<c>Limits:MaxWebSocketMessageSize</c>).</param>
    public static async Task RunAsync(WebSocket socket, IndexStore store, int maxMessageBytes, CancellationToken aborted)
    {
        var feed = new WebSocketFeed<(string Index, IndexingBatch Batch)>(QueueCapacity);
        using var subscription = store.SubscribeBatches((index, batch) => feed.Offer((index.Name, batch)));
        await feed.RunAsync(socket, 64, static (writer, batches) =>
        {
            writer.WriteStartArray();
            foreach (var group in batches.GroupBy(b => b.Index))
            {
                IndexingPerformanceJson.WriteIndex(writer, group.Key, group.Select(g => g.Batch));
            }
            writer.WriteEndArray();
        }, maxMessageBytes, aborted).ConfigureAwait(false);
    }
}
