using System.Net;
using System.Text.Json;
using Jackdaw.Server.Tests.Infrastructure;
using Microsoft.Extensions.Logging;

namespace Jackdaw.Server.Tests.Hosting;

public sealed class ServerFixture : IAsyncLifetime
{
    public InProcessServer Server { get; private set; } = null!;

    public async Task InitializeAsync() => Server = await InProcessServer.StartAsync("--max-body-size", "1048576");

    public async Task DisposeAsync() => await Server.DisposeAsync();
}

public class HostTests(ServerFixture fixture) : IClassFixture<ServerFixture>
{
    private HttpClient Client => fixture.Server.Client;

    private static async Task<JsonElement> ReadJsonAsync(HttpResponseMessage response)
    {
        Assert.Equal("application/json", response.Content.Headers.ContentType?.MediaType);
        var text = await response.Content.ReadAsStringAsync();
        return JsonDocument.Parse(text).RootElement.Clone();
    }

    private static async Task AssertErrorAsync(HttpResponseMessage response, HttpStatusCode status, string type)
    {
        Assert.Equal(status, response.StatusCode);
        var body = await ReadJsonAsync(response);
        Assert.Equal(type, body.GetProperty("Type").GetString());
        var message = body.GetProperty("Message").GetString();
        Assert.False(string.IsNullOrWhiteSpace(message));
        Assert.DoesNotContain("   at ", message, StringComparison.Ordinal);
        // Type, Message, and Error (the same text, where RavenDB's clients read it): nothing else.
        Assert.Equal(message, body.GetProperty("Error").GetString());
        Assert.Equal(3, body.EnumerateObject().Count());
    }

    [Fact]
    public async Task BuildVersionReportsVersionAndCommit()
    {
        using var response = await Client.GetAsync("/build/version");
        Assert.Equal(HttpStatusCode.OK, response.StatusCode);
        var body = await ReadJsonAsync(response);
        var version = body.GetProperty("Version").GetString()!;
        Assert.Matches(@"^\d+\.\d+\.\d+", version);
        Assert.StartsWith(version, body.GetProperty("FullVersion").GetString(), StringComparison.Ordinal);
        Assert.False(string.IsNullOrEmpty(body.GetProperty("CommitHash").GetString()));
        // RavenDB's BuildNumber fields: major.minor, and the parts as one number.
        var parts = version.Split('.').Select(int.Parse).ToArray();
        Assert.Equal($"{parts[0]}.{parts[1]}", body.GetProperty("ProductVersion").GetString());
        Assert.Equal((parts[0] * 10_000) + (parts[1] * 100) + parts[2], body.GetProperty("BuildVersion").GetInt32());
    }

    [Fact]
    public async Task HeadOfAGetRouteHasHeadersButNoBody()
    {
        using var request = new HttpRequestMessage(HttpMethod.Head, "/build/version");
        using var response = await Client.SendAsync(request);
        Assert.Equal(HttpStatusCode.OK, response.StatusCode);
        Assert.Empty(await response.Content.ReadAsByteArrayAsync());
    }

    [Fact]
    public async Task AdminStatsReportsCountersThatMove()
    {
        using var first = await Client.GetAsync("/admin/stats");
        var before = (await ReadJsonAsync(first)).GetProperty("RequestsServed").GetInt64();
        using (await Client.GetAsync("/build/version"))
        {
        }
        using var second = await Client.GetAsync("/admin/stats");
        var stats = await ReadJsonAsync(second);
        Assert.True(stats.GetProperty("RequestsServed").GetInt64() > before);
        Assert.True(stats.GetProperty("UptimeSeconds").GetDouble() >= 0);
        Assert.True(stats.GetProperty("WorkingSetBytes").GetInt64() > 0);
        Assert.True(stats.GetProperty("AllocatedBytes").GetInt64() > 0);
        var gc = stats.GetProperty("GcCollections");
        Assert.True(gc.GetProperty("Gen0").GetInt32() >= gc.GetProperty("Gen1").GetInt32());
    }

    [Theory]
    [InlineData("/no/such/route")]
    [InlineData("/admin/stats/extra")]
    [InlineData("//admin/stats")]
    [InlineData("/%C3%A9t%C3%A9")]
    [InlineData("/admin/stats%2Fx")]
    public async Task UnknownPathIs404WithJsonError(string path)
    {
        // Concatenated, not resolved: "//admin/stats" must reach the server as a path, not become a host name.
        using var response = await Client.GetAsync(new Uri(Client.BaseAddress!.GetLeftPart(UriPartial.Authority) + path));
        await AssertErrorAsync(response, HttpStatusCode.NotFound, "RouteNotFoundException");
    }

    [Fact]
    public async Task WrongMethodIs405WithAllowHeader()
    {
        using var response = await Client.PostAsync("/admin/stats", new StringContent("{}"));
        Assert.Equal("GET, HEAD", string.Join(", ", response.Content.Headers.Allow));
        await AssertErrorAsync(response, HttpStatusCode.MethodNotAllowed, "MethodNotAllowedException");
    }

    [Fact]
    public async Task UnknownMethodIs405()
    {
        using var request = new HttpRequestMessage(new HttpMethod("BREW"), "/build/version");
        using var response = await Client.SendAsync(request);
        await AssertErrorAsync(response, HttpStatusCode.MethodNotAllowed, "MethodNotAllowedException");
    }

    [Theory]
    [InlineData("/test/throw")]
    [InlineData("/test/throw-async")]
    public async Task HandlerExceptionIs500WithoutStackTraceAndIsLogged(string path)
    {
        using var response = await Client.GetAsync(path);
        await AssertErrorAsync(response, HttpStatusCode.InternalServerError, "InternalServerErrorException");
        Assert.Contains(
            fixture.Server.Logs.Records,
            r => r.Level == LogLevel.Error && r.Exception is InvalidOperationException && r.Message.Contains(path, StringComparison.Ordinal));
    }

    [Fact]
    public async Task WebSocketsAreAcceptedOnTheHttpPort()
    {
        using var socket = new System.Net.WebSockets.ClientWebSocket();
        var uri = new UriBuilder(Client.BaseAddress!) { Scheme = "ws", Path = "/test/websocket-echo" }.Uri;
        using var timeout = new CancellationTokenSource(TimeSpan.FromSeconds(30));
        await socket.ConnectAsync(uri, timeout.Token);
        var message = System.Text.Encoding.UTF8.GetBytes("{\"Type\":\"Ping\"}");
        await socket.SendAsync(message, System.Net.WebSockets.WebSocketMessageType.Text, endOfMessage: true, timeout.Token);
        var buffer = new byte[256];
        var received = await socket.ReceiveAsync(buffer, timeout.Token);
        Assert.Equal(message, buffer[..received.Count]);
        await socket.CloseAsync(System.Net.WebSockets.WebSocketCloseStatus.NormalClosure, "done", timeout.Token);
        Assert.Equal(System.Net.WebSockets.WebSocketState.Closed, socket.State);
    }

    [Fact]
    public async Task AWebSocketUpgradeToAnUnknownRouteIs404()
    {
        using var socket = new System.Net.WebSockets.ClientWebSocket();
        var uri = new UriBuilder(Client.BaseAddress!) { Scheme = "ws", Path = "/no/such/socket" }.Uri;
        var error = await Assert.ThrowsAsync<System.Net.WebSockets.WebSocketException>(() => socket.ConnectAsync(uri, CancellationToken.None));
        Assert.Contains("404", error.Message, StringComparison.Ordinal);
    }

    [Fact]
    public async Task DomainExceptionBecomesItsStatusAndType()
    {
        using var response = await Client.PostAsync("/test/bad-request", new StringContent("x"));
        await AssertErrorAsync(response, HttpStatusCode.BadRequest, "BadRequestException");
    }

    [Fact]
    public async Task BodyOverTheConfiguredLimitIs413()
    {
        // Expect: 100-continue lets the server answer before the body is sent; without it the
        // client may still be writing when the server closes the connection.
        using var request = new HttpRequestMessage(HttpMethod.Post, "/test/body") { Content = new ByteArrayContent(new byte[2 * 1024 * 1024]) };
        request.Headers.ExpectContinue = true;
        using var response = await Client.SendAsync(request);
        await AssertErrorAsync(response, HttpStatusCode.RequestEntityTooLarge, "PayloadTooLargeException");
        // The ceiling is lower than the route's own limit: the message names the ceiling.
        Assert.Contains("over 1,048,576 bytes, the largest request body allowed (MaxRequestBodySize; set it with --max-body-size or JACKDAW_MAXREQUESTBODYSIZE)", await response.Content.ReadAsStringAsync(), StringComparison.Ordinal);
    }

    [Fact]
    public async Task BodyUnderTheLimitIsRead()
    {
        using var response = await Client.PostAsync("/test/body", new ByteArrayContent(new byte[300_000]));
        Assert.Equal(300_000, (await ReadJsonAsync(response)).GetProperty("Bytes").GetInt64());
    }

    [Fact]
    public async Task CapturesReachTheHandlerAsDecodedByKestrel()
    {
        using var response = await Client.GetAsync("/test/echo/caf%C3%A9/a/%E6%97%A5/c");
        var body = await ReadJsonAsync(response);
        Assert.Equal("caf\u00e9", body.GetProperty("Segment").GetString());
        Assert.Equal("a/\u65e5/c", body.GetProperty("Rest").GetString());
    }

    [Fact]
    public async Task ServerKeepsServingAfterFailures()
    {
        for (var i = 0; i < 20; i++)
        {
            using (await Client.GetAsync("/test/throw"))
            {
            }
        }
        using var response = await Client.GetAsync("/build/version");
        Assert.Equal(HttpStatusCode.OK, response.StatusCode);
    }

    [Fact]
    public async Task ARequestWhoseClientLeftBeforeItsErrorAnswerIsCountedFinished()
    {
        var statistics = fixture.Server.Host.Server.Statistics;
        var served = statistics.RequestsServed;
        using (var cancel = new CancellationTokenSource())
        {
            var request = Client.GetAsync("/test/fail-after-abort", cancel.Token);
            await WaitUntilAsync(() => statistics.ActiveRequests == 1, "the request reached its handler");
            await cancel.CancelAsync();
            await Assert.ThrowsAnyAsync<OperationCanceledException>(() => request);
        }
        // The handler fails after the abort, and the pipeline cannot write its 500: the request
        // still ends (it stayed in ActiveRequests for good, and /admin/stats said so).
        await WaitUntilAsync(() => statistics.ActiveRequests == 0 && statistics.RequestsServed > served, "the request was counted finished");
    }

    private static async Task WaitUntilAsync(Func<bool> condition, string what)
    {
        var deadline = DateTime.UtcNow + TimeSpan.FromSeconds(30);
        while (!condition())
        {
            Assert.True(DateTime.UtcNow < deadline, "Timed out waiting until " + what);
            await Task.Delay(20);
        }
    }

    [Fact]
    public void DataFolderIsCreated() => Assert.True(Directory.Exists(fixture.Server.DataDir));
}
