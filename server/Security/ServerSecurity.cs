namespace Jackdaw.Server.Security;

/// <summary>
/// Everything of a secured server's security, opened at startup: the server certificate (held,
/// watched and replaceable), the registered client certificates (in <c>{DataDir}/System</c>) and
/// the <see cref="Authorizer"/> that checks each request against them.
/// </summary>
public sealed class ServerSecurity : IDisposable
{
    /// <summary>How often a running server checks its certificate's expiry (a server may run for weeks).</summary>
    public static readonly TimeSpan ExpiryCheckInterval = TimeSpan.FromHours(12);

    private readonly CertificateFileWatcher _watcher;
    private readonly Timer _expiryCheck;

    private ServerSecurity(SecurityOptions options, ServerCertificateHolder certificate, CertificateStore store, CertificateFileWatcher watcher)
    {
        Options = options;
        Certificate = certificate;
        Store = store;
        _watcher = watcher;
        Authorizer = new Authorizer(store, certificate, options);
        _expiryCheck = new Timer(static state => ((ServerCertificateHolder)state!).WarnIfExpiring(), certificate, ExpiryCheckInterval, ExpiryCheckInterval);
    }

    public SecurityOptions Options { get; }

    public ServerCertificateHolder Certificate { get; }

    public CertificateStore Store { get; }

    public Authorizer Authorizer { get; }

    /// <summary>The watcher of the certificate's files (tests read how often a load failed).</summary>
    internal CertificateFileWatcher Watcher => _watcher;

    /// <summary>The folder of the system store under <paramref name="dataDir"/>.</summary>
    public static string SystemFolder(string dataDir) => Path.Combine(dataDir, "System");

    /// <summary>Loads the server certificate (a <see cref="CertificateLoadException"/> names the file and what is wrong) and opens the store.</summary>
    public static ServerSecurity Open(SecurityOptions options, string dataDir, ILoggerFactory loggerFactory)
    {
        var certificate = CertificateLoader.Load(options.CertificatePath!, options.CertificateKeyPath, options.CertificatePassword, DateTime.UtcNow);
        var logger = loggerFactory.CreateLogger("Jackdaw.Security");
        var holder = new ServerCertificateHolder(certificate, logger, options.ExpiryWarning);
        CertificateStore? store = null;
        try
        {
            store = CertificateStore.Open(SystemFolder(dataDir));
            return new ServerSecurity(options, holder, store, new CertificateFileWatcher(options, holder, logger));
        }
        catch
        {
            store?.Dispose();
            holder.Dispose();
            throw;
        }
    }

    public void Dispose()
    {
        _expiryCheck.Dispose();
        _watcher.Dispose();
        Certificate.Dispose();
        Store.Dispose();
    }
}
