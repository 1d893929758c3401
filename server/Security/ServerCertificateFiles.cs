using System.Security.Cryptography;
using System.Security.Cryptography.X509Certificates;
using System.Text;
using Jackdaw.Storage.Engine;

namespace Jackdaw.Server.Security;

/// <summary>
/// Installs a server certificate sent through the API (<c>replace-cluster-cert</c>): it is written
/// over the configured file(s) first, so that a restart serves it too, then handed to the holder.
/// Each file is replaced atomically: written to a temp file beside it (with the old file's
/// permissions), fsynced, renamed over it, and the folder fsynced. The file watcher then loads the
/// same thumbprint and changes nothing (it reads the files under the holder's
/// <see cref="ServerCertificateHolder.FilesLock"/>, as this writes them). A PFX is written with the configured password; PEM as a
/// certificate and a PKCS#8 key, in one file or in the two configured.
/// </summary>
public static class ServerCertificateFiles
{
    /// <summary>
    /// Writes <paramref name="certificate"/> (with its exportable private key) to the files of
    /// <paramref name="options"/> and makes it current. The holder owns it from then on; false (and
    /// it disposed) when it is the current one already, in which case nothing is written.
    /// </summary>
    public static bool Install(SecurityOptions options, ServerCertificateHolder holder, X509Certificate2 certificate)
    {
        // Two replacements at once would interleave their files, and the file watcher must not
        // install what it read before this write after this one is installed.
        lock (holder.FilesLock)
        {
            if (string.Equals(holder.Thumbprint, certificate.Thumbprint, StringComparison.OrdinalIgnoreCase))
            {
                certificate.Dispose();
                return false;
            }
            try
            {
                Write(options, certificate);
            }
            catch
            {
                certificate.Dispose();
                throw;
            }
            return holder.Replace(certificate);
        }
    }

    private static void Write(SecurityOptions options, X509Certificate2 certificate)
    {
        var path = options.CertificatePath ?? throw new InvalidOperationException("The server is not secured: it has no certificate file to write.");
        if (!CertificateLoader.IsPem(path))
        {
            Replace(path, certificate.ExportPkcs12(Pkcs12ExportPbeParameters.Pbes2Aes256Sha256, options.CertificatePassword));
            return;
        }
        var key = PrivateKeyPem(certificate);
        var pem = certificate.ExportCertificatePem() + "\n";
        if (options.CertificateKeyPath is { } keyPath)
        {
            // The watcher may see one file new and the other old: that pair does not load, and it
            // retries until both are written.
            Replace(keyPath, Encoding.ASCII.GetBytes(key));
            Replace(path, Encoding.ASCII.GetBytes(pem));
        }
        else
        {
            Replace(path, Encoding.ASCII.GetBytes(pem + key));
        }
    }

    private static string PrivateKeyPem(X509Certificate2 certificate)
    {
        using AsymmetricAlgorithm key = (AsymmetricAlgorithm?)certificate.GetRSAPrivateKey() ?? certificate.GetECDsaPrivateKey()
            ?? throw new InvalidOperationException($"The certificate {certificate.Thumbprint} has no RSA or ECDSA private key to write.");
        return key.ExportPkcs8PrivateKeyPem() + "\n";
    }

    private static void Replace(string path, byte[] contents)
    {
        var folder = Path.GetDirectoryName(path)!;
        var temp = Path.Combine(folder, $".{Path.GetFileName(path)}.{Guid.NewGuid():N}.tmp");
        try
        {
            using (var file = new FileStream(temp, FileMode.CreateNew, FileAccess.Write, FileShare.None))
            {
                if (!OperatingSystem.IsWindows())
                {
                    File.SetUnixFileMode(file.SafeFileHandle, File.Exists(path) ? File.GetUnixFileMode(path) : UnixFileMode.UserRead | UnixFileMode.UserWrite);
                }
                file.Write(contents);
                file.Flush(flushToDisk: true);
            }
            File.Move(temp, path, overwrite: true);
            FileDurability.SyncFolder(folder);
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException)
        {
            TryDelete(temp);
            throw new IOException($"The new server certificate could not be written to '{path}' ({e.Message.TrimEnd('.')}); the server keeps its current certificate.", e);
        }
        finally
        {
            CryptographicOperations.ZeroMemory(contents);
        }
    }

    private static void TryDelete(string path)
    {
        try
        {
            File.Delete(path);
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException)
        {
            // Left behind: a dot-file nobody reads.
        }
    }
}
