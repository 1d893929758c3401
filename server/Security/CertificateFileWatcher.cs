namespace Jackdaw.Server.Security;

/// <summary>
/// Watches the server certificate's files and hands a changed certificate to the holder within a
/// second. A file caught half-written does not parse (or its key does not match): it is retried
/// every <see cref="RetryInterval"/> until it loads or <see cref="MaxRetries"/> run out, and the
/// current certificate serves meanwhile; nothing half-loaded is ever presented.
/// </summary>
public sealed partial class CertificateFileWatcher : IDisposable
{
    public static readonly TimeSpan RetryInterval = TimeSpan.FromMilliseconds(100);
    public const int MaxRetries = 50;

    private readonly SecurityOptions _options;
    private readonly ServerCertificateHolder _holder;
    private readonly ILogger _logger;
    private readonly FileSystemWatcher[] _watchers;
    private readonly Timer _timer;
    private readonly Lock _lock = new();
    private int _attempts;
    private int _reloads;
    private int _failedLoads;
    private bool _disposed;

    public CertificateFileWatcher(SecurityOptions options, ServerCertificateHolder holder, ILogger logger)
    {
        _options = options;
        _holder = holder;
        _logger = logger;
        _timer = new Timer(_ => Reload(), null, Timeout.Infinite, Timeout.Infinite);
        string?[] files = [options.CertificatePath, options.CertificateKeyPath];
        _watchers = files.OfType<string>().Select(Watch).ToArray();
    }

    /// <summary>Loads of a changed file that failed (half-written, or a key not yet matching its certificate), since the start.</summary>
    internal int FailedLoads => Volatile.Read(ref _failedLoads);

    /// <summary>Reloads begun (the timer fired), since the start.</summary>
    internal int Reloads => Volatile.Read(ref _reloads);

    /// <summary>Called with each certificate loaded, before it replaces the current one (tests pause a reload there).</summary>
    internal Action<System.Security.Cryptography.X509Certificates.X509Certificate2>? Loaded { get; set; }

    private FileSystemWatcher Watch(string file)
    {
        var watcher = new FileSystemWatcher(Path.GetDirectoryName(file)!, Path.GetFileName(file))
        {
            NotifyFilter = NotifyFilters.LastWrite | NotifyFilters.FileName | NotifyFilters.Size | NotifyFilters.CreationTime,
        };
        watcher.Changed += (_, _) => Schedule();
        watcher.Created += (_, _) => Schedule();
        watcher.Renamed += (_, _) => Schedule();
        watcher.EnableRaisingEvents = true;
        return watcher;
    }

    /// <summary>A change was seen: load shortly (a writer's next bytes usually follow at once).</summary>
    private void Schedule()
    {
        lock (_lock)
        {
            if (_disposed)
            {
                return;
            }
            _attempts = 0;
            _timer.Change(TimeSpan.FromMilliseconds(50), Timeout.InfiniteTimeSpan);
        }
    }

    private void Reload()
    {
        Interlocked.Increment(ref _reloads);
        // One reload at a time: the timer fires again for a change seen while a reload runs, and
        // the older content, loaded first but replacing last, would be served until the next change.
        // The lock is the holder's, which replace-cluster-cert takes to write the files and install
        // what it wrote: a reload that read the files before that write cannot install after it.
        lock (_holder.FilesLock)
            ReloadAlone();
    }

    private void ReloadAlone()
    {
        try
        {
            var certificate = CertificateLoader.Load(_options.CertificatePath!, _options.CertificateKeyPath, _options.CertificatePassword, DateTime.UtcNow);
            Loaded?.Invoke(certificate);
            _holder.Replace(certificate);
        }
        catch (CertificateLoadException e)
        {
            Interlocked.Increment(ref _failedLoads);
            lock (_lock)
            {
                if (_disposed)
                {
                    return;
                }
                if (++_attempts < MaxRetries)
                {
                    _timer.Change(RetryInterval, Timeout.InfiniteTimeSpan);
                    return;
                }
            }
            LogUnusable(_logger, e.Message, MaxRetries);
        }
        catch (ObjectDisposedException)
        {
            // The server is stopping.
        }
        catch (Exception e)
        {
            // Anything else (the TLS context refusing the certificate, say) must not escape a timer
            // callback, which would end the process: the current certificate keeps serving.
            LogReloadFailed(_logger, e);
        }
    }

    public void Dispose()
    {
        lock (_lock)
            _disposed = true;
        foreach (var watcher in _watchers)
        {
            watcher.Dispose();
        }
        _timer.Dispose();
    }

    [LoggerMessage(EventId = 303, Level = LogLevel.Error, Message = "Loading the changed server certificate failed; the current certificate stays")]
    private static partial void LogReloadFailed(ILogger logger, Exception exception);

    [LoggerMessage(EventId = 302, Level = LogLevel.Warning, Message = "The changed server certificate file is not usable after {Attempts} tries; the current certificate stays: {Reason}")]
    private static partial void LogUnusable(ILogger logger, string reason, int attempts);
}
