using System.Net;
using System.Net.WebSockets;
using System.Text;
using System.Text.Json;
using Jackdaw.Server.Tests.Changes;
using Jackdaw.Server.Tests.Infrastructure;
using Jackdaw.Server.Tests.Subscriptions;

namespace Jackdaw.Server.Tests.Hosting;

/// <summary>
/// <c>Limits:MaxWebSocketMessageSize</c> bounds what a client may send on each WebSocket route:
/// the changes feed, a subscription worker's connection and the indexing performance feed.
/// </summary>
public sealed class WebSocketLimitsTests(LimitsFixture fixture) : IClassFixture<LimitsFixture>
{
    private static readonly TimeSpan Wait = TimeSpan.FromSeconds(30);

    private Uri Server => fixture.Client.BaseAddress!;

    /// <summary>A watch-doc command of exactly <paramref name="bytes"/> bytes.</summary>
    private static string WatchCommand(int bytes)
    {
        var empty = "{\"CommandId\":1,\"Command\":\"watch-doc\",\"Param\":\"\"}";
        return empty.Insert(empty.Length - 2, new string('d', bytes - empty.Length));
    }

    [Fact]
    public async Task AChangesCommandOfTheLimitIsTakenAndOneByteMoreClosesTheConnection()
    {
        var db = await fixture.CreateDatabaseAsync();
        await using var socket = await ChangesSocket.ConnectAsync(Server, db);
        await socket.SendTextAsync(WatchCommand(LimitsFixture.MaxWebSocketMessage));
        Assert.Equal("Confirm", (await socket.NextAsync()).GetProperty("Type").GetString());

        await socket.SendTextAsync(WatchCommand(LimitsFixture.MaxWebSocketMessage + 1));
        var error = await socket.NextAsync();
        Assert.Equal("MessageTooBig", error.GetProperty("Error").GetString());
        await socket.Closed.WaitAsync(Wait);
        Assert.Equal(WebSocketCloseStatus.MessageTooBig, socket.Socket.CloseStatus);
    }

    [Fact]
    public async Task ASubscriptionWorkersMessageOverTheLimitIsAnErrorNamingIt()
    {
        var db = await fixture.CreateDatabaseAsync();
        using (var put = await fixture.Client.PutAsync($"/databases/{db}/docs?id=orders/1", Api.Json("{\"@metadata\":{\"@collection\":\"Orders\"}}")))
        {
            Assert.Equal(HttpStatusCode.Created, put.StatusCode);
        }
        using (var create = await fixture.Client.PutAsync($"/databases/{db}/subscriptions", Api.Json(JsonSerializer.Serialize(new { Name = "S", Query = "from Orders", ChangeVector = "BeginningOfTime" }))))
        {
            Assert.Equal(HttpStatusCode.Created, create.StatusCode);
        }
        var (worker, _) = await SubscriptionWorker.ConnectAsync(Server, db, "S");
        await using var scope = worker;
        await worker.BatchAsync();

        await worker.SendAsync("{\"Type\":\"Heartbeat\",\"Pad\":\"" + new string('p', LimitsFixture.MaxWebSocketMessage) + "\"}");
        var error = await worker.ReceiveAsync(Wait);
        Assert.Equal("Error", error!.Value.GetProperty("Type").GetString());
        Assert.Contains($"at most {LimitsFixture.MaxWebSocketMessage} bytes (the server's Limits:MaxWebSocketMessageSize)", error.Value.GetProperty("Message").GetString(), StringComparison.Ordinal);
    }

    [Fact]
    public async Task AMessageOverTheLimitEndsTheIndexingPerformanceFeed()
    {
        var db = await fixture.CreateDatabaseAsync();
        using var socket = new ClientWebSocket();
        await socket.ConnectAsync(new Uri($"ws://{Server.Authority}/databases/{db}/indexes/performance/live"), CancellationToken.None);
        // The feed reads and drops what a client sends, up to the limit.
        await socket.SendAsync(Encoding.UTF8.GetBytes(new string('s', LimitsFixture.MaxWebSocketMessage)), WebSocketMessageType.Text, true, CancellationToken.None);
        await socket.SendAsync(Encoding.UTF8.GetBytes(new string('b', LimitsFixture.MaxWebSocketMessage + 1)), WebSocketMessageType.Text, true, CancellationToken.None);

        using var timeout = new CancellationTokenSource(Wait);
        var buffer = new byte[4096];
        WebSocketReceiveResult received;
        do
        {
            received = await socket.ReceiveAsync(buffer, timeout.Token);
        }
        while (received.MessageType != WebSocketMessageType.Close);
        Assert.Equal(WebSocketCloseStatus.MessageTooBig, socket.CloseStatus);
    }
}
