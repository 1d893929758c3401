using System.Reflection;
using Jackdaw.Server.Databases;
using Jackdaw.Server.Replication;

namespace Jackdaw.Server.Hosting;

/// <summary>Server-wide state handed to every handler class when it is created at startup.</summary>
public sealed class ServerContext : IAsyncDisposable
{
    private DatabasesLandlord? _databases;
    private DatabaseOperations? _operations;
    private ReplicationHub? _replication;
    private readonly Subscriptions.ISubscriptionCluster _subscriptionCluster;

    public ServerContext(ServerOptions options, ILoggerFactory loggerFactory, Security.ServerSecurity? security = null)
    {
        Options = options;
        LoggerFactory = loggerFactory;
        Security = security;
        Metrics = new(options.Metrics, options.DataDir, security, BuildInfo.FromAssembly(typeof(ServerContext).Assembly).Version);
        // Read before any database opens: a member's databases carry its tag (ids, change vectors).
        Cluster = new Cluster.ClusterNode(options.Cluster, Path.Combine(options.DataDir, "System", "Cluster"), () => Options.Database.NodeTag, loggerFactory, () => Databases, () => security?.Certificate.Current);
        // The cluster gives each database's nodes to replication whenever a record or a member's URL changes.
        Cluster.Replication = new Cluster.ReplicationHubTopologySink(() => Replication);
        // A clustered server's registered certificates are the cluster's; each node puts them in its own store.
        Cluster.LocalCertificates = security?.Store;
        // A clustered database's subscriptions are kept by the cluster (the subscriptions layer sees it through this).
        _subscriptionCluster = new Cluster.SubscriptionClusterSink(Cluster);
    }

    public ServerOptions Options { get; }

    public ILoggerFactory LoggerFactory { get; }

    /// <summary>This server as a node of its cluster: its tag, the cluster's state on Raft, its changes.</summary>
    public Cluster.ClusterNode Cluster { get; }

    public ServerStatistics Statistics { get; } = new();

    /// <summary>
    /// This node's tag as its databases carry it (<see cref="DocumentDatabaseOptions.NodeTag"/>): in
    /// operation ids, HiLo ids and change vectors. The cluster sets it when the node joins.
    /// </summary>
    public string NodeTag => Databases.NodeTag;

    /// <summary>Who watches the requests (<c>/admin/traffic-watch</c>), and the hand-over of each to them.</summary>
    public Traffic.TrafficWatch TrafficWatch { get; } = new();

    /// <summary>The server certificate, the registered client certificates and their checks; null on an unsecured server.</summary>
    public Security.ServerSecurity? Security { get; }

    public BuildInfo Build { get; } = BuildInfo.FromAssembly(typeof(ServerContext).Assembly);

    /// <summary>This server's meter, its <c>/metrics</c> exporter and request spans (<c>Metrics:*</c>, <c>OpenTelemetry:*</c>).</summary>
    public Diagnostics.ServerMetrics Metrics { get; }

    /// <summary>The databases under the data folder (created on first access).</summary>
    // Read on every database request: the field first, since EnsureInitialized's lambda (it
    // captures this) would be a new delegate on each call.
    public DatabasesLandlord Databases => Volatile.Read(ref _databases) ?? CreateDatabases();

    private DatabasesLandlord CreateDatabases() => LazyInitializer.EnsureInitialized(
        ref _databases,
        () => new DatabasesLandlord(
            Path.Combine(Options.DataDir, "Databases"),
            LoggerFactory,
            // Every database opens with its indexes (their loops resume at once after a restart),
            // its subscriptions, and last its periodic backups (a missed run catches up at once).
            Options.Database with
            {
                NodeTag = Cluster.NodeTag == Jackdaw.Server.Cluster.ClusterNode.PassiveTag ? Options.Database.NodeTag : Cluster.NodeTag,
                Components =
                [
                    .. Options.Database.Components,
                    // A clustered database's auto-indexes go into its record, so that every node has them.
                    Indexing.IndexStore.Component(Options.Indexing, LoggerFactory, new Cluster.ClusterAutoIndexSink(Cluster)),
                    Queries.SlowQueryLog.Component(Options.SlowQueries, LoggerFactory),
                    Subscriptions.SubscriptionStore.Component(LoggerFactory, _subscriptionCluster),
                    // A clustered database's tasks are kept by the cluster (the backup layer sees it through the sink).
                    Backup.PeriodicBackups.Component(Options.Backup with { FailureOf = ErrorMapping.FailureOf }, LoggerFactory, new Cluster.PeriodicBackupClusterSink(Cluster)),
                    Replication.Component,
                    // Last: it subscribes to the indexes' batches and reads the subscriptions
                    // (only with metrics on).
                    .. Metrics.Components,
                ],
            }));

    /// <summary>
    /// Replication of the databases to the other nodes that hold them: the cluster gives each
    /// database's nodes with <c>SetTopology</c>; <c>bulk_docs</c> waits on it for write assurance.
    /// </summary>
    public ReplicationHub Replication => LazyInitializer.EnsureInitialized(
        ref _replication,
        () => new ReplicationHub(() => Databases, LoggerFactory)
        {
            // On a secured cluster the push route needs ClusterAdmin: senders present this node's certificate.
            ConfigureSocket = Jackdaw.Server.Cluster.ClusterHttp.SocketOptions(() => Security?.Certificate.Current),
        });

    /// <summary>
    /// The server's own long-running operations (restores, verifications), by id: RavenDB's
    /// server-level <c>/operations/state</c>. In memory, as a database's.
    /// </summary>
    public DatabaseOperations Operations => LazyInitializer.EnsureInitialized(
        ref _operations,
        () => new DatabaseOperations(LoggerFactory.CreateLogger("Jackdaw.Operations")));

    /// <summary>Closes every open database: queued writes finish, storage is closed cleanly.</summary>
    public async ValueTask DisposeAsync()
    {
        // First, while the databases are open: OpenTelemetry's last export reads their gauges.
        Metrics.Dispose();
        // The cluster stops before the databases close: no record change creates or deletes one meanwhile.
        await Cluster.DisposeAsync().ConfigureAwait(false);
        // The senders stop before the databases they read close.
        if (_replication is not null)
        {
            await _replication.DisposeAsync().ConfigureAwait(false);
        }
        if (_databases is not null)
        {
            await _databases.DisposeAsync().ConfigureAwait(false);
        }
        _operations?.Dispose();
        Security?.Dispose();
    }
}

/// <summary>Version and commit of this build, read once from assembly attributes.</summary>
public sealed record BuildInfo(string Version, string FullVersion, string CommitHash)
{
    public static BuildInfo FromAssembly(Assembly assembly)
    {
        var informational = assembly.GetCustomAttribute<AssemblyInformationalVersionAttribute>()?.InformationalVersion
            ?? assembly.GetName().Version?.ToString()
            ?? "0.0.0";
        var plus = informational.IndexOf('+', StringComparison.Ordinal);
        var version = plus < 0 ? informational : informational[..plus];
        var commit = plus < 0 ? "unknown" : informational[(plus + 1)..];
        return new BuildInfo(version, informational, commit);
    }
}
