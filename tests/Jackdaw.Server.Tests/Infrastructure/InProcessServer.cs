using System.Collections.Concurrent;
using Jackdaw.Server.Hosting;
using Microsoft.AspNetCore.Builder;
using Microsoft.Extensions.Logging;

namespace Jackdaw.Server.Tests.Infrastructure;

/// <summary>
/// The real server, in this process, on 127.0.0.1 with port 0 and a temp data folder, with
/// handlers of the test assembly added and log records captured.
/// </summary>
public sealed class InProcessServer : IAsyncDisposable
{
    private readonly TempFolder? _dataDir;

    private InProcessServer(JackdawHost host, CapturingLoggerProvider logs, TempFolder? dataDir)
    {
        _dataDir = dataDir;
        Host = host;
        Logs = logs;
        var address = host.Urls.Single();
        // Longer than any wait a test asks the server for (WaitForNonStaleResultsTimeout up to 3
        // minutes, for builds that take that long on a busy machine): the server's own answer to a
        // wait that ran out says more than a cancelled request. This only bounds a hang.
        Client = new HttpClient { BaseAddress = new Uri(address), Timeout = TimeSpan.FromMinutes(4) };
    }

    public JackdawHost Host { get; }

    public HttpClient Client { get; }

    public CapturingLoggerProvider Logs { get; }

    public string DataDir => Host.Server.Options.DataDir;

    public static Task<InProcessServer> StartAsync(params string[] extraArgs) => StartAsync(configure: null, extraArgs);

    /// <summary>Starts a server whose options <paramref name="configure"/> may change first (e.g. a fault-injecting storage layer).</summary>
    public static Task<InProcessServer> StartAsync(Action<Jackdaw.Server.Hosting.ServerOptions>? configure, params string[] extraArgs) =>
        StartAsync(new TempFolder("jackdaw-server"), null, configure, extraArgs);

    /// <summary>
    /// Starts a server on a data folder the caller owns (kept when this server is disposed), as a
    /// restarted node finds its data again.
    /// </summary>
    public static Task<InProcessServer> StartInFolderAsync(string dataDir, Action<Jackdaw.Server.Hosting.ServerOptions>? configure, params string[] extraArgs) =>
        StartAsync(null, dataDir, configure, extraArgs);

    private static async Task<InProcessServer> StartAsync(TempFolder? folder, string? dataDir, Action<Jackdaw.Server.Hosting.ServerOptions>? configure, string[] extraArgs)
    {
        var logs = new CapturingLoggerProvider();
        string[] args = ["--urls", "http://127.0.0.1:0", "--data-dir", folder?.Path ?? dataDir!, "--Logging:LogLevel:Default=Warning", "--Logging:LogLevel:Jackdaw=Information", .. extraArgs];
        var host = JackdawHost.Create(
            args,
            builder =>
            {
                builder.Logging.ClearProviders();
                builder.Logging.AddProvider(logs);
            },
            [typeof(InProcessServer).Assembly]);
        configure?.Invoke(host.Server.Options);
        await host.StartAsync();
        return new InProcessServer(host, logs, folder);
    }

    public async ValueTask DisposeAsync()
    {
        Client.Dispose();
        await Host.DisposeAsync();
        _dataDir?.Dispose();
    }
}

public sealed class CapturingLoggerProvider : ILoggerProvider
{
    public ConcurrentQueue<(string Category, LogLevel Level, string Message, Exception? Exception)> Records { get; } = new();

    public ILogger CreateLogger(string categoryName) => new Logger(this, categoryName);

    public void Dispose()
    {
    }

    private sealed class Logger(CapturingLoggerProvider provider, string category) : ILogger
    {
        public IDisposable? BeginScope<TState>(TState state)
            where TState : notnull => null;

        public bool IsEnabled(LogLevel logLevel) => logLevel >= LogLevel.Information;

        public void Log<TState>(LogLevel logLevel, EventId eventId, TState state, Exception? exception, Func<TState, Exception?, string> formatter) =>
            provider.Records.Enqueue((category, logLevel, formatter(state, exception), exception));
    }
}
