using Jackdaw.Server.Tests.Infrastructure;
using Microsoft.Extensions.Logging;

namespace Jackdaw.Server.Tests.Security;

/// <summary>A server certificate with less than 14 days left is logged as a warning, at startup and when one is installed.</summary>
public sealed class CertificateExpiryTests
{
    [Fact]
    public async Task ACertificateExpiringInFiveDaysIsAWarningAtStartup()
    {
        using var expiring = TestCertificates.Server(notAfter: DateTimeOffset.UtcNow.AddDays(5));
        await using var server = await SecuredServer.StartAsync(expiring, pem: false);
        var warning = Assert.Single(Warnings(server));
        Assert.Contains(expiring.Thumbprint, warning, StringComparison.Ordinal);
        Assert.Contains($"expires on {expiring.NotAfter.ToUniversalTime():yyyy-MM-dd HH:mm} UTC", warning, StringComparison.Ordinal);
    }

    [Fact]
    public async Task ACertificateExpiringInAYearIsNot()
    {
        using var lasting = TestCertificates.Server(notAfter: DateTimeOffset.UtcNow.AddYears(1));
        await using var server = await SecuredServer.StartAsync(lasting, pem: false);
        Assert.Empty(Warnings(server));
    }

    [Fact]
    public async Task AReplacementExpiringInFiveDaysIsAWarningToo()
    {
        await using var server = await SecuredServer.StartAsync();
        // The holder owns it from Replace on.
        var expiring = TestCertificates.Server("expiring", notAfter: DateTimeOffset.UtcNow.AddDays(5));
        var thumbprint = expiring.Thumbprint;
        Assert.True(server.Security.Certificate.Replace(expiring));
        Assert.Contains(thumbprint, Assert.Single(Warnings(server)), StringComparison.Ordinal);
    }

    private static IEnumerable<string> Warnings(SecuredServer server) =>
        server.Server.Logs.Records
            .Where(r => r.Level == LogLevel.Warning && r.Message.Contains("expires on", StringComparison.Ordinal))
            .Select(r => r.Message);
}
