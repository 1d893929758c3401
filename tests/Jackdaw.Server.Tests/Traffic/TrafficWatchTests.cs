using System.Net;
using System.Net.WebSockets;
using System.Security.Cryptography.X509Certificates;
using System.Text.Json;
using Jackdaw.Server.Security;
using Jackdaw.Server.Tests.Infrastructure;
using Jackdaw.Server.Traffic;

namespace Jackdaw.Server.Tests.Traffic;

/// <summary>Traffic watch, <c>/admin/traffic-watch</c> (WebSocket): one message per finished request.</summary>
public sealed class TrafficWatchTests
{
    private static readonly TimeSpan Wait = TimeSpan.FromSeconds(30);

    private static async Task<ClientWebSocket> WatchAsync(InProcessServer server, string query = "", int watchers = 1)
    {
        var socket = new ClientWebSocket();
        await socket.ConnectAsync(new Uri($"ws://{server.Client.BaseAddress!.Authority}/admin/traffic-watch{query}"), CancellationToken.None);
        // The upgrade is answered before the connection is registered: wait for it, or a request
        // made at once could finish unseen.
        await Poll.UntilAsync(() => Task.FromResult(server.Host.Server.TrafficWatch.ConnectionCount == watchers), Wait, "the watcher to be registered");
        return socket;
    }

    private static async Task<JsonElement?> ReceiveAsync(WebSocket socket)
    {
        using var timeout = new CancellationTokenSource(Wait);
        var buffer = new byte[16 * 1024];
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

    /// <summary>Reads messages until one for <paramref name="requestUri"/>; returns it and those before it.</summary>
    private static async Task<(JsonElement Found, List<JsonElement> Before)> ReceiveUntilAsync(WebSocket socket, string requestUri)
    {
        var before = new List<JsonElement>();
        while (true)
        {
            var message = await ReceiveAsync(socket) ?? throw new InvalidOperationException("The server closed the feed.");
            if (message.TryGetProperty("RequestUri", out var uri) && uri.GetString() == requestUri)
            {
                return (message, before);
            }
            before.Add(message);
        }
    }

    private static async Task CreateDatabaseAsync(HttpClient client, string name)
    {
        using var response = await client.PutAsync($"/admin/databases?name={name}", null);
        Assert.Equal(HttpStatusCode.Created, response.StatusCode);
    }

    [Fact]
    public async Task EachFinishedRequestArrivesWithRavenDbsFields()
    {
        await using var server = await InProcessServer.StartAsync();
        await CreateDatabaseAsync(server.Client, "shop");
        using var socket = await WatchAsync(server);

        const string body = "{\"Name\":\"Ann\",\"@metadata\":{\"@collection\":\"People\"}}";
        using (var put = await server.Client.PutAsync("/databases/shop/docs?id=people/1", Api.Json(body)))
        {
            Assert.Equal(HttpStatusCode.Created, put.StatusCode);
        }
        using (var missing = await server.Client.GetAsync("/databases/shop/docs?id=people/404"))
        {
            Assert.Equal(HttpStatusCode.NotFound, missing.StatusCode);
        }

        var (written, _) = await ReceiveUntilAsync(socket, "/databases/shop/docs?id=people/1");
        Assert.Equal("Http", written.GetProperty("TrafficWatchType").GetString());
        Assert.Equal("PUT", written.GetProperty("HttpMethod").GetString());
        Assert.Equal(201, written.GetProperty("ResponseStatusCode").GetInt32());
        Assert.Equal("shop", written.GetProperty("DatabaseName").GetString());
        Assert.Equal("Documents", written.GetProperty("Type").GetString());
        Assert.Equal(System.Text.Encoding.UTF8.GetByteCount(body), written.GetProperty("RequestSizeInBytes").GetInt64());
        Assert.Equal($"http://{server.Client.BaseAddress!.Authority}/databases/shop/docs?id=people/1", written.GetProperty("AbsoluteUri").GetString());
        Assert.Equal("127.0.0.1", written.GetProperty("ClientIP").GetString());
        Assert.True(written.GetProperty("ElapsedMilliseconds").GetInt64() >= 0);
        Assert.True(written.GetProperty("RequestId").GetInt64() > 0);
        Assert.True(DateTime.UtcNow - written.GetProperty("TimeStamp").GetDateTime().ToUniversalTime() < TimeSpan.FromMinutes(5));

        var (notFound, between) = await ReceiveUntilAsync(socket, "/databases/shop/docs?id=people/404");
        Assert.Empty(between);
        Assert.Equal("GET", notFound.GetProperty("HttpMethod").GetString());
        Assert.Equal(404, notFound.GetProperty("ResponseStatusCode").GetInt32());
        Assert.True(notFound.GetProperty("RequestId").GetInt64() > written.GetProperty("RequestId").GetInt64());
    }

    [Fact]
    public async Task AServerRouteHasNoDatabaseAndTheWatchersOwnConnectionsAreNotReported()
    {
        await using var server = await InProcessServer.StartAsync();
        using var socket = await WatchAsync(server);
        using (var other = await WatchAsync(server, watchers: 2))
        {
            await other.CloseAsync(WebSocketCloseStatus.NormalClosure, "bye", CancellationToken.None);
        }
        await Poll.UntilAsync(() => Task.FromResult(server.Host.Server.TrafficWatch.ConnectionCount == 1), Wait, "the second watcher to leave");
        using (var version = await server.Client.GetAsync("/build/version"))
        {
            Assert.Equal(HttpStatusCode.OK, version.StatusCode);
        }

        var (found, before) = await ReceiveUntilAsync(socket, "/build/version");
        Assert.Equal(JsonValueKind.Null, found.GetProperty("DatabaseName").ValueKind);
        Assert.Equal("None", found.GetProperty("Type").GetString());
        Assert.DoesNotContain(before, m => m.GetProperty("RequestUri").GetString()!.StartsWith(TrafficWatch.Route, StringComparison.Ordinal));
    }

    [Fact]
    public async Task ResourceNameLimitsTheFeedToOneDatabase()
    {
        await using var server = await InProcessServer.StartAsync();
        await CreateDatabaseAsync(server.Client, "alpha");
        await CreateDatabaseAsync(server.Client, "beta");
        using var socket = await WatchAsync(server, "?resourceName=ALPHA");

        // Sequential requests finish in this order, and a connection's messages keep it: when the
        // last one arrives, any of the others that was sent came before it.
        foreach (var uri in new[] { "/databases/beta/docs?id=x", "/build/version", "/databases/alpha/docs?id=a", "/databases/beta/stats", "/databases/alpha/docs?id=last" })
        {
            using var response = await server.Client.GetAsync(uri);
        }

        var (last, before) = await ReceiveUntilAsync(socket, "/databases/alpha/docs?id=last");
        Assert.Equal("alpha", last.GetProperty("DatabaseName").GetString());
        var seen = Assert.Single(before);
        Assert.Equal("/databases/alpha/docs?id=a", seen.GetProperty("RequestUri").GetString());
    }

    [Fact]
    public async Task ASlowReaderLosesTheOldestAndIsToldHowMany()
    {
        await using var server = await InProcessServer.StartAsync();
        using var socket = await WatchAsync(server);
        var watch = server.Host.Server.TrafficWatch;

        // The client reads nothing until all are offered: 200,000 messages of ~400 bytes are far
        // more than the socket buffers hold, so the sender blocks and its queue overflows.
        const int published = 200_000;
        for (var i = 0; i < published; i++)
        {
            watch.Publish(new TrafficWatchChange
            {
                TimeStamp = DateTime.UtcNow,
                RequestId = watch.NextRequestId(),
                HttpMethod = "GET",
                ElapsedMilliseconds = 0,
                ResponseStatusCode = 200,
                RequestUri = "/made-up/" + i,
                AbsoluteUri = "http://127.0.0.1/made-up/" + i,
                Type = TrafficWatchChangeType.None,
            });
        }

        long received = 0;
        long dropped = 0;
        var lastIndex = -1L;
        while (received + dropped < published)
        {
            var message = await ReceiveAsync(socket) ?? throw new InvalidOperationException("The server closed the feed.");
            if (message.GetProperty("Type").GetString() == "Dropped")
            {
                dropped += message.GetProperty("Count").GetInt64();
                continue;
            }
            var index = long.Parse(message.GetProperty("RequestUri").GetString()!["/made-up/".Length..], System.Globalization.CultureInfo.InvariantCulture);
            Assert.True(index > lastIndex, "The messages kept their order.");
            lastIndex = index;
            received++;
        }
        Assert.Equal(published, received + dropped);
        Assert.True(dropped > 0);
        Assert.Equal(published - 1, lastIndex);
    }

    [Fact]
    public async Task APlainGetOrAnUnknownParameterOrABadNameIsA400()
    {
        await using var server = await InProcessServer.StartAsync();
        using (var plain = await server.Client.GetAsync("/admin/traffic-watch"))
        {
            var message = await Api.AssertErrorAsync(plain, HttpStatusCode.BadRequest, "BadRequestException");
            Assert.StartsWith("This route is a WebSocket: ", message, StringComparison.Ordinal);
        }
        using (var unknown = await server.Client.GetAsync("/admin/traffic-watch?database=shop"))
        {
            var message = await Api.AssertErrorAsync(unknown, HttpStatusCode.BadRequest, "BadRequestException");
            Assert.Contains("'database' is not a parameter", message, StringComparison.Ordinal);
        }
        using (var bad = await server.Client.GetAsync("/admin/traffic-watch?resourceName=a%2Fb"))
        {
            var message = await Api.AssertErrorAsync(bad, HttpStatusCode.BadRequest, "BadRequestException");
            Assert.Contains("resourceName 'a/b' is not a database name", message, StringComparison.Ordinal);
        }
        Assert.Equal(0, server.Host.Server.TrafficWatch.ConnectionCount);
    }

    [Fact]
    public async Task OnASecuredServerOnlyAnOperatorMayWatch()
    {
        await using var server = await SecuredServer.StartAsync();
        var admin = TestCertificates.Client("traffic-db-admin");
        server.Register(admin, SecurityClearance.ValidUser, ("shop", DatabaseAccess.Admin));
        var operatorCertificate = TestCertificates.Client("traffic-operator");
        server.Register(operatorCertificate, SecurityClearance.Operator);
        var uri = new Uri(server.Url.Replace("https://", "wss://", StringComparison.Ordinal) + "/admin/traffic-watch");

        using (var refused = Secured(admin))
        {
            var failure = await Assert.ThrowsAnyAsync<WebSocketException>(() => refused.ConnectAsync(uri, CancellationToken.None));
            Assert.Contains("403", failure.Message, StringComparison.Ordinal);
        }
        using (var anonymous = Secured(null))
        {
            var failure = await Assert.ThrowsAnyAsync<WebSocketException>(() => anonymous.ConnectAsync(uri, CancellationToken.None));
            Assert.Contains("401", failure.Message, StringComparison.Ordinal);
        }
        using var watcher = Secured(operatorCertificate);
        await watcher.ConnectAsync(uri, CancellationToken.None);
        await Poll.UntilAsync(() => Task.FromResult(server.Server.Host.Server.TrafficWatch.ConnectionCount == 1), Wait, "the watcher to be registered");
        using (var version = await server.Client(admin).GetAsync("/build/version"))
        {
            Assert.Equal(HttpStatusCode.OK, version.StatusCode);
        }
        var (found, _) = await ReceiveUntilAsync(watcher, "/build/version");
        Assert.Equal(admin.Thumbprint, found.GetProperty("CertificateThumbprint").GetString());

        static ClientWebSocket Secured(X509Certificate2? certificate)
        {
            var socket = new ClientWebSocket();
            socket.Options.RemoteCertificateValidationCallback = (_, _, _, _) => true;
            if (certificate is not null)
            {
                socket.Options.ClientCertificates = [certificate];
            }
            return socket;
        }
    }
}
