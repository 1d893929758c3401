using Jackdaw.Server.Hosting;
using Microsoft.Extensions.Logging;

namespace Jackdaw.Client.Tests.Integration;

/// <summary>
/// The real Jackdaw server, in this process on 127.0.0.1 with port 0 and a temp data folder,
/// shared by the tests of a class; each test works in a database of its own.
/// </summary>
public sealed class ServerFixture : IAsyncLifetime
{
    private readonly string _dataDir = Path.Combine(Path.GetTempPath(), $"jackdaw-client-{Guid.NewGuid():N}");
    private JackdawHost? _host;
    private int _databases;

    /// <summary>
    /// How long a query over the corpus waits for non-stale results. An auto-index over 2,000
    /// orders missed the server's default of 15 s on a busy machine; the query answers as soon as
    /// the index caught up, so this only bounds a hang.
    /// </summary>
    public static readonly TimeSpan IndexingWait = TimeSpan.FromMinutes(2);

    public string Url => _host!.Urls.Single();

    /// <summary>The server, for what a test waits on that no client call shows (requests in progress).</summary>
    public JackdawHost Host => _host ?? throw new InvalidOperationException("The server has not started.");

    public async Task InitializeAsync()
    {
        Directory.CreateDirectory(_dataDir);
        _host = JackdawHost.Create(
            ["--urls", "http://127.0.0.1:0", "--data-dir", _dataDir],
            builder => builder.Logging.ClearProviders());
        await _host.StartAsync();
    }

    /// <summary>An initialized store on a new, empty database.</summary>
    public async Task<DocumentStore> NewStoreAsync(Action<DocumentStore>? configure = null)
    {
        var store = new DocumentStore { Urls = [Url], Database = $"db{Interlocked.Increment(ref _databases)}" };
        configure?.Invoke(store);
        store.Initialize();
        await store.Maintenance.CreateDatabaseAsync(store.Database!);
        return store;
    }

    public async Task DisposeAsync()
    {
        if (_host is not null)
        {
            await _host.DisposeAsync();
        }
        try
        {
            Directory.Delete(_dataDir, recursive: true);
        }
        catch (DirectoryNotFoundException)
        {
        }
    }
}
