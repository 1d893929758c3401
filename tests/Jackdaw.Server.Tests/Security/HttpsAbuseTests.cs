using System.Net;
using Jackdaw.Server.Tests.Infrastructure;
using Microsoft.Extensions.Logging;

namespace Jackdaw.Server.Tests.Security;

/// <summary>
/// What a secured server's HTTPS port gets that is not TLS, or not yet: plain HTTP, a garbage
/// ClientHello, a thousand connections that send nothing. Each is closed by the server, nothing is
/// logged at Warning or above, and a client that speaks TLS is served meanwhile.
/// </summary>
public sealed class HttpsAbuseTests : IAsyncLifetime
{
    private static readonly TimeSpan Generous = TimeSpan.FromSeconds(60);

    private SecuredServer _server = null!;
    private int _startupRecords;

    private Uri Address => new(_server.Url);

    public async Task InitializeAsync()
    {
        _server = await SecuredServer.StartAsync();
        // Startup's own records (Kestrel warns that the https endpoints override the Urls setting) are not the test's.
        _startupRecords = _server.Server.Logs.Records.Count;
    }

    public async Task DisposeAsync() => await _server.DisposeAsync();

    private async Task AssertServedAsync()
    {
        using var response = await _server.Admin.GetAsync("/admin/stats").WaitAsync(Generous);
        Assert.Equal(HttpStatusCode.OK, response.StatusCode);
    }

    private void AssertNothingLogged() =>
        Assert.DoesNotContain(_server.Server.Logs.Records.Skip(_startupRecords), record => record.Level >= LogLevel.Warning);

    [Fact]
    public async Task PlainHttpToTheHttpsPortIsClosedAndOthersAreServed()
    {
        using var plain = await RawConnection.OpenAsync(Address);
        await plain.SendAsync("GET /admin/stats HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
        await AssertServedAsync();
        // Not a word in the clear: the connection is closed.
        var received = await plain.ReadUntilClosedAsync(Generous);
        Assert.NotNull(received);
        Assert.Empty(received);
        await AssertServedAsync();
        AssertNothingLogged();
    }

    [Fact]
    public async Task AGarbageClientHelloIsClosedAndOthersAreServed()
    {
        using var garbage = await RawConnection.OpenAsync(Address);
        // A TLS handshake record header (type 22, TLS 1.0, 512 bytes) whose content is not a ClientHello.
        var record = new byte[5 + 512];
        (record[0], record[1], record[2], record[3], record[4]) = (0x16, 0x03, 0x01, 0x02, 0x00);
        new Random(28).NextBytes(record.AsSpan(5));
        record[5] = 0x01; // says ClientHello, then nonsense
        await garbage.Stream.WriteAsync(record);
        await AssertServedAsync();
        // A fatal TLS alert (OpenSSL sends illegal_parameter), then the close.
        var received = await garbage.ReadUntilClosedAsync(Generous);
        Assert.NotNull(received);
        Assert.True(received.Length == 0 || (received.Length == 7 && received[0] == 0x15 && received[5] == 2), $"a fatal TLS alert or nothing, got {Convert.ToHexString(received)}");
        await AssertServedAsync();
        AssertNothingLogged();
    }

    [Fact]
    public async Task AThousandConnectionsThatSendNothingAreClosedAfterTheHandshakeTimeoutWhileOthersAreServed()
    {
        var idle = new List<RawConnection>();
        try
        {
            for (var i = 0; i < 1000; i++)
            {
                idle.Add(await RawConnection.OpenAsync(Address));
            }
            await Task.WhenAll(Enumerable.Range(0, 20).Select(_ => AssertServedAsync()));

            // Each is dropped once its TLS handshake has taken too long (HttpsEndpoints.HandshakeTimeout).
            var closed = await Task.WhenAll(idle.Select(connection => connection.ClosedByServerAsync(TimeSpan.FromMinutes(2))));
            Assert.All(closed, Assert.True);
            await AssertServedAsync();
            AssertNothingLogged();
        }
        finally
        {
            idle.ForEach(connection => connection.Dispose());
        }
    }
}
