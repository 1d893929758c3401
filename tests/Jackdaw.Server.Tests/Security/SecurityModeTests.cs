using Jackdaw.Server.Hosting;
using Jackdaw.Server.Tests.Infrastructure;

namespace Jackdaw.Server.Tests.Security;

/// <summary>Which addresses and certificates a server starts with, and the messages when it will not.</summary>
public sealed class SecurityModeTests
{
    private static string StartupError(params string[] args)
    {
        using var data = new TempFolder("jackdaw-mode");
        var e = Assert.ThrowsAny<InvalidOperationException>(() => JackdawHost.Create(["--data-dir", data.Path, .. args]));
        return e.Message;
    }

    [Fact]
    public void AnUnsecuredServerOnAPublicAddressRefusesToStartNamingTheSetting()
    {
        var message = StartupError("--urls", "http://0.0.0.0:0");
        Assert.Contains("Security:UnsecuredAccessAllowed=PublicNetwork", message, StringComparison.Ordinal);
    }

    [Fact]
    public async Task PublicNetworkAllowsItKnowingly()
    {
        await using var server = await InProcessServer.StartAsync("--urls", "http://0.0.0.0:0", "--Security:UnsecuredAccessAllowed", "PublicNetwork");
        Assert.StartsWith("http://0.0.0.0:", server.Host.Urls.Single(), StringComparison.Ordinal);
    }

    [Fact]
    public void HttpsWithoutACertificateAndHttpWithOneAreRefused()
    {
        Assert.Contains("no server certificate", StartupError("--urls", "https://127.0.0.1:0"), StringComparison.Ordinal);
        using var folder = new TempFolder("jackdaw-certs");
        var pfx = TestCertificates.WritePfx(TestCertificates.Server(), Path.Combine(folder.Path, "server.pfx"));
        Assert.Contains("https only", StartupError("--urls", "http://127.0.0.1:0", "--Security:Certificate:Path", pfx), StringComparison.Ordinal);
    }

    [Fact]
    public void ABadCertificateFileIsAStartupErrorNamingTheFileAndWhy()
    {
        using var folder = new TempFolder("jackdaw-certs");
        var garbage = Path.Combine(folder.Path, "garbage.pfx");
        File.WriteAllText(garbage, "not a certificate");
        Assert.Contains($"'{garbage}' cannot be read", StartupError("--urls", "https://127.0.0.1:0", "--Security:Certificate:Path", garbage), StringComparison.Ordinal);

        var missing = Path.Combine(folder.Path, "missing.pfx");
        Assert.Contains($"'{missing}'", StartupError("--urls", "https://127.0.0.1:0", "--Security:Certificate:Path", missing), StringComparison.Ordinal);

        using var server = TestCertificates.Server();
        var publicOnly = Path.Combine(folder.Path, "public.crt");
        File.WriteAllText(publicOnly, server.ExportCertificatePem());
        var noKey = StartupError("--urls", "https://127.0.0.1:0", "--Security:Certificate:Path", publicOnly);
        Assert.Contains(publicOnly, noKey, StringComparison.Ordinal);

        using var expired = TestCertificates.Server(notBefore: DateTimeOffset.UtcNow.AddDays(-30), notAfter: DateTimeOffset.UtcNow.AddDays(-1));
        var expiredPfx = TestCertificates.WritePfx(expired, Path.Combine(folder.Path, "expired.pfx"));
        Assert.Contains("expired on", StartupError("--urls", "https://127.0.0.1:0", "--Security:Certificate:Path", expiredPfx), StringComparison.Ordinal);

        var wrongPassword = TestCertificates.WritePfx(server, Path.Combine(folder.Path, "locked.pfx"), "right");
        Assert.Contains(wrongPassword, StartupError("--urls", "https://127.0.0.1:0", "--Security:Certificate:Path", wrongPassword, "--Security:Certificate:Password", "wrong"), StringComparison.Ordinal);
    }

    [Fact]
    public async Task APemCertificateAndKeyServe()
    {
        using var folder = new TempFolder("jackdaw-certs");
        using var certificate = TestCertificates.Server();
        var (crt, key) = TestCertificates.WritePem(certificate, folder.Path, "server");
        await using var server = await InProcessServer.StartAsync("--urls", "https://127.0.0.1:0", "--Security:Certificate:Path", crt, "--Security:Certificate:KeyPath", key);
        using var handler = new SocketsHttpHandler();
        handler.SslOptions.RemoteCertificateValidationCallback = (_, presented, _, _) => presented!.GetCertHashString() == certificate.Thumbprint;
        handler.SslOptions.ClientCertificates = [certificate];
        using var client = new HttpClient(handler) { BaseAddress = new Uri(server.Host.Urls.Single()) };
        using var response = await client.GetAsync("/admin/stats");
        Assert.Equal(System.Net.HttpStatusCode.OK, response.StatusCode);
    }

    [Fact]
    public async Task AWellKnownAdminThumbprintIsClusterAdminWithoutBeingRegistered()
    {
        using var bootstrap = TestCertificates.Client("bootstrap");
        await using var server = await SecuredServer.StartAsync("--Security:WellKnownAdminCertificates", bootstrap.Thumbprint.ToLowerInvariant());
        using var response = await server.Client(bootstrap).PutAsync("/admin/databases?name=boot", null);
        Assert.Equal(System.Net.HttpStatusCode.Created, response.StatusCode);
    }

    [Fact]
    public void ABadWellKnownThumbprintIsRefused() =>
        Assert.Contains("not a certificate thumbprint", StartupError("--Security:WellKnownAdminCertificates", "xyz"), StringComparison.Ordinal);
}
