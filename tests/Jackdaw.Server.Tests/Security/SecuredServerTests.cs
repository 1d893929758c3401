using System.Net;
using Jackdaw.Server.Hosting;
using Jackdaw.Server.Security;
using Jackdaw.Server.Tests.Infrastructure;

namespace Jackdaw.Server.Tests.Security;

/// <summary>A secured server: HTTPS, every request identified by its client certificate, refusals that say why.</summary>
public sealed class SecuredServerTests : IAsyncLifetime
{
    private SecuredServer _server = null!;

    public async Task InitializeAsync() => _server = await SecuredServer.StartAsync();

    public async Task DisposeAsync() => await _server.DisposeAsync();

    [Fact]
    public async Task TheServerCertificateIsClusterAdmin()
    {
        Assert.StartsWith("https://127.0.0.1:", _server.Url, StringComparison.Ordinal);
        using var created = await _server.Admin.PutAsync("/admin/databases?name=admins", null);
        Assert.Equal(HttpStatusCode.Created, created.StatusCode);
        using var stats = await _server.Admin.GetAsync("/admin/stats");
        Assert.Equal(HttpStatusCode.OK, stats.StatusCode);
    }

    [Fact]
    public async Task NoClientCertificateIs401AndTheVersionStillAnswers()
    {
        var anonymous = _server.Client(null);
        using var version = await anonymous.GetAsync("/build/version");
        Assert.Equal(HttpStatusCode.OK, version.StatusCode);
        using var databases = await anonymous.GetAsync("/databases");
        var message = await Api.AssertErrorAsync(databases, HttpStatusCode.Unauthorized, ErrorTypes.Authorization);
        Assert.Contains("requires a client certificate", message, StringComparison.Ordinal);
    }

    [Fact]
    public async Task AnUnknownCertificateIs403NamingIt()
    {
        using var stranger = TestCertificates.Client("stranger");
        using var response = await _server.Client(stranger).GetAsync("/databases");
        var message = await Api.AssertErrorAsync(response, HttpStatusCode.Forbidden, ErrorTypes.Authorization);
        Assert.Contains("not registered", message, StringComparison.Ordinal);
        Assert.Contains(stranger.Thumbprint, message, StringComparison.Ordinal);
    }

    [Fact]
    public async Task ExpiredAndNotYetValidCertificatesAre403SayingWhich()
    {
        using var expired = TestCertificates.Client("expired", notBefore: DateTimeOffset.UtcNow.AddDays(-10), notAfter: DateTimeOffset.UtcNow.AddDays(-1));
        using var future = TestCertificates.Client("future", notBefore: DateTimeOffset.UtcNow.AddDays(1), notAfter: DateTimeOffset.UtcNow.AddDays(10));
        _server.Register(expired, SecurityClearance.Operator);
        _server.Register(future, SecurityClearance.Operator);
        using var old = await _server.Client(expired).GetAsync("/admin/stats");
        Assert.Contains("expired", await Api.AssertErrorAsync(old, HttpStatusCode.Forbidden, ErrorTypes.Authorization), StringComparison.Ordinal);
        using var early = await _server.Client(future).GetAsync("/admin/stats");
        Assert.Contains("not valid before", await Api.AssertErrorAsync(early, HttpStatusCode.Forbidden, ErrorTypes.Authorization), StringComparison.Ordinal);
    }

    [Fact]
    public async Task AValidUserReachesOnlyItsDatabasesWithItsAccess()
    {
        using (await _server.Admin.PutAsync("/admin/databases?name=shop", null))
        using (await _server.Admin.PutAsync("/admin/databases?name=payroll", null))
        {
        }
        using var reader = TestCertificates.Client("reader");
        _server.Register(reader, SecurityClearance.ValidUser, ("Shop", DatabaseAccess.Read));
        var client = _server.Client(reader);

        using var get = await client.GetAsync("/databases/shop/docs?id=missing");
        Assert.Equal(HttpStatusCode.NotFound, get.StatusCode);
        using var put = await client.PutAsync("/databases/shop/docs?id=a", Api.Json("{}"));
        var message = await Api.AssertErrorAsync(put, HttpStatusCode.Forbidden, ErrorTypes.Authorization);
        Assert.Contains("has Read access to database 'shop'", message, StringComparison.Ordinal);
        Assert.Contains("ReadWrite", message, StringComparison.Ordinal);

        using var other = await client.GetAsync("/databases/payroll/docs?id=a");
        Assert.Contains("no access to database 'payroll'", await Api.AssertErrorAsync(other, HttpStatusCode.Forbidden, ErrorTypes.Authorization), StringComparison.Ordinal);
        using var admin = await client.GetAsync("/admin/stats");
        Assert.Contains("needs Operator", await Api.AssertErrorAsync(admin, HttpStatusCode.Forbidden, ErrorTypes.Authorization), StringComparison.Ordinal);
    }

    [Fact]
    public async Task ARenewedCertificateWithTheSameKeyAndIssuerKeepsItsAccess()
    {
        using var key = System.Security.Cryptography.RSA.Create(2048);
        using var first = TestCertificates.Client("renewing", issuer: _server.ServerCertificate, key: key);
        using var renewed = TestCertificates.Client("renewing", issuer: _server.ServerCertificate, key: key, notAfter: DateTimeOffset.UtcNow.AddYears(2));
        Assert.NotEqual(first.Thumbprint, renewed.Thumbprint);
        _server.Register(first, SecurityClearance.Operator);
        using var response = await _server.Client(renewed).GetAsync("/admin/stats");
        Assert.Equal(HttpStatusCode.OK, response.StatusCode);

        // The same key under another issuer is someone else.
        using var other = TestCertificates.Client("renewing", key: key);
        using var refused = await _server.Client(other).GetAsync("/admin/stats");
        Assert.Equal(HttpStatusCode.Forbidden, refused.StatusCode);
    }

    [Fact]
    public async Task AWebSocketIsRefusedBeforeTheUpgrade()
    {
        using (await _server.Admin.PutAsync("/admin/databases?name=feeds", null))
        {
        }
        using var socket = new System.Net.WebSockets.ClientWebSocket();
        socket.Options.RemoteCertificateValidationCallback = (_, _, _, _) => true;
        var uri = new Uri(_server.Url.Replace("https://", "wss://", StringComparison.Ordinal) + "/databases/feeds/changes");
        var failure = await Assert.ThrowsAnyAsync<System.Net.WebSockets.WebSocketException>(() => socket.ConnectAsync(uri, CancellationToken.None));
        Assert.Contains("401", failure.Message, StringComparison.Ordinal);
    }
}
