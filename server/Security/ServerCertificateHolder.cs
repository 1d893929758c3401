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
        WarnIfExpiring(_current);
    }

    /// <summary>
    /// The certificate new handshakes get, not counted: a replacement may dispose it at any moment
    /// (then its properties throw). Read <see cref="Thumbprint"/> and <see cref="NotAfter"/>, or
    /// <see cref="Acquire"/> it (and release it) to use the certificate itself.
    /// </summary>
    public X509Certificate2 Current => CurrentEntry.Certificate;

    /// <summary>The current certificate's thumbprint.</summary>
    public string Thumbprint => CurrentEntry.Thumbprint;

    /// <summary>When the current certificate expires (UTC).</summary>
    public DateTime NotAfter => CurrentEntry.NotAfter;

    /// <summary>The current certificate, not counted (tests watch it being retired and disposed).</summary>
    internal ServerCertificate CurrentEntry => Volatile.Read(ref _current) ?? throw new ObjectDisposedException(nameof(ServerCertificateHolder));

    /// <summary>
    /// Held while a certificate is read from the configured files and installed (the file watcher)
    /// or written to them and installed (<see cref="ServerCertificateFiles"/>), so that those happen
    /// one after the other.
    /// </summary>
    internal Lock FilesLock { get; } = new();

    /// <summary>How many times the certificate was replaced since the server started.</summary>
    public long Replacements => Interlocked.Read(ref _replacements);

    /// <summary>
    /// Raised after each replacement, with the new certificate: its <see cref="ServerCertificate.Thumbprint"/>
    /// and <see cref="ServerCertificate.NotAfter"/> (a later replacement may have disposed the
    /// certificate itself by the time a handler runs).
    /// </summary>
    public event Action<ServerCertificate>? Replaced;

    /// <summary>The current certificate, counted: the caller releases it when its connection closes.</summary>
    public ServerCertificate Acquire()
    {
        while (true)
        {
            var current = CurrentEntry;
            // Fails only when a replacement retired and disposed it between the read and here.
            if (current.TryAcquire())
            {
                return current;
            }
        }
    }

    /// <summary>
    /// Makes <paramref name="certificate"/> the one new handshakes present; the holder owns it from
    /// now on. False (and <paramref name="certificate"/> disposed) when it is the current one already;
    /// <see cref="ObjectDisposedException"/> (and disposed) once the holder is.
    /// </summary>
    public bool Replace(X509Certificate2 certificate)
    {
        ServerCertificate retired;
        ServerCertificate installed;
        lock (_replaceLock)
        {
            var current = Volatile.Read(ref _current);
            if (current is null || current.Thumbprint == certificate.Thumbprint)
            {
                certificate.Dispose();
                ObjectDisposedException.ThrowIf(current is null, this);
                return false;
            }
            retired = current;
            installed = new ServerCertificate(certificate);
            Volatile.Write(ref _current, installed);
            Interlocked.Increment(ref _replacements);
        }
        retired.Release();
        // From here on a concurrent replacement may retire (and dispose) the installed certificate
        // too: only what ServerCertificate read at its creation is used.
        LogReplaced(_logger, retired.Thumbprint, installed.Thumbprint, installed.NotAfter);
        WarnIfExpiring(installed);
        Replaced?.Invoke(installed);
        return true;
    }

    /// <summary>
    /// Logs a warning when less than the warning period remains before the current certificate
    /// expires; nothing once the holder is disposed (the expiry timer of a stopping server may still
    /// call). Not counted: it reads only what the certificate's creation read.
    /// </summary>
    public void WarnIfExpiring()
    {
        if (Volatile.Read(ref _current) is { } current)
        {
            WarnIfExpiring(current);
        }
    }

    private void WarnIfExpiring(ServerCertificate certificate)
    {
        var left = certificate.NotAfter - _time.GetUtcNow().UtcDateTime;
        if (left < _expiryWarning)
        {
            LogExpiring(_logger, certificate.Thumbprint, certificate.NotAfter, Math.Max(0, left.TotalDays));
        }
    }

    /// <summary>Drops the holder's reference: the current certificate is disposed once its last connection closes.</summary>
    public void Dispose()
    {
        // Under the replacement lock: a replacement in flight (the file watcher's, as the server
        // stops) would otherwise install its certificate after this, and release the one released
        // here a second time.
        ServerCertificate? current;
        lock (_replaceLock)
            current = Interlocked.Exchange(ref _current, null);
        current?.Release();
    }

    [LoggerMessage(EventId = 300, Level = LogLevel.Information, Message = "Server certificate replaced: {OldThumbprint} -> {NewThumbprint} (valid until {NotAfter:yyyy-MM-dd HH:mm} UTC); open connections keep the old one")]
    private static partial void LogReplaced(ILogger logger, string oldThumbprint, string newThumbprint, DateTime notAfter);

    [LoggerMessage(EventId = 301, Level = LogLevel.Warning, Message = "The server certificate {Thumbprint} expires on {NotAfter:yyyy-MM-dd HH:mm} UTC, in {DaysLeft:0.0} days: replace the file at Security:Certificate:Path (it is picked up at once) or POST /admin/certificates/replace-cluster-cert")]
    private static partial void LogExpiring(ILogger logger, string thumbprint, DateTime notAfter, double daysLeft);
}
