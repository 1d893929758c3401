using System.Net.Security;
using System.Security.Cryptography.X509Certificates;

namespace Jackdaw.Server.Security;

/// <summary>
/// One server certificate in use, counted: the holder keeps a reference while it is current and
/// every TLS connection that presented it keeps one until it closes. The last release disposes
/// the certificate (and its private key): nothing else would, and a key loaded from bytes may hold
/// native memory or, on some platforms, a key file until then.
/// </summary>
public sealed class ServerCertificate
{
    private static long s_live;
    private int _references = 1;

    internal ServerCertificate(X509Certificate2 certificate)
    {
        Certificate = certificate;
        // Read once, while the certificate is surely alive: a retired certificate is disposed by its
        // last release, at any moment for a reader that does not hold it, and its own properties
        // throw after that; these stay readable.
        Thumbprint = certificate.Thumbprint;
        NotAfter = certificate.NotAfter.ToUniversalTime();
        // Built once: SslStream would otherwise build the chain on every handshake.
        Context = SslStreamCertificateContext.Create(certificate, additionalCertificates: null, offline: true);
        Interlocked.Increment(ref s_live);
    }

    /// <summary>Server certificates created and not yet disposed, process-wide (the leak test reads it).</summary>
    public static long Live => Interlocked.Read(ref s_live);

    /// <summary>The certificate itself: use it only while holding a reference (a retired one is disposed by its last release).</summary>
    public X509Certificate2 Certificate { get; }

    /// <summary>The certificate's thumbprint, readable after it is disposed.</summary>
    public string Thumbprint { get; }

    /// <summary>When the certificate expires (UTC), readable after it is disposed.</summary>
    public DateTime NotAfter { get; }

    public SslStreamCertificateContext Context { get; }

    public bool IsDisposed => Volatile.Read(ref _references) == 0;

    /// <summary>Takes a reference; false once the certificate is disposed (the caller reads the holder's current one again).</summary>
    internal bool TryAcquire()
    {
        var references = Volatile.Read(ref _references);
        while (references > 0)
        {
            var seen = Interlocked.CompareExchange(ref _references, references + 1, references);
            if (seen == references)
            {
                return true;
            }
            references = seen;
        }
        return false;
    }

    /// <summary>Gives back a reference; the last one disposes the certificate.</summary>
    public void Release()
    {
        var references = Interlocked.Decrement(ref _references);
        if (references == 0)
        {
            Certificate.Dispose();
            Interlocked.Decrement(ref s_live);
        }
        else if (references < 0)
        {
            throw new InvalidOperationException("A server certificate was released more times than it was acquired.");
        }
    }
}
