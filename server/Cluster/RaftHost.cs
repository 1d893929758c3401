using System.Diagnostics;
using DotNext.Net.Cluster.Consensus.Raft;
using DotNext.Net.Cluster.Consensus.Raft.Http;
using DotNext.Net.Cluster.Consensus.Raft.StateMachine;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Http;

namespace Jackdaw.Server.Cluster;

/// <summary>
/// DotNext's Raft node over HTTP, hosted by hand rather than by the web host: its own small service
/// provider (the local member's configuration, the write-ahead log, the state machine, the stored
/// membership) so that a lone server runs no Raft until it forms a cluster, and so that the node
/// can be started when it is needed. Its HTTP protocol is served on the server's own port: the
/// request pipeline hands it every request under <c>/cluster-consensus/</c>.
/// </summary>
/// <remarks>
/// The log is DotNext's <see cref="WriteAheadLog"/>, which in 6.12 flushes every appended or
/// committed entry to disk before <c>CommitAsync</c> returns (its <c>FlushOnCommit</c> option is
/// obsolete there, "always true"; older logs flushed on a timer, and a crash could lose an entry a
/// node had acknowledged). Each entry carries a CRC-32, so a torn tail is detected on start.
/// </remarks>
internal sealed class RaftHost : IAsyncDisposable
{
    /// <summary>The protocol's path on every node (DotNext's default, for a member URL without a path).</summary>
    public const string ProtocolPrefix = ClusterNode.ConsensusPath;

    private readonly ServiceProvider _services;
    private readonly Microsoft.Extensions.Hosting.IHostedService _node;

    private RaftHost(ServiceProvider services)
    {
        _services = services;
        Cluster = services.GetRequiredService<IRaftHttpCluster>();
        _node = (Microsoft.Extensions.Hosting.IHostedService)Cluster;
        var app = new ApplicationBuilder(services);
        app.UseConsensusProtocolHandler();
        Handler = app.Build();
    }

    public IRaftHttpCluster Cluster { get; }

    /// <summary>The members as Raft knows them (this node among them).</summary>
    public IReadOnlyCollection<IRaftClusterMember> Members => ((IRaftCluster)Cluster).Members;

    /// <summary>Serves one request of the Raft protocol (a path under <see cref="ProtocolPrefix"/>).</summary>
    public RequestDelegate Handler { get; }

    /// <param name="folder"><c>System/Cluster</c>: the log, the membership file, the snapshots.</param>
    /// <param name="self">This node's URL as the others reach it.</param>
    /// <param name="coldStart">True for the first node of a new cluster: it is its only member and leads at once.</param>
    /// <param name="http">The client side of the transport (this node's certificate on a secured server).</param>
    public static async Task<RaftHost> StartAsync(
        string folder, string self, bool coldStart, ClusterOptions options, ClusterStateMachine stateMachine, ClusterHttp http, ILoggerFactory loggerFactory, CancellationToken token)
    {
        var services = new ServiceCollection();
        services.AddSingleton<IHttpMessageHandlerFactory>(http);
        services.AddSingleton(loggerFactory);
        services.AddSingleton(typeof(ILogger<>), typeof(Logger<>));
        services.AddOptions();
        services.AddMetrics();
        // The protocol handler's exception middleware asks for these.
        services.AddSingleton(new DiagnosticListener("Jackdaw.Cluster"));
        services.AddSingleton<DiagnosticSource>(provider => provider.GetRequiredService<DiagnosticListener>());
        services.ConfigureLocalNode(member =>
        {
            member.PublicEndPoint = new Uri(self + "/");
            member.ColdStart = coldStart;
            member.LowerElectionTimeout = options.ElectionTimeoutMs;
            member.UpperElectionTimeout = options.ElectionTimeoutMs * 2;
            member.RequestTimeout = TimeSpan.FromMilliseconds(options.ElectionTimeoutMs * 2);
            member.RpcTimeout = TimeSpan.FromMilliseconds(options.ElectionTimeoutMs);
        });
        await stateMachine.RestoreAsync(token).ConfigureAwait(false);
        services.AddSingleton<IStateMachine>(stateMachine);
        services.UsePersistentLog(new WriteAheadLog.Options
        {
            Location = Path.Combine(folder, "log"),
            HashAlgorithm = WriteAheadLog.IntegrityHashAlgorithm.Crc32,
        });
        services.UsePersistentConfigurationStorage(Path.Combine(folder, "members"));
        var host = new RaftHost(services.BuildServiceProvider());
        await host._node.StartAsync(token).ConfigureAwait(false);
        return host;
    }

    public async ValueTask DisposeAsync()
    {
        try
        {
            await _node.StopAsync(CancellationToken.None).ConfigureAwait(false);
        }
        finally
        {
            await _services.DisposeAsync().ConfigureAwait(false);
        }
    }
}
