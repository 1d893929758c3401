using System.Net.WebSockets;
using System.Text;
using System.Text.Json;

namespace Jackdaw.Server.Tests.Subscriptions;

/// <summary>A test worker: the subscription protocol over a real WebSocket.</summary>
internal sealed class SubscriptionWorker : IAsyncDisposable
{
    private readonly ClientWebSocket _socket = new();

    public WebSocket Socket => _socket;

    public static async Task<(SubscriptionWorker Worker, JsonElement Status)> ConnectAsync(Uri server, string db, string name, string strategy = "OpenIfFree", int maxDocs = 4096)
    {
        var worker = new SubscriptionWorker();
        var uri = new UriBuilder(server) { Scheme = server.Scheme == "https" ? "wss" : "ws", Path = $"/databases/{db}/subscriptions/connect", Query = $"name={Uri.EscapeDataString(name)}&strategy={strategy}&maxDocsPerBatch={maxDocs}" }.Uri;
        await worker._socket.ConnectAsync(uri, CancellationToken.None);
        var status = await worker.ReceiveAsync(TimeSpan.FromSeconds(30));
        return (worker, status!.Value);
    }

    /// <summary>The next message that is not a heartbeat; null when the server closed the connection.</summary>
    public async Task<JsonElement?> ReceiveAsync(TimeSpan timeout, bool skipHeartbeats = true)
    {
        using var cancel = new CancellationTokenSource(timeout);
        var buffer = new byte[64 * 1024];
        while (true)
        {
            using var message = new MemoryStream();
            ValueWebSocketReceiveResult result;
            do
            {
                result = await _socket.ReceiveAsync(buffer.AsMemory(), cancel.Token);
                if (result.MessageType == WebSocketMessageType.Close)
                {
                    return null;
                }
                message.Write(buffer, 0, result.Count);
            }
            while (!result.EndOfMessage);
            var json = JsonDocument.Parse(message.ToArray()).RootElement.Clone();
            if (skipHeartbeats && json.GetProperty("Type").GetString() == "Heartbeat")
            {
                continue;
            }
            return json;
        }
    }

    public Task SendAsync(string text) => _socket.SendAsync(Encoding.UTF8.GetBytes(text), WebSocketMessageType.Text, true, CancellationToken.None);

    public Task AckAsync(long etag) => SendAsync($"{{\"Type\":\"Acknowledge\",\"Etag\":{etag}}}");

    /// <summary>Receives one batch (skipping heartbeats), or throws when something else came.</summary>
    public async Task<JsonElement> BatchAsync(TimeSpan? timeout = null)
    {
        var message = await ReceiveAsync(timeout ?? TimeSpan.FromSeconds(30)) ?? throw new InvalidOperationException("The server closed the connection.");
        if (message.GetProperty("Type").GetString() != "Batch")
        {
            throw new InvalidOperationException("Expected a batch, got " + message);
        }
        return message;
    }

    /// <summary>Acknowledges a batch and waits for its confirmation.</summary>
    public async Task AckAndConfirmAsync(JsonElement batch)
    {
        await AckAsync(batch.GetProperty("LastEtag").GetInt64());
        var confirm = await ReceiveAsync(TimeSpan.FromSeconds(30)) ?? throw new InvalidOperationException("Closed before the confirmation.");
        if (confirm.GetProperty("Type").GetString() != "Confirm")
        {
            throw new InvalidOperationException("Expected a confirmation, got " + confirm);
        }
    }

    public static List<string> Ids(JsonElement batch) =>
        batch.GetProperty("Items").EnumerateArray().Select(i => i.GetProperty("Id").GetString()!).ToList();

    /// <summary>Drops the connection without a goodbye (a crashed worker).</summary>
    public void Abort() => _socket.Abort();

    public async ValueTask DisposeAsync()
    {
        try
        {
            if (_socket.State == WebSocketState.Open)
            {
                await _socket.CloseAsync(WebSocketCloseStatus.NormalClosure, "bye", new CancellationTokenSource(TimeSpan.FromSeconds(5)).Token);
            }
        }
        catch (Exception e) when (e is WebSocketException or OperationCanceledException)
        {
        }
        _socket.Dispose();
    }
}
