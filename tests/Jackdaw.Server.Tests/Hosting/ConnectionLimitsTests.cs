using System.Net;
using Jackdaw.Server.Tests.Infrastructure;
using Microsoft.Extensions.Logging;

namespace Jackdaw.Server.Tests.Hosting;

/// <summary>
/// Connections that send nothing, and more connections than <c>Limits:MaxConcurrentConnections</c>:
/// each is closed cleanly while other clients are served. Each test runs its own server.
/// </summary>
public sealed class ConnectionLimitsTests
{
    private static readonly TimeSpan Generous = TimeSpan.FromSeconds(60);

    private const string Get = "GET /build/version HTTP/1.1\r\nHost: test\r\n\r\n";

    /// <summary>The answer to a GET on a new connection; empty when the server closed it unanswered.</summary>
    private static async Task<string> AnswerAsync(Uri server)
    {
        using var connection = await RawConnection.OpenAsync(server);
        try
        {
            await connection.SendAsync(Get);
        }
        catch (IOException)
        {
            return string.Empty; // closed before the request was sent
        }
        return await connection.ReadResponseAsync(Generous);
    }

    private static async Task<bool> ServedAsync(Uri server) =>
        (await AnswerAsync(server)).StartsWith("HTTP/1.1 200 ", StringComparison.Ordinal);

    [Fact]
    public async Task AThousandConnectionsThatSendNothingDelayNoOtherClientAndAreClosedWhenIdleTooLong()
    {
        await using var server = await InProcessServer.StartAsync("--Limits:KeepAliveTimeout=15");
        var idle = new List<RawConnection>();
        try
        {
            for (var i = 0; i < 1000; i++)
            {
                idle.Add(await RawConnection.OpenAsync(server.Client.BaseAddress!));
            }

            // Another client is served as if they were not there.
            var requests = Enumerable.Range(0, 20).Select(async i =>
            {
                using var response = await server.Client.GetAsync("/build/version");
                return response.StatusCode;
            });
            Assert.All(await Task.WhenAll(requests).WaitAsync(Generous), status => Assert.Equal(HttpStatusCode.OK, status));

            // Past the keep-alive timeout each is closed by the server, unanswered: no reset, nothing logged.
            var closed = await Task.WhenAll(idle.Select(connection => connection.ClosedByServerAsync(TimeSpan.FromMinutes(2))));
            Assert.All(closed, Assert.True);
            Assert.DoesNotContain(server.Logs.Records, record => record.Level >= LogLevel.Warning);
            Assert.True(await ServedAsync(server.Client.BaseAddress!));
        }
        finally
        {
            idle.ForEach(connection => connection.Dispose());
        }
    }

    [Fact]
    public async Task AConnectionOverTheLimitIsClosedUnansweredAndOneGetsInOnceAnotherLeaves()
    {
        const int max = 5;
        await using var server = await InProcessServer.StartAsync($"--Limits:MaxConcurrentConnections={max}");
        var address = server.Client.BaseAddress!;
        var open = new List<RawConnection>();
        try
        {
            // Each answered once: the server has counted it.
            for (var i = 0; i < max; i++)
            {
                var connection = await RawConnection.OpenAsync(address);
                open.Add(connection);
                await connection.SendAsync(Get);
                Assert.StartsWith("HTTP/1.1 200 ", await connection.ReadResponseAsync(Generous), StringComparison.Ordinal);
            }

            Assert.Equal(string.Empty, await AnswerAsync(address));

            // The open ones are still served.
            await open[0].SendAsync(Get);
            Assert.StartsWith("HTTP/1.1 200 ", await open[0].ReadResponseAsync(Generous), StringComparison.Ordinal);

            open[^1].Dispose();
            open.RemoveAt(open.Count - 1);
            await Poll.UntilAsync(() => ServedAsync(address), Generous, "a new connection to be served once one left");
        }
        finally
        {
            open.ForEach(connection => connection.Dispose());
        }
    }
}
