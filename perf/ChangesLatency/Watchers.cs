// The receivers: a changes-feed watcher, a subscription worker (Jackdaw) and a _changes reader (pouchdb-server).
using System.Buffers.Text;
using System.Diagnostics;
using System.Globalization;
using System.Net;
using System.Net.WebSockets;
using System.Text;
using System.Text.Json;

internal static class ChangesWatcher
{
    public static async Task<Task> StartAsync(string url, string db, string collection, Receiver receiver, CancellationToken stop)
    {
        var socket = new ClientWebSocket();
        await socket.ConnectAsync(new Uri($"{url.Replace("http", "ws", StringComparison.Ordinal)}/databases/{db}/changes"), CancellationToken.None);
        var confirmed = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        var loop = ReceiveAsync(socket, receiver, confirmed, stop);
        var command = JsonSerializer.SerializeToUtf8Bytes(new { CommandId = 1, Command = "watch-collection", Param = collection });
        await socket.SendAsync(command, WebSocketMessageType.Text, true, CancellationToken.None);
        await confirmed.Task.WaitAsync(TimeSpan.FromSeconds(10));
        return loop;
    }

    private static async Task ReceiveAsync(ClientWebSocket socket, Receiver receiver, TaskCompletionSource confirmed, CancellationToken stop)
    {
        try
        {
            await MessageLoop.RunAsync(socket, 128 * 1024, (message, now) =>
            {
                receiver.Messages++;
                var text = message.Span;
                receiver.Scan(text, "\"Id\":\""u8, now);
                if (text.IndexOf("\"Type\":\"Confirm\""u8) >= 0)
                {
                    confirmed.TrySetResult();
                }
                if (text.IndexOf("\"Type\":\"Error\""u8) >= 0)
                {
                    receiver.Errors++;
                    Console.Error.WriteLine($"{receiver.Name}: {Encoding.UTF8.GetString(text[..Math.Min(text.Length, 400)])}");
                }
                return ValueTask.CompletedTask;
            }, stop);
        }
        catch (Exception e)
        {
            receiver.Closed = e is InvalidOperationException ? e.Message : e.GetType().Name + ": " + e.Message;
            confirmed.TrySetException(e);
        }
    }
}

/// <summary>A Jackdaw subscription worker: batches in, an acknowledgement of each.</summary>
internal static class SubscriptionWorker
{
    public static async Task<Task> StartAsync(string url, string db, string name, Receiver receiver, CancellationToken stop)
    {
        var socket = new ClientWebSocket();
        await socket.ConnectAsync(new Uri($"{url.Replace("http", "ws", StringComparison.Ordinal)}/databases/{db}/subscriptions/connect?name={name}&strategy=OpenIfFree"), CancellationToken.None);
        var accepted = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        var loop = ReceiveAsync(socket, receiver, accepted, stop);
        await accepted.Task.WaitAsync(TimeSpan.FromSeconds(10));
        return loop;
    }

    private static async Task ReceiveAsync(ClientWebSocket socket, Receiver receiver, TaskCompletionSource accepted, CancellationToken stop)
    {
        var ackSent = 0;
        try
        {
            await MessageLoop.RunAsync(socket, 64 * 1024, async (message, now) =>
            {
                if (ackSent != 0 && message.Span.IndexOf("\"Type\":\"Confirm\""u8) >= 0)
                {
                    receiver.AckUs.Add(now - ackSent);
                    ackSent = 0;
                }
                if (Handle(message, now, receiver, accepted) is { } etag)
                {
                    ackSent = Clock.NowUs();
                    await socket.SendAsync(Encoding.UTF8.GetBytes($"{{\"Type\":\"Acknowledge\",\"Etag\":{etag}}}"), WebSocketMessageType.Text, true, stop);
                }
            }, stop);
        }
        catch (Exception e)
        {
            receiver.Closed = e is InvalidOperationException ? e.Message : e.GetType().Name + ": " + e.Message;
            accepted.TrySetException(e);
        }
    }

    /// <summary>One message of the server: the etag to acknowledge when it is a batch.</summary>
    private static long? Handle(ReadOnlyMemory<byte> message, int now, Receiver receiver, TaskCompletionSource accepted)
    {
        using var json = JsonDocument.Parse(message);
        var root = json.RootElement;
        switch (root.GetProperty("Type").GetString())
        {
            case "ConnectionStatus":
                if (root.GetProperty("Status").GetString() != "Accepted")
                {
                    throw new InvalidOperationException("subscription: " + root.GetRawText());
                }
                accepted.TrySetResult();
                return null;
            case "Batch":
                foreach (var item in root.GetProperty("Items").EnumerateArray())
                {
                    var id = item.GetProperty("Id").GetString()!;
                    receiver.Record(int.Parse(id.AsSpan(id.LastIndexOf('/') + 1), CultureInfo.InvariantCulture), now);
                }
                receiver.Batches++;
                return root.GetProperty("LastEtag").GetInt64();
            case "Error":
                receiver.Errors++;
                Console.Error.WriteLine("subscription: " + root.GetRawText());
                return null;
            default:
                return null;
        }
    }
}

/// <summary>A pouchdb-server (CouchDB) continuous changes feed: one JSON line per change.</summary>
internal static class PouchWatcher
{
    public static Task<Task> StartAsync(HttpClient http, string url, string db, Receiver receiver, CancellationToken stop) =>
        Task.FromResult(ReceiveAsync(http, $"{url}/{db}/_changes?feed=continuous&since=now&heartbeat=10000", receiver, stop));

    private static async Task ReceiveAsync(HttpClient http, string uri, Receiver receiver, CancellationToken stop)
    {
        try
        {
            using var response = await http.GetAsync(uri, HttpCompletionOption.ResponseHeadersRead, stop);
            response.EnsureSuccessStatusCode();
            await using var stream = await response.Content.ReadAsStreamAsync(stop);
            var buffer = new byte[64 * 1024];
            var count = 0;
            while (true)
            {
                if (count == buffer.Length)
                {
                    Array.Resize(ref buffer, buffer.Length * 2);
                }
                var read = await stream.ReadAsync(buffer.AsMemory(count), stop);
                if (read == 0)
                {
                    receiver.Closed = "the feed ended";
                    return;
                }
                var now = Clock.NowUs();
                receiver.Messages++;
                count += read;
                var complete = buffer.AsSpan(0, count).LastIndexOf((byte)'\n') + 1;
                if (complete == 0)
                {
                    continue;
                }
                receiver.Scan(buffer.AsSpan(0, complete), "\"id\":\""u8, now);
                buffer.AsSpan(complete, count - complete).CopyTo(buffer);
                count -= complete;
            }
        }
        catch (OperationCanceledException) when (stop.IsCancellationRequested)
        {
        }
        catch (Exception e)
        {
            receiver.Closed = e.GetType().Name + ": " + e.Message;
            Console.Error.WriteLine($"{receiver.Name}: {receiver.Closed}");
        }
    }
}
