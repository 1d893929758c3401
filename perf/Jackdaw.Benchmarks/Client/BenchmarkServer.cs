using Jackdaw.Server.Hosting;
using Microsoft.Extensions.Logging;

namespace Jackdaw.Benchmarks.Client;

/// <summary>The real server in the benchmark process (127.0.0.1, port 0, temp data folder), quiet logging.</summary>
internal sealed class BenchmarkServer : IAsyncDisposable
{
    private readonly string _dataDir;

    private BenchmarkServer(JackdawHost host, string dataDir)
    {
        Host = host;
        _dataDir = dataDir;
    }

    public JackdawHost Host { get; }

    public string Url => Host.Urls.Single();

    public static async Task<BenchmarkServer> StartAsync()
    {
        var dataDir = Path.Combine(Path.GetTempPath(), $"jackdaw-bench-client-{Guid.NewGuid():N}");
        Directory.CreateDirectory(dataDir);
        var host = JackdawHost.Create(["--urls", "http://127.0.0.1:0", "--data-dir", dataDir], builder => builder.Logging.ClearProviders());
        await host.StartAsync();
        return new BenchmarkServer(host, dataDir);
    }

    public async ValueTask DisposeAsync()
    {
        await Host.DisposeAsync();
        Directory.Delete(_dataDir, recursive: true);
    }
}
