using System.IO.Compression;
using System.Security.Cryptography;
using System.Security.Cryptography.X509Certificates;
using System.Text;

namespace Jackdaw.Server.Security;

/// <summary>
/// The zip a generated client certificate is handed out in, with RavenDB's entries:
/// <list type="bullet">
/// <item><c>{name}.pfx</c>: the certificate and its key, with the issuer's certificate (public
/// part only), password-protected when a password was given (PBES2, AES-256, SHA-256);</item>
/// <item><c>{name}.crt</c>: the certificate, PEM;</item>
/// <item><c>{name}.key</c>: its key, PKCS#1 PEM, encrypted with the password when one was given
/// (<see cref="TraditionalPem"/>).</item>
/// </list>
/// Each entry is marked owner read/write only (0600) for unzip on Unix. The name is made safe as a
/// file name first: no folder separators, no characters a file system refuses.
/// </summary>
public static class ClientCertificateArchive
{
    private const UnixFileMode OwnerOnly = UnixFileMode.UserRead | UnixFileMode.UserWrite;

    public static byte[] Create(string name, X509Certificate2 certificate, X509Certificate2 issuer, string? password)
    {
        using var key = certificate.GetRSAPrivateKey()
            ?? throw new ArgumentException($"The certificate {certificate.Thumbprint} has no RSA private key to hand out.", nameof(certificate));
        // The issuer goes in by its public part only: its key is the server's and never leaves it.
        using var issuerPublic = X509CertificateLoader.LoadCertificate(issuer.RawData);
        var file = FileName(name);
        using var buffer = new MemoryStream();
        using (var zip = new ZipArchive(buffer, ZipArchiveMode.Create, leaveOpen: true))
        {
            Add(zip, file + ".pfx", new X509Certificate2Collection { certificate, issuerPublic }.ExportPkcs12(Pkcs12ExportPbeParameters.Pbes2Aes256Sha256, password));
            Add(zip, file + ".crt", Encoding.ASCII.GetBytes(certificate.ExportCertificatePem() + "\n"));
            Add(zip, file + ".key", Encoding.ASCII.GetBytes(TraditionalPem.Write(key, password)));
        }
        return buffer.ToArray();
    }

    /// <summary><paramref name="name"/> with every character a file name may not hold (and both slashes) replaced by '_'.</summary>
    public static string FileName(string name)
    {
        var invalid = Path.GetInvalidFileNameChars();
        var safe = new StringBuilder(name.Length);
        foreach (var c in name.Trim())
        {
            safe.Append(c is '/' or '\\' or ':' || char.IsControl(c) || invalid.Contains(c) ? '_' : c);
        }
        var text = safe.ToString();
        return text is "" or "." or ".." ? "certificate" : text;
    }

    private static void Add(ZipArchive zip, string entryName, byte[] contents)
    {
        var entry = zip.CreateEntry(entryName, CompressionLevel.Optimal);
        // Unix permissions live in the high 16 bits of the external attributes.
        entry.ExternalAttributes = (int)OwnerOnly << 16;
        using var stream = entry.Open();
        stream.Write(contents);
    }
}
