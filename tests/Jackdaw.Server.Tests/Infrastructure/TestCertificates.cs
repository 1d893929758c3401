using System.Security.Cryptography;
using System.Security.Cryptography.X509Certificates;

namespace Jackdaw.Server.Tests.Infrastructure;

/// <summary>
/// Certificates made in the tests with <see cref="CertificateRequest"/> (no external tool): a
/// certificate authority, a server certificate for 127.0.0.1 and localhost, and client
/// certificates, the last two self-signed or issued by another certificate. Each is returned with its private key, loaded ephemerally.
/// </summary>
public static class TestCertificates
{
    /// <summary>A server certificate for 127.0.0.1 and localhost: self-signed, or signed by <paramref name="issuer"/>.</summary>
    public static X509Certificate2 Server(string name = "jackdaw-test-server", DateTimeOffset? notBefore = null, DateTimeOffset? notAfter = null, X509Certificate2? issuer = null)
    {
        using var key = RSA.Create(2048);
        return Issue(ServerRequest(name, key), key, issuer, notBefore ?? DateTimeOffset.UtcNow.AddDays(-1), notAfter ?? DateTimeOffset.UtcNow.AddYears(1));
    }

    /// <summary>
    /// <paramref name="count"/> distinct server certificates of one key (each has its own random
    /// serial, hence its own thumbprint), for tests that replace the server certificate hundreds of
    /// times: straight from <see cref="CertificateRequest"/>, without a new key or a PFX round trip
    /// each (both cost more than the signature). Linux's SslStream serves such a certificate as it is.
    /// Made as they are enumerated: a leak test does not hold them all while it measures.
    /// </summary>
    public static IEnumerable<X509Certificate2> ServerSeries(int count, string name = "jackdaw-test-server")
    {
        using var key = RSA.Create(2048);
        var request = ServerRequest(name, key);
        var from = DateTimeOffset.UtcNow.AddDays(-1);
        var to = DateTimeOffset.UtcNow.AddYears(1);
        for (var i = 0; i < count; i++)
        {
            yield return request.CreateSelfSigned(from, to);
        }
    }

    private static CertificateRequest ServerRequest(string name, RSA key)
    {
        var request = new CertificateRequest($"CN={name}", key, HashAlgorithmName.SHA256, RSASignaturePadding.Pkcs1);
        var san = new SubjectAlternativeNameBuilder();
        san.AddIpAddress(System.Net.IPAddress.Loopback);
        san.AddDnsName("localhost");
        request.CertificateExtensions.Add(san.Build());
        request.CertificateExtensions.Add(new X509EnhancedKeyUsageExtension([new Oid("1.3.6.1.5.5.7.3.1"), new Oid("1.3.6.1.5.5.7.3.2")], critical: false));
        return request;
    }

    /// <summary>A certificate authority of one's own (self-signed, may sign certificates), as <c>openssl req -x509</c> makes.</summary>
    public static X509Certificate2 Authority(string name = "jackdaw-test-ca")
    {
        using var key = RSA.Create(2048);
        var request = new CertificateRequest($"CN={name}", key, HashAlgorithmName.SHA256, RSASignaturePadding.Pkcs1);
        request.CertificateExtensions.Add(new X509BasicConstraintsExtension(certificateAuthority: true, hasPathLengthConstraint: false, 0, critical: true));
        request.CertificateExtensions.Add(new X509KeyUsageExtension(X509KeyUsageFlags.KeyCertSign | X509KeyUsageFlags.CrlSign, critical: true));
        request.CertificateExtensions.Add(new X509SubjectKeyIdentifierExtension(request.PublicKey, critical: false));
        return Issue(request, key, issuer: null, DateTimeOffset.UtcNow.AddDays(-1), DateTimeOffset.UtcNow.AddYears(10));
    }

    /// <summary>A client certificate: self-signed, or signed by <paramref name="issuer"/>; <paramref name="key"/> reuses a key (a renewal).</summary>
    public static X509Certificate2 Client(string name, X509Certificate2? issuer = null, DateTimeOffset? notBefore = null, DateTimeOffset? notAfter = null, RSA? key = null)
    {
        using var own = key is null ? RSA.Create(2048) : null;
        var rsa = key ?? own!;
        var request = new CertificateRequest($"CN={name}", rsa, HashAlgorithmName.SHA256, RSASignaturePadding.Pkcs1);
        request.CertificateExtensions.Add(new X509EnhancedKeyUsageExtension([new Oid("1.3.6.1.5.5.7.3.2")], critical: false));
        return Issue(request, rsa, issuer, notBefore ?? DateTimeOffset.UtcNow.AddDays(-1), notAfter ?? DateTimeOffset.UtcNow.AddYears(1));
    }

    /// <summary>The certificate <paramref name="request"/> asks for, self-signed or signed by <paramref name="issuer"/>, with <paramref name="key"/>.</summary>
    private static X509Certificate2 Issue(CertificateRequest request, RSA key, X509Certificate2? issuer, DateTimeOffset from, DateTimeOffset to)
    {
        if (issuer is null)
        {
            using var selfSigned = request.CreateSelfSigned(from, to);
            return Reload(selfSigned);
        }
        var serial = RandomNumberGenerator.GetBytes(16);
        serial[0] &= 0x7F;
        using var generator = issuer.GetRSAPrivateKey()!;
        using var signed = request.Create(issuer.SubjectName, X509SignatureGenerator.CreateForRSA(generator, RSASignaturePadding.Pkcs1), from, to, serial);
        using var withKey = signed.CopyWithPrivateKey(key);
        return Reload(withKey);
    }

    /// <summary>Writes <paramref name="certificate"/> as a PFX (with <paramref name="password"/>) into <paramref name="path"/>.</summary>
    public static string WritePfx(X509Certificate2 certificate, string path, string? password = null)
    {
        File.WriteAllBytes(path, certificate.Export(X509ContentType.Pfx, password));
        return path;
    }

    /// <summary>Writes the certificate and its key as PEM files; returns (certificate, key) paths.</summary>
    public static (string Certificate, string Key) WritePem(X509Certificate2 certificate, string folder, string name)
    {
        var certificatePath = Path.Combine(folder, name + ".crt");
        var keyPath = Path.Combine(folder, name + ".key");
        File.WriteAllText(certificatePath, certificate.ExportCertificatePem());
        File.WriteAllText(keyPath, certificate.GetRSAPrivateKey()!.ExportPkcs8PrivateKeyPem());
        return (certificatePath, keyPath);
    }

    /// <summary>Through PKCS#12 and back, ephemeral: usable by SslStream on every platform.</summary>
    private static X509Certificate2 Reload(X509Certificate2 certificate) =>
        X509CertificateLoader.LoadPkcs12(certificate.Export(X509ContentType.Pfx), null, X509KeyStorageFlags.EphemeralKeySet | X509KeyStorageFlags.Exportable);

    /// <summary>The thumbprint of the certificate a new TLS handshake with <paramref name="url"/> presents.</summary>
    public static async Task<string> PresentedThumbprintAsync(string url)
    {
        var uri = new Uri(url);
        using var tcp = new System.Net.Sockets.TcpClient();
        await tcp.ConnectAsync(uri.Host, uri.Port);
        string? presented = null;
        await using var tls = new System.Net.Security.SslStream(tcp.GetStream(), leaveInnerStreamOpen: false, (_, certificate, _, _) =>
        {
            presented = certificate?.GetCertHashString();
            return true;
        });
        await tls.AuthenticateAsClientAsync(uri.Host);
        return presented!;
    }
}
