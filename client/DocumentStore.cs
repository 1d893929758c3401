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
    private RequestExecutor? _executor;
    private MaintenanceOperations? _maintenance;
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

    /// <summary>Creating, listing and deleting databases; the indexes of <see cref="Database"/> (or of <see cref="MaintenanceOperations.ForDatabase"/>).</summary>
    public MaintenanceOperations Maintenance => _maintenance ?? throw NotInitialized();

    /// <summary>Data subscriptions of <see cref="Database"/> (or another database): definitions and workers.</summary>
    public DocumentSubscriptions Subscriptions => _subscriptions ?? throw NotInitialized();

    /// <summary>Test hook: the handler under the store's <see cref="HttpClient"/>.</summary>
    internal Func<HttpMessageHandler>? HttpMessageHandlerFactory { get; set; }

    internal RequestExecutor Executor => _executor ?? throw NotInitialized();

    /// <summary>Checks the settings, freezes the conventions and creates the HTTP client. Call once.</summary>
    public DocumentStore Initialize()
    {
        ThrowIfInitialized();
        if (_urls.Length == 0)
            throw new InvalidOperationException("DocumentStore.Urls is empty; set it to the server's address, e.g. [\"http://127.0.0.1:8080\"].");
        var urls = new string[_urls.Length];
        for (var i = 0; i < urls.Length; i++)
        {
            if (!Uri.TryCreate(_urls[i], UriKind.Absolute, out var uri) || (uri.Scheme != Uri.UriSchemeHttp && uri.Scheme != Uri.UriSchemeHttps))
                throw new InvalidOperationException($"'{_urls[i]}' in DocumentStore.Urls is not an http(s) URL such as \"http://127.0.0.1:8080\".");
            urls[i] = _urls[i].TrimEnd('/');
        }

        _conventions.Freeze();
        var handler = HttpMessageHandlerFactory?.Invoke() ?? RequestExecutor.CreateDefaultHandler();
        _executor = new RequestExecutor(urls, _conventions.RequestTimeout, handler);
        _maintenance = new MaintenanceOperations(_executor, _conventions, _database);
        _subscriptions = new DocumentSubscriptions(this);
        return this;
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
                _changes.Remove(changes.Database);
        }
    }

    public void Dispose()
    {
        List<Changes.DatabaseChanges> changes;
        lock (_changes)
            changes = [.. _changes.Values];
        foreach (var feed in changes)
            feed.Dispose();
        _executor?.Dispose();
    }

    internal string ResolveDatabase(string? database)
    {
        var name = database ?? _database;
        if (string.IsNullOrEmpty(name))
            throw new InvalidOperationException("No database given: set DocumentStore.Database or pass one to OpenAsyncSession, BulkInsert or the Subscriptions operations.");
        _ = Executor;
        return name;
    }

    internal static string DatabasePath(string database) => "/databases/" + Uri.EscapeDataString(database);

    private void ThrowIfInitialized()
    {
        if (_executor is not null)
            throw new InvalidOperationException("The DocumentStore is already initialized; its settings cannot change.");
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
