using System.Net;
using System.Net.WebSockets;
using System.Text.Json;
using Jackdaw.Server.Tests.Infrastructure;

namespace Jackdaw.Server.Tests.Indexing;

/// <summary>The indexing performance live feed, <c>/databases/{db}/indexes/performance/live</c> (WebSocket).</summary>
public sealed class IndexingPerformanceFeedTests(ServerFixture fixture) : IClassFixture<ServerFixture>
{
    private static readonly TimeSpan Wait = TimeSpan.FromSeconds(30);

    private HttpClient Client => fixture.Client;

    private async Task<ClientWebSocket> ConnectAsync(string db)
    {
        var socket = new ClientWebSocket();
        var server = Client.BaseAddress!;
        await socket.ConnectAsync(new Uri($"ws://{server.Authority}/databases/{db}/indexes/performance/live"), CancellationToken.None);
        return socket;
    }

    private static async Task<JsonElement?> ReceiveAsync(WebSocket socket)
    {
        using var timeout = new CancellationTokenSource(Wait);
        var buffer = new byte[64 * 1024];
        using var message = new MemoryStream();
        ValueWebSocketReceiveResult result;
        do
        {
            result = await socket.ReceiveAsync(buffer.AsMemory(), timeout.Token);
            if (result.MessageType == WebSocketMessageType.Close)
            {
                return null;
            }
            message.Write(buffer, 0, result.Count);
        }
        while (!result.EndOfMessage);
        return JsonDocument.Parse(message.ToArray()).RootElement.Clone();
    }

    [Fact]
    public async Task EachNewBatchArrivesAsItCompletes()
    {
        var db = await fixture.CreateDatabaseAsync();
        using var socket = await ConnectAsync(db);
        using (var put = await Client.PutAsync($"/databases/{db}/admin/indexes", Api.Json("{\"Indexes\":[{\"Name\":\"Orders/ByCompany\",\"Maps\":[\"map('Orders', o => ({ Company: o.Company }))\"]}]}")))
        {
            Assert.Equal(HttpStatusCode.Created, put.StatusCode);
        }
        using (var bulk = await Client.PostAsync($"/databases/{db}/bulk_docs", Api.Json("{\"Commands\":[{\"Type\":\"PUT\",\"Id\":\"orders/1\",\"Document\":{\"Company\":\"companies/1\",\"@metadata\":{\"@collection\":\"Orders\"}}}]}")))
        {
            Assert.Equal(HttpStatusCode.OK, bulk.StatusCode);
        }
        var inputs = 0L;
        while (inputs == 0)
        {
            var message = await ReceiveAsync(socket) ?? throw new InvalidOperationException("The server closed the feed.");
            var index = Assert.Single(message.EnumerateArray());
            Assert.Equal("Orders/ByCompany", index.GetProperty("Name").GetString());
            foreach (var batch in index.GetProperty("Performance").EnumerateArray())
            {
                Assert.True(batch.GetProperty("DurationInMs").GetDouble() >= 0);
                inputs += batch.GetProperty("InputCount").GetInt64();
            }
        }
        Assert.Equal(1, inputs);
    }

    [Fact]
    public async Task TheServerAnswersTheClientsClose()
    {
        var db = await fixture.CreateDatabaseAsync();
        using var socket = await ConnectAsync(db);
        using var timeout = new CancellationTokenSource(Wait);
        await socket.CloseAsync(WebSocketCloseStatus.NormalClosure, "bye", timeout.Token);
        Assert.Equal(WebSocketState.Closed, socket.State);
        Assert.Equal(WebSocketCloseStatus.NormalClosure, socket.CloseStatus);
    }

    [Fact]
    public async Task APlainGetIsToldTheRouteIsAWebSocket()
    {
        var db = await fixture.CreateDatabaseAsync();
        using var response = await Client.GetAsync($"/databases/{db}/indexes/performance/live");
        var message = await Api.AssertErrorAsync(response, HttpStatusCode.BadRequest, "BadRequestException");
        Assert.Equal("This route is a WebSocket: connect with ws://.../databases/{db}/indexes/performance/live.", message);
    }
}
