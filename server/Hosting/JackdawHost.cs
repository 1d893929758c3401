using System.Diagnostics;
using Jackdaw.Server.Routing;
using Microsoft.AspNetCore.Hosting.Server;
using Microsoft.AspNetCore.Hosting.Server.Features;
using Microsoft.AspNetCore.Http.Features;
using Microsoft.Extensions.DependencyInjection.Extensions;
using Microsoft.Extensions.Options;

namespace Jackdaw.Server.Hosting;

/// <summary>
/// Builds and runs the server: configuration, Kestrel, logging, the router and the one
/// <see cref="RequestDelegate"/>. Used by <see cref="Program"/> and, in-process, by tests.
/// </summary>
public sealed partial class JackdawHost : IAsyncDisposable
{
    private readonly WebApplication _app;
    private bool _started;

    private JackdawHost(WebApplication app, ServerContext server)
    {
        _app = app;
        Server = server;
    }

    public ServerContext Server { get; }

    /// <summary>The addresses Kestrel is bound to (with the real port when 0 was asked for).</summary>
    public IReadOnlyList<string> Urls =>
        _app.Services.GetRequiredService<IServer>().Features.Get<IServerAddressesFeature>()?.Addresses.ToList() ?? [];

    /// <param name="args">Command-line options (<c>--urls</c>, <c>--data-dir</c>, ...: <see cref="CommandLineOption.All"/>).</param>
    /// <param name="configure">Extra configuration of the builder (tests add logging providers).</param>
    /// <param name="handlerAssemblies">Assemblies searched for handler classes besides the server's own.</param>
    /// <exception cref="InvalidOperationException">An unknown option, a missing or bad value.</exception>
    public static JackdawHost Create(string[] args, Action<WebApplicationBuilder>? configure = null, IEnumerable<System.Reflection.Assembly>? handlerAssemblies = null)
    {
        var commandLine = CommandLine.Parse(args);
        if (commandLine.Help || commandLine.HealthCheckUrl is not null)
        {
            throw new ArgumentException("--help and healthcheck are not server options; Program handles them.", nameof(args));
        }
        return Create(commandLine.Settings, configure, handlerAssemblies);
    }

    /// <param name="settings">Configuration from the command line, by key (<see cref="CommandLine.Settings"/>).</param>
    internal static JackdawHost Create(IReadOnlyDictionary<string, string> settings, Action<WebApplicationBuilder>? configure = null, IEnumerable<System.Reflection.Assembly>? handlerAssemblies = null)
    {
        // No Args: the command line was parsed (and checked) already, and reaches configuration below.
        var builder = WebApplication.CreateSlimBuilder(new WebApplicationOptions
        {
            ContentRootPath = AppContext.BaseDirectory,
        });
        builder.Configuration.AddEnvironmentVariables("JACKDAW_");
        builder.Configuration.AddInMemoryCollection(settings.Select(setting => new KeyValuePair<string, string?>(setting.Key, setting.Value)));

        var options = ServerOptions.FromConfiguration(builder.Configuration);
        CheckLogLevels(builder.Configuration);
        var urls = options.Urls.Split(';', StringSplitOptions.RemoveEmptyEntries | StringSplitOptions.TrimEntries);
        // Set once the app is built (it needs the logger factory), read at each TLS handshake.
        Security.ServerSecurity? security = null;
        // Secured, the addresses are Kestrel's Listen calls (HttpsEndpoints); the Urls key, which
        // the web host would also read, is emptied so that Kestrel has no other to "override".
        builder.WebHost.UseUrls(options.Security.IsSecured ? [] : urls);
        builder.WebHost.ConfigureKestrel(kestrel =>
        {
            kestrel.AddServerHeader = false;
            // Per route, a handler raises the body limit of its request (RequestContext.LimitBody).
            options.Limits.ApplyTo(kestrel.Limits, options.MaxRequestBodySize);
            if (options.Security.IsSecured)
            {
                foreach (var url in urls)
                {
                    HttpsEndpoints.Listen(kestrel, url, () => security!);
                }
            }
        });
        builder.Services.Configure<HostOptions>(host => host.ShutdownTimeout = TimeSpan.FromSeconds(30));
        configure?.Invoke(builder);
        var scopesWritten = RequestActivityLogFilter.ScopesWritten(builder.Configuration);
        builder.Services.Replace(ServiceDescriptor.Singleton<ILoggerFactory>(services => new RequestActivityLogFilter(
            new AddressInUseLogFilter(new LoggerFactory(
                services.GetServices<ILoggerProvider>(),
                services.GetRequiredService<IOptionsMonitor<LoggerFilterOptions>>(),
                services.GetService<IOptions<LoggerFactoryOptions>>(),
                services.GetService<IExternalScopeProvider>())),
            scopesWritten)));

        CreateDataDir(options.DataDir);
        var app = builder.Build();
        var loggerFactory = app.Services.GetRequiredService<ILoggerFactory>();
        if (options.Security.IsSecured)
        {
            security = OpenSecurity(options, loggerFactory, app);
        }
        var server = new ServerContext(options, loggerFactory, security);
        foreach (var (database, others) in options.ReplicationTopology)
        {
            server.Replication.SetTopology(database, options.Database.NodeTag, others);
        }
        var pipeline = new RequestPipeline(RouteDiscovery.BuildRouter(server, [typeof(JackdawHost).Assembly, .. handlerAssemblies ?? []]), server);
        // WebSocket upgrades on the same port: a handler accepts one with HttpContext.WebSockets.
        // Only upgradable requests pass through the WebSocket middleware, which sets a feature
        // object on every request it sees (~70 B per GET otherwise).
        app.UseWhen(
            static context => context.Features.Get<IHttpUpgradeFeature>()?.IsUpgradableRequest == true
                || context.Features.Get<IHttpExtendedConnectFeature>()?.IsExtendedConnect == true,
            static branch => branch.UseWebSockets(new WebSocketOptions { KeepAliveInterval = TimeSpan.FromSeconds(30) }));
        // Raft's protocol (server/Cluster), on the same port; a 404 while no Raft runs (a lone server).
        app.UseWhen(
            static context => context.Request.Path.StartsWithSegments(Cluster.ClusterNode.ConsensusPath, StringComparison.Ordinal),
            branch => branch.Run(context => ClusterConsensus.InvokeAsync(server, context)));
        app.Run(pipeline.InvokeAsync);
        return new JackdawHost(app, server);
    }

    private static Security.ServerSecurity OpenSecurity(ServerOptions options, ILoggerFactory loggerFactory, WebApplication app)
    {
        try
        {
            return Security.ServerSecurity.Open(options.Security, options.DataDir, loggerFactory);
        }
        catch (Exception e)
        {
            ((IDisposable)app).Dispose();
            // What the user can fix (the file) is told as a bad setting: one line, exit code 2.
            if (e is Security.CertificateLoadException)
            {
                throw new InvalidOperationException(e.Message + " Set the file with --Security:Certificate:Path (JACKDAW_SECURITY__CERTIFICATE__PATH).", e);
            }
            throw;
        }
    }

    /// <summary>The logging configuration's own error ("Configuration value 'Verbose' is not supported.") names no key.</summary>
    private static void CheckLogLevels(IConfiguration configuration)
    {
        foreach (var level in configuration.GetSection("Logging:LogLevel").GetChildren())
        {
            if (level.Value is { } value && !Enum.TryParse<LogLevel>(value, ignoreCase: true, out _))
            {
                throw new InvalidOperationException($"{level.Path} '{value}' is not a log level; set it with --{level.Path}=Debug (Trace, Debug, Information, Warning, Error, Critical or None).");
            }
        }
    }

    private static void CreateDataDir(string dataDir)
    {
        try
        {
            Directory.CreateDirectory(dataDir);
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException)
        {
            throw new InvalidOperationException($"DataDir '{dataDir}' cannot be made a folder ({e.Message.TrimEnd('.')}); set it with --data-dir to a folder this user may write, or JACKDAW_DATADIR.", e);
        }
    }

    /// <summary>Starts listening; returns once Kestrel is bound.</summary>
    public async Task StartAsync(CancellationToken cancellationToken = default)
    {
        await _app.StartAsync(cancellationToken).ConfigureAwait(false);
        _started = true;
        // Once Kestrel listens: a node's URL may come from the port it was given.
        await Server.Cluster.StartAsync(Urls, cancellationToken).ConfigureAwait(false);
        var logger = Server.LoggerFactory.CreateLogger("Jackdaw");
        var sinceProcessStart = DateTime.Now - Process.GetCurrentProcess().StartTime;
        LogStarted(logger, string.Join(", ", Urls), Server.Options.DataDir, Server.Build.FullVersion, sinceProcessStart.TotalMilliseconds);
    }

    /// <summary>Runs until SIGTERM / Ctrl+C, then shuts down gracefully (in-flight requests finish).</summary>
    public Task WaitForShutdownAsync() => _app.WaitForShutdownAsync();

    public Task StopAsync(CancellationToken cancellationToken = default) => _app.StopAsync(cancellationToken);

    public async ValueTask DisposeAsync()
    {
        // Kestrel first (in-flight requests finish), then the databases (queued writes commit).
        // A host that failed to start has nothing to stop (and would log "shutting down").
        if (_started)
        {
            await _app.StopAsync().ConfigureAwait(false);
        }
        await Server.DisposeAsync().ConfigureAwait(false);
        await _app.DisposeAsync().ConfigureAwait(false);
    }

    [LoggerMessage(EventId = 100, Level = LogLevel.Information, Message = "Jackdaw listening on {Urls}, data in {DataDir}, version {Version}; {StartupMs:0} ms since process start")]
    private static partial void LogStarted(ILogger logger, string urls, string dataDir, string version, double startupMs);
}
