using System.Net.Security;
using System.Security.Cryptography.X509Certificates;
using Jackdaw.Client.Http;
using Jackdaw.Client.Session;

namespace Jackdaw.Client;

/// <summary>
/// The application's entry point to one Jackdaw server (or several URLs of it): create one per
/// application, <see cref="Initialize"/> it, open short-lived sessions from it. Thread-safe; owns
/// one HTTP connection pool that all sessions and bulk inserts share.
/// </summary>
public sealed class DocumentStore : IDisposable
{
    private string[] _urls = [];
    private string? _database;
    private DocumentConventions _conventions = new();
    private X509Certificate2? _certificate;
    private X509Certificate2? _trustedServerCertificate;
    private RemoteCertificateValidationCallback? _serverCertificateValidation;
    private RequestExecutor? _executor;
    private MaintenanceOperations? _maintenance;
    private DocumentOperations? _operations;
    private readonly Dictionary<string, Changes.DatabaseChanges> _changes = new(StringComparer.OrdinalIgnoreCase);
    private DocumentSubscriptions? _subscriptions;

    /// <summary>Server URLs, e.g. <c>["http://127.0.0.1:8080"]</c>; requests go to the first that answers.</summary>
    public string[] Urls
    {
        get => _urls;
        set
        {
            ThrowIfInitialized();
            _urls = value;
        }
    }

    /// <summary>Default database of sessions and bulk inserts.</summary>
    public string? Database
    {
        get => _database;
        set
        {
            ThrowIfInitialized();
            _database = value;
        }
    }

    public DocumentConventions Conventions
    {
        get => _conventions;
        set
        {
            ThrowIfInitialized();
            _conventions = value ?? throw new ArgumentNullException(nameof(value));
        }
    }

    /// <summary>
    /// The client certificate, with its private key, presented at every TLS handshake with a secured
    /// server: requests, streams, bulk inserts, the changes feed and subscription workers. The server
    /// identifies the caller by it (it must be registered there, with the access the calls need).
    /// Needs https URLs. The store uses it until disposed and does not dispose it.
    /// </summary>
    public X509Certificate2? Certificate
    {
        get => _certificate;
        set
        {
            ThrowIfInitialized();
            _certificate = value;
        }
    }

    /// <summary>
    /// The server's certificate to trust instead of the operating system's trust store: the
    /// server's own (self-signed, say), or the certificate authority that issued it. The server's
    /// certificate must still be valid now and name the URL's host. Null (the default): the
    /// operating system's trust store decides, as for any https client.
    /// </summary>
    public X509Certificate2? TrustedServerCertificate
    {
        get => _trustedServerCertificate;
        set
        {
            ThrowIfInitialized();
            _trustedServerCertificate = value;
        }
    }

    /// <summary>
    /// Decides alone whether the server's certificate is trusted, at every TLS handshake: it gets the
    /// certificate, the chain the operating system built and the errors it found, and returns true to
    /// accept. Set this or <see cref="TrustedServerCertificate"/>, not both.
    /// </summary>
    public RemoteCertificateValidationCallback? ServerCertificateValidation
    {
        get => _serverCertificateValidation;
        set
        {
            ThrowIfInitialized();
            _serverCertificateValidation = value;
        }
    }

    /// <summary>Creating, listing and deleting databases; the indexes of <see cref="Database"/> (or of <see cref="MaintenanceOperations.ForDatabase"/>).</summary>
    public MaintenanceOperations Maintenance => _maintenance ?? throw NotInitialized();

    /// <summary>Patches by script and by query, deletes by query, on <see cref="Database"/> (or another database).</summary>
    public DocumentOperations Operations => _operations ?? throw NotInitialized();

    /// <summary>Data subscriptions of <see cref="Database"/> (or another database): definitions and workers.</summary>
    public DocumentSubscriptions Subscriptions => _subscriptions ?? throw NotInitialized();

    /// <summary>
    /// The topology of <see cref="Database"/> (or <paramref name="database"/>) as the store knows it
    /// now: asked of the servers first if no request for that database was made yet (RavenDB's
    /// <c>RequestExecutor.Topology</c>).
    /// </summary>
    public Task<Topology> GetTopologyAsync(string? database = null, CancellationToken token = default) =>
        Executor.GetTopologyAsync(ResolveDatabase(database), token);

    /// <summary>
    /// The node writes to <see cref="Database"/> (or <paramref name="database"/>) go to now: the first
    /// member of its topology with no failure since it was last found healthy (RavenDB's
    /// <c>RequestExecutor.GetPreferredNode</c>).
    /// </summary>
    public async Task<ServerNode> GetPreferredNodeAsync(string? database = null, CancellationToken token = default) =>
        (await Executor.NodesOf(ResolveDatabase(database)).GetSelectorAsync(token).ConfigureAwait(false)).GetPreferredNode().Node;

    /// <summary>Test hook: the handler under the store's <see cref="HttpClient"/>.</summary>
    internal Func<HttpMessageHandler>? HttpMessageHandlerFactory { get; set; }

    internal RequestExecutor Executor => _executor ?? throw NotInitialized();

    /// <summary>Checks the settings, freezes the conventions and creates the HTTP client. Call once.</summary>
    public DocumentStore Initialize()
    {
        ThrowIfInitialized();
        if (_urls.Length == 0)
        {
            throw new InvalidOperationException("DocumentStore.Urls is empty; set it to the server's address, e.g. [\"http://127.0.0.1:8080\"].");
        }
        var urls = new string[_urls.Length];
        for (var i = 0; i < urls.Length; i++)
        {
            if (!Uri.TryCreate(_urls[i], UriKind.Absolute, out var uri) || (uri.Scheme != Uri.UriSchemeHttp && uri.Scheme != Uri.UriSchemeHttps))
            {
                throw new InvalidOperationException($"'{_urls[i]}' in DocumentStore.Urls is not an http(s) URL such as \"http://127.0.0.1:8080\".");
            }
            urls[i] = _urls[i].TrimEnd('/');
            if (uri.Scheme == Uri.UriSchemeHttp)
            {
                ThrowIfSecuritySetFor(_urls[i]);
            }
        }

        var tls = CreateTls();
        _conventions.Freeze();
        var handler = HttpMessageHandlerFactory?.Invoke() ?? RequestExecutor.CreateDefaultHandler(tls);
        _executor = new RequestExecutor(urls, _conventions, handler, tls);
        _maintenance = new MaintenanceOperations(_executor, _conventions, _database);
        _operations = new DocumentOperations(_executor, _conventions, _database);
        _subscriptions = new DocumentSubscriptions(this);
        return this;
    }

    /// <summary>As RavenDB's client: a certificate (or a trust setting) over plain http would be ignored, which is never what was meant.</summary>
    private void ThrowIfSecuritySetFor(string url)
    {
        var setting = _certificate is not null ? nameof(Certificate)
            : _trustedServerCertificate is not null ? nameof(TrustedServerCertificate)
            : _serverCertificateValidation is not null ? nameof(ServerCertificateValidation)
            : null;
        if (setting is not null)
        {
            throw new InvalidOperationException($"'{url}' in DocumentStore.Urls is http, but DocumentStore.{setting} is set: certificates are used over https only. Use the server's https:// URL, or leave {setting} unset for an unsecured server.");
        }
    }

    private ClientTls CreateTls()
    {
        if (_trustedServerCertificate is not null && _serverCertificateValidation is not null)
        {
            throw new InvalidOperationException("DocumentStore.TrustedServerCertificate and ServerCertificateValidation are both set: set one (the callback decides alone; it may compare the certificate with yours).");
        }

        if (_certificate is { HasPrivateKey: false })
        {
            throw new InvalidOperationException($"DocumentStore.Certificate {ClientTls.Name(_certificate)} has no private key, so it cannot be presented: load it with its key (X509CertificateLoader.LoadPkcs12FromFile for a .pfx, X509Certificate2.CreateFromPemFile(certificate, key) for PEM files).");
        }

        return new ClientTls(_certificate, _trustedServerCertificate, _serverCertificateValidation);
    }

    /// <summary>A session on <see cref="Database"/> (or <paramref name="database"/>). Sessions are cheap and not thread-safe.</summary>
    public IAsyncDocumentSession OpenAsyncSession(string? database = null) => OpenAsyncSession(new SessionOptions { Database = database });

    public IAsyncDocumentSession OpenAsyncSession(SessionOptions options)
    {
        ArgumentNullException.ThrowIfNull(options);
        return new AsyncDocumentSession(this, ResolveDatabase(options.Database), options.UseOptimisticConcurrency);
    }

    /// <summary>
    /// Starts streaming documents to the server in one request. <c>await using</c> it: disposing
    /// waits for the server to commit the last documents and throws <see cref="BulkInsertException"/> on failure.
    /// </summary>
    public BulkInsertOperation BulkInsert(string? database = null, CancellationToken token = default) =>
        new(this, ResolveDatabase(database), token);

    /// <summary>
    /// The changes feed of <see cref="Database"/> (or <paramref name="database"/>): one WebSocket per
    /// database, shared by every observable taken from it, reconnecting by itself. The same object
    /// until it is disposed (or the store is).
    /// </summary>
    public IDatabaseChanges Changes(string? database = null)
    {
        var name = ResolveDatabase(database);
        // Under a lock: a second feed made in a race would open a connection for nothing.
        lock (_changes)
        {
            if (!_changes.TryGetValue(name, out var changes))
            {
                changes = new Changes.DatabaseChanges(this, name, OnChangesDisposed);
                _changes[name] = changes;
            }
            return changes;
        }
    }

    private void OnChangesDisposed(Changes.DatabaseChanges changes)
    {
        lock (_changes)
        {
            if (_changes.TryGetValue(changes.Database, out var current) && current == changes)
            {
                _changes.Remove(changes.Database);
            }
        }
    }

    public void Dispose()
    {
        List<Changes.DatabaseChanges> changes;
        lock (_changes)
            changes = [.. _changes.Values];
        foreach (var feed in changes)
        {
            feed.Dispose();
        }
        _executor?.Dispose();
    }

    internal string ResolveDatabase(string? database)
    {
        var name = database ?? _database;
        if (string.IsNullOrEmpty(name))
        {
            throw new InvalidOperationException("No database given: set DocumentStore.Database or pass one to OpenAsyncSession, BulkInsert or the Subscriptions operations.");
        }
        _ = Executor;
        return name;
    }

    internal static string DatabasePath(string database) => "/databases/" + Uri.EscapeDataString(database);

    private void ThrowIfInitialized()
    {
        if (_executor is not null)
        {
            throw new InvalidOperationException("The DocumentStore is already initialized; its settings cannot change.");
        }
    }

    private static InvalidOperationException NotInitialized() => new("Call DocumentStore.Initialize() first.");
}

/// <summary>Options of one session.</summary>
public sealed class SessionOptions
{
    /// <summary>Database of the session; null means the store's <see cref="DocumentStore.Database"/>.</summary>
    public string? Database { get; init; }

    /// <summary>Start with <see cref="IAdvancedSessionOperations.UseOptimisticConcurrency"/> on.</summary>
    public bool UseOptimisticConcurrency { get; init; }
}
