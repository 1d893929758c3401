using System.Security.Cryptography.X509Certificates;

namespace Jackdaw.Server.Security;

/// <summary>
/// The server certificate that new TLS handshakes present. <see cref="Replace"/> swaps it at once
/// (a watched file changed, or <c>replace-cluster-cert</c>); connections already open keep theirs,
/// and each retired certificate is disposed when its last connection closes
/// (<see cref="ServerCertificate.Release"/>).
/// </summary>
public sealed partial class ServerCertificateHolder : IDisposable
{
    private readonly ILogger _logger;
    private readonly TimeProvider _time;
    private readonly TimeSpan _expiryWarning;
    private readonly Lock _replaceLock = new();
    private ServerCertificate? _current;
    private long _replacements;

    public ServerCertificateHolder(X509Certificate2 certificate, ILogger logger, TimeSpan expiryWarning, TimeProvider? time = null)
    {
        _logger = logger;
        _time = time ?? TimeProvider.System;
        _expiryWarning = expiryWarning;
        _current = new ServerCertificate(certificate);
        WarnIfExpiring(certificate);
    }

    /// <summary>The certificate new handshakes get (not counted: read its properties, do not keep it).</summary>
    public X509Certificate2 Current => (Volatile.Read(ref _current) ?? throw new ObjectDisposedException(nameof(ServerCertificateHolder))).Certificate;

    /// <summary>How many times the certificate was replaced since the server started.</summary>
    public long Replacements => Interlocked.Read(ref _replacements);

    /// <summary>Raised after each replacement, with the new certificate.</summary>
    public event Action<X509Certificate2>? Replaced;

    /// <summary>The current certificate, counted: the caller releases it when its connection closes.</summary>
    public ServerCertificate Acquire()
    {
        while (true)
        {
            var current = Volatile.Read(ref _current) ?? throw new ObjectDisposedException(nameof(ServerCertificateHolder));
            // Fails only when a replacement retired and disposed it between the read and here.
            if (current.TryAcquire())
                return current;
        }
    }

    /// <summary>
    /// Makes <paramref name="certificate"/> the one new handshakes present; the holder owns it from
    /// now on. False (and <paramref name="certificate"/> disposed) when it is the current one already.
    /// </summary>
    public bool Replace(X509Certificate2 certificate)
    {
        ServerCertificate retired;
        string retiredThumbprint;
        lock (_replaceLock)
        {
            var current = Volatile.Read(ref _current) ?? throw new ObjectDisposedException(nameof(ServerCertificateHolder));
            if (current.Certificate.Thumbprint == certificate.Thumbprint)
            {
                certificate.Dispose();
                return false;
            }
            retired = current;
            retiredThumbprint = current.Certificate.Thumbprint;
            Volatile.Write(ref _current, new ServerCertificate(certificate));
            Interlocked.Increment(ref _replacements);
        }
        retired.Release();
        LogReplaced(_logger, retiredThumbprint, certificate.Thumbprint, certificate.NotAfter.ToUniversalTime());
        WarnIfExpiring(certificate);
        Replaced?.Invoke(certificate);
        return true;
    }

    /// <summary>Logs a warning when less than the warning period remains before <paramref name="certificate"/> expires.</summary>
    public void WarnIfExpiring(X509Certificate2? certificate = null)
    {
        if (certificate is null)
        {
            // The timer's call: counted, so that a replacement cannot dispose it under the check;
            // a stopped holder has nothing to check.
            ServerCertificate counted;
            try
            {
                counted = Acquire();
            }
            catch (ObjectDisposedException)
            {
                return;
            }
            try
            {
                WarnIfExpiring(counted.Certificate);
            }
            finally
            {
                counted.Release();
            }
            return;
        }
        var left = certificate.NotAfter.ToUniversalTime() - _time.GetUtcNow().UtcDateTime;
        if (left < _expiryWarning)
            LogExpiring(_logger, certificate.Thumbprint, certificate.NotAfter.ToUniversalTime(), Math.Max(0, left.TotalDays));
    }

    /// <summary>Drops the holder's reference: the current certificate is disposed once its last connection closes.</summary>
    public void Dispose() => Interlocked.Exchange(ref _current, null)?.Release();

    [LoggerMessage(EventId = 300, Level = LogLevel.Information, Message = "Server certificate replaced: {OldThumbprint} -> {NewThumbprint} (valid until {NotAfter:yyyy-MM-dd HH:mm} UTC); open connections keep the old one")]
    private static partial void LogReplaced(ILogger logger, string oldThumbprint, string newThumbprint, DateTime notAfter);

    [LoggerMessage(EventId = 301, Level = LogLevel.Warning, Message = "The server certificate {Thumbprint} expires on {NotAfter:yyyy-MM-dd HH:mm} UTC, in {DaysLeft:0.0} days: replace the file at Security:Certificate:Path (it is picked up at once) or POST /admin/certificates/replace-cluster-cert")]
    private static partial void LogExpiring(ILogger logger, string thumbprint, DateTime notAfter, double daysLeft);
}
