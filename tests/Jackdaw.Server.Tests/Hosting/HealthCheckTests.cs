using System.Security.Cryptography;
using System.Security.Cryptography.X509Certificates;
using Jackdaw.Server.Hosting;
using Jackdaw.Server.Tests.Infrastructure;

namespace Jackdaw.Server.Tests.Hosting;

/// <summary><c>healthcheck [url]</c>, the container's health check: plain, and against a secured server on loopback.</summary>
public class HealthCheckTests
{
    [Fact]
    public async Task HealthCheckSucceedsAgainstARunningServerAndFailsWithoutOne()
    {
        using var data = new TempFolder();
        using var server = ServerProcess.Start($"--urls http://127.0.0.1:0 --data-dir \"{data.Path}\"");
        var address = await server.WaitForAddressAsync(TimeSpan.FromSeconds(60));

        using var healthy = ServerProcess.Start($"healthcheck {address}build/version");
        Assert.Equal(0, await healthy.WaitForExitAsync(TimeSpan.FromSeconds(60)));

        server.KillHard();
        await server.WaitForExitAsync(TimeSpan.FromSeconds(30));
        using var unhealthy = ServerProcess.Start($"healthcheck {address}build/version");
        Assert.Equal(1, await unhealthy.WaitForExitAsync(TimeSpan.FromSeconds(60)));
        Assert.Contains("unhealthy", unhealthy.Output, StringComparison.Ordinal);
    }

    [Fact]
    public async Task OnLoopbackItTakesASecuredServersOwnCertificateThatNoOneTrustsForAnotherName()
    {
        // Self-signed (no trusted chain) and issued for a public name, not for 127.0.0.1 or localhost:
        // what a container's server usually presents to its own health check.
        using var folder = new TempFolder("jackdaw-healthcheck");
        using var key = RSA.Create(2048);
        var request = new CertificateRequest("CN=db.example.com", key, HashAlgorithmName.SHA256, RSASignaturePadding.Pkcs1);
        var names = new SubjectAlternativeNameBuilder();
        names.AddDnsName("db.example.com");
        request.CertificateExtensions.Add(names.Build());
        using var certificate = request.CreateSelfSigned(DateTimeOffset.UtcNow.AddDays(-1), DateTimeOffset.UtcNow.AddYears(1));
        var pfx = TestCertificates.WritePfx(certificate, Path.Combine(folder.Path, "server.pfx"));
        await using var server = await InProcessServer.StartAsync("--urls", "https://127.0.0.1:0", "--Security:Certificate:Path", pfx);
        var url = server.Host.Urls.Single();

        // A client that checks the certificate refuses this server: the health check must not.
        using (var checking = new HttpClient())
        {
            await Assert.ThrowsAsync<HttpRequestException>(() => checking.GetAsync(url + "/build/version"));
        }
        Assert.Equal(0, await HealthCheck.RunAsync(url + "/build/version"));
        Assert.Equal(0, await HealthCheck.RunAsync(url.Replace("127.0.0.1", "localhost", StringComparison.Ordinal) + "/build/version"));
    }

    [Theory]
    [InlineData("https://127.0.0.1:8443/build/version", true)]
    [InlineData("https://localhost:8443/build/version", true)]
    [InlineData("https://[::1]:8443/build/version", true)]
    [InlineData("http://127.0.0.1:8080/build/version", false)]
    [InlineData("https://db.example.com:8443/build/version", false)]
    [InlineData("https://10.1.2.3:8443/build/version", false)]
    public void OnlyAnHttpsUrlOnLoopbackSkipsTheCertificateCheck(string url, bool skips)
    {
        Assert.Equal(skips, HealthCheck.AcceptsAnyServerCertificate(new Uri(url)));
    }

    [Theory]
    [InlineData(null, "http://127.0.0.1:8080/build/version")]
    [InlineData("", "http://127.0.0.1:8080/build/version")]
    [InlineData("https://0.0.0.0:8443", "https://127.0.0.1:8443/build/version")]
    [InlineData("http://0.0.0.0:8080;https://0.0.0.0:8443", "http://127.0.0.1:8080/build/version")]
    [InlineData("http://+:9000/", "http://127.0.0.1:9000/build/version")]
    [InlineData("https://[::]:8443", "https://127.0.0.1:8443/build/version")]
    [InlineData("http://127.0.0.1:8080", "http://127.0.0.1:8080/build/version")]
    [InlineData("https://localhost:8443", "https://localhost:8443/build/version")]
    public void WithoutAUrlItChecksTheFirstAddressTheServerListensOn(string? configured, string expected)
    {
        Assert.Equal(expected, HealthCheck.DefaultUrl(configured));
    }
}
