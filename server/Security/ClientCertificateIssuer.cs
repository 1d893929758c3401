using System.Security.Cryptography;
using System.Security.Cryptography.X509Certificates;

namespace Jackdaw.Server.Security;

/// <summary>
/// Makes a client certificate signed by the server certificate, as RavenDB's
/// <c>CreateClientCertificateOperation</c> does: subject <c>CN={name}</c>, issuer the server
/// certificate's subject, a new RSA 4096 key, valid from a week ago (clocks drift) until
/// <c>notAfter</c> (five years by default), key usage digital signature + key encipherment,
/// extended key usage client authentication only. The server certificate needs no CA basic
/// constraints: the signature is made with its key directly, and the server knows a client by its
/// registration, not by a chain.
/// </summary>
public static class ClientCertificateIssuer
{
    /// <summary>RavenDB's size: the five years a certificate lives reach past 2030, when NIST retires RSA 2048.</summary>
    public const int KeySize = 4096;

    public const int DefaultYears = 5;

    private const string ClientAuthentication = "1.3.6.1.5.5.7.3.2";

    /// <summary>A certificate for <paramref name="name"/> signed by <paramref name="issuer"/> (which must hold its private key), with its own private key.</summary>
    public static X509Certificate2 Issue(string name, X509Certificate2 issuer, DateTime now, DateTime? notAfter = null)
    {
        using var key = RSA.Create(KeySize);
        var subject = new X500DistinguishedNameBuilder();
        subject.AddCommonName(name);
        using var signer = IssuerKey.Of(issuer);
        var request = new CertificateRequest(subject.Build(), key, signer.Hash, RSASignaturePadding.Pkcs1);
        request.CertificateExtensions.Add(new X509KeyUsageExtension(X509KeyUsageFlags.DigitalSignature | X509KeyUsageFlags.KeyEncipherment, critical: true));
        request.CertificateExtensions.Add(new X509EnhancedKeyUsageExtension([new Oid(ClientAuthentication)], critical: true));
        request.CertificateExtensions.Add(X509AuthorityKeyIdentifierExtension.CreateFromSubjectKeyIdentifier(SubjectKeyIdentifier(issuer)));
        var from = now.Date.AddDays(-7);
        var to = notAfter ?? now.Date.AddYears(DefaultYears);
        // This overload takes the issuer's name and a signature generator, not the issuer's
        // certificate: it checks neither CA basic constraints nor the issuer's validity dates.
        using var issued = request.Create(issuer.SubjectName, signer.Generator, from, to, SerialNumber());
        return issued.CopyWithPrivateKey(key);
    }

    private static X509SubjectKeyIdentifierExtension SubjectKeyIdentifier(X509Certificate2 issuer) =>
        issuer.Extensions.OfType<X509SubjectKeyIdentifierExtension>().FirstOrDefault()
            ?? new X509SubjectKeyIdentifierExtension(issuer.PublicKey, critical: false);

    /// <summary>20 random bytes, positive and minimally encoded (the first byte is neither 0 nor above 0x7F).</summary>
    private static byte[] SerialNumber()
    {
        var serial = RandomNumberGenerator.GetBytes(20);
        serial[0] = (byte)((serial[0] & 0x3F) | 0x40);
        return serial;
    }

    /// <summary>The issuer's private key as a signature generator, with the hash its kind signs with.</summary>
    private sealed class IssuerKey(AsymmetricAlgorithm key, X509SignatureGenerator generator, HashAlgorithmName hash) : IDisposable
    {
        public X509SignatureGenerator Generator { get; } = generator;

        public HashAlgorithmName Hash { get; } = hash;

        public static IssuerKey Of(X509Certificate2 issuer)
        {
            if (issuer.GetRSAPrivateKey() is { } rsa)
            {
                return new IssuerKey(rsa, X509SignatureGenerator.CreateForRSA(rsa, RSASignaturePadding.Pkcs1), HashAlgorithmName.SHA512);
            }
            if (issuer.GetECDsaPrivateKey() is { } ecdsa)
            {
                return new IssuerKey(ecdsa, X509SignatureGenerator.CreateForECDsa(ecdsa), HashAlgorithmName.SHA384);
            }
            throw new InvalidOperationException($"The server certificate {issuer.Thumbprint} has no RSA or ECDSA private key to sign a client certificate with.");
        }

        public void Dispose() => key.Dispose();
    }
}
