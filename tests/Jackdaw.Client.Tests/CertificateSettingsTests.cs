using System.Security.Cryptography.X509Certificates;
using Jackdaw.Server.Tests.Infrastructure;

namespace Jackdaw.Client.Tests;

/// <summary>The store's certificate settings, checked by Initialize before anything is sent.</summary>
public sealed class CertificateSettingsTests
{
    [Fact]
    public void ACertificateWithAnHttpUrlIsRefusedAsRavenDbsClientRefusesIt()
    {
        using var certificate = TestCertificates.Client("client");
        using var store = new DocumentStore { Urls = ["https://a.test", "http://b.test"], Database = "db", Certificate = certificate };
        var refused = Assert.Throws<InvalidOperationException>(() => store.Initialize());
        Assert.Contains("'http://b.test' in DocumentStore.Urls is http, but DocumentStore.Certificate is set", refused.Message, StringComparison.Ordinal);
    }

    [Fact]
    public void ATrustSettingWithAnHttpUrlIsRefusedToo()
    {
        using var trusted = TestCertificates.Server();
        using var store = new DocumentStore { Urls = ["http://a.test"], Database = "db", TrustedServerCertificate = trusted };
        Assert.Contains("DocumentStore.TrustedServerCertificate is set", Assert.Throws<InvalidOperationException>(() => store.Initialize()).Message, StringComparison.Ordinal);
    }

    [Fact]
    public void ATrustedCertificateAndACallbackTogetherAreRefused()
    {
        using var trusted = TestCertificates.Server();
        using var store = new DocumentStore
        {
            Urls = ["https://a.test"],
            Database = "db",
            TrustedServerCertificate = trusted,
            ServerCertificateValidation = (_, _, _, _) => true,
        };
        Assert.Contains("both set", Assert.Throws<InvalidOperationException>(() => store.Initialize()).Message, StringComparison.Ordinal);
    }

    [Fact]
    public void AClientCertificateWithoutItsPrivateKeyIsRefusedNamingIt()
    {
        using var withKey = TestCertificates.Client("keyless");
        using var publicOnly = X509CertificateLoader.LoadCertificate(withKey.RawData);
        using var store = new DocumentStore { Urls = ["https://a.test"], Database = "db", Certificate = publicOnly };
        var refused = Assert.Throws<InvalidOperationException>(() => store.Initialize());
        Assert.Contains($"CN=keyless (thumbprint {withKey.Thumbprint}) has no private key", refused.Message, StringComparison.Ordinal);
    }

    [Fact]
    public void TheCertificateSettingsAreFrozenByInitialize()
    {
        using var certificate = TestCertificates.Client("client");
        using var store = new DocumentStore { Urls = ["https://a.test"], Database = "db", Certificate = certificate }.Initialize();
        Assert.Same(certificate, store.Certificate);
        Assert.Throws<InvalidOperationException>(() => store.Certificate = null);
        Assert.Throws<InvalidOperationException>(() => store.TrustedServerCertificate = certificate);
        Assert.Throws<InvalidOperationException>(() => store.ServerCertificateValidation = (_, _, _, _) => true);
    }
}
