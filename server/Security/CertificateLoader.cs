using System.Security.Cryptography;
using System.Security.Cryptography.X509Certificates;

namespace Jackdaw.Server.Security;

/// <summary>A certificate file that cannot serve: it does not parse, has no private key, or is not valid now. The message names the file and why.</summary>
public sealed class CertificateLoadException(string message, Exception? inner = null) : Exception(message, inner);

/// <summary>
/// Reads the server certificate from its files: a PFX (PKCS#12, with an optional password), or a
/// PEM certificate with its key in the same file or in <c>KeyPath</c>. The key is loaded so that
/// nothing is written to disk (<see cref="X509KeyStorageFlags.EphemeralKeySet"/> for PFX; PEM keys
/// are ephemeral already).
/// </summary>
public static class CertificateLoader
{
    public static X509Certificate2 Load(string path, string? keyPath, string? password, DateTime now)
    {
        X509Certificate2 certificate;
        try
        {
            certificate = IsPem(path)
                ? X509Certificate2.CreateFromPemFile(path, keyPath)
                : X509CertificateLoader.LoadPkcs12FromFile(path, password, X509KeyStorageFlags.EphemeralKeySet);
        }
        catch (Exception e) when (e is CryptographicException or IOException or UnauthorizedAccessException or ArgumentException)
        {
            throw new CertificateLoadException($"The server certificate '{path}'{(keyPath is null ? "" : $" (key '{keyPath}')")} cannot be read: {e.Message.TrimEnd('.')}.", e);
        }
        return Checked(certificate, path, now);
    }

    /// <summary>A PFX sent through the API (<c>replace-cluster-cert</c>), checked as a file is.</summary>
    public static X509Certificate2 LoadPfx(byte[] pfx, string? password, string source, DateTime now)
    {
        X509Certificate2 certificate;
        try
        {
            certificate = X509CertificateLoader.LoadPkcs12(pfx, password, X509KeyStorageFlags.EphemeralKeySet | X509KeyStorageFlags.Exportable);
        }
        catch (CryptographicException e)
        {
            throw new CertificateLoadException($"The certificate in {source} cannot be read: {e.Message.TrimEnd('.')}.", e);
        }
        return Checked(certificate, source, now);
    }

    /// <summary><paramref name="certificate"/> when it can serve now; otherwise it is disposed and the reason thrown.</summary>
    private static X509Certificate2 Checked(X509Certificate2 certificate, string source, DateTime now)
    {
        try
        {
            Check(certificate, source, now);
            return certificate;
        }
        catch
        {
            certificate.Dispose();
            throw;
        }
    }

    private static void Check(X509Certificate2 certificate, string source, DateTime now)
    {
        if (!certificate.HasPrivateKey)
        {
            throw new CertificateLoadException($"The server certificate '{source}' has no private key: give a PFX with its key, or a PEM certificate with Security:Certificate:KeyPath.");
        }
        if (certificate.NotAfter.ToUniversalTime() <= now)
        {
            throw new CertificateLoadException($"The server certificate '{source}' expired on {certificate.NotAfter.ToUniversalTime():yyyy-MM-dd HH:mm} UTC.");
        }
        if (certificate.NotBefore.ToUniversalTime() > now)
        {
            throw new CertificateLoadException($"The server certificate '{source}' is not valid before {certificate.NotBefore.ToUniversalTime():yyyy-MM-dd HH:mm} UTC.");
        }
    }

    /// <summary>PEM files start with text ("-----BEGIN"); a PFX is DER (binary, first byte 0x30).</summary>
    internal static bool IsPem(string path)
    {
        if (path.EndsWith(".pfx", StringComparison.OrdinalIgnoreCase) || path.EndsWith(".p12", StringComparison.OrdinalIgnoreCase))
        {
            return false;
        }
        if (path.EndsWith(".pem", StringComparison.OrdinalIgnoreCase) || path.EndsWith(".crt", StringComparison.OrdinalIgnoreCase))
        {
            return true;
        }
        try
        {
            using var file = File.OpenRead(path);
            return file.ReadByte() != 0x30;
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException)
        {
            throw new CertificateLoadException($"The server certificate '{path}' cannot be read: {e.Message.TrimEnd('.')}.", e);
        }
    }
}
