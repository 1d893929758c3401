using System.Security.Cryptography.X509Certificates;
using DotNext.Net.Cluster;
using DotNext.Net.Cluster.Consensus.Raft;
using NotLeaderException = Jackdaw.Server.Errors.NotLeaderException;
using Jackdaw.Server.Databases;
using Jackdaw.Server.Errors;

namespace Jackdaw.Server.Cluster;

/// <summary>
/// This server as a node of its cluster: its identity (tag, URL), the Raft node that keeps the
/// cluster's state (<see cref="ClusterStateMachine"/>), and the changes proposed to it. Three
/// situations, decided at start from <c>System/Cluster/node.json</c> and the settings:
/// <list type="bullet">
/// <item>lone (no identity, not passive): tag A, no Raft; a single server as before clusters. The
/// first node added to it makes it the founder of a cluster (<see cref="AddNodeAsync"/>).</item>
/// <item>passive (no identity, <c>Cluster:Passive</c> or <c>Cluster:Join</c>): Raft runs, waiting
/// to be added; the node learns its tag from the first committed state that lists its URL.</item>
/// <item>member (an identity): Raft runs from its log.</item>
/// </list>
/// </summary>
public sealed partial class ClusterNode : IAsyncDisposable
{
    /// <summary>The tag a node that has not been added anywhere answers with (RavenDB's passive node).</summary>
    public const string PassiveTag = "?";

    /// <summary>Where Raft's own protocol is served, on the server's port (DotNext's HTTP transport).</summary>
    public const string ConsensusPath = "/cluster-consensus";

    private readonly ClusterOptions _options;
    private readonly string _folder;
    private readonly ILoggerFactory _loggerFactory;
    private readonly ILogger _logger;
    private readonly Func<DatabasesLandlord> _databases;
    // Made when Raft starts: its snapshots folder is created with it, and a lone server has none.
    private ClusterStateMachine? _stateMachine;
    private readonly ClusterDatabases _local;
    private readonly SemaphoreSlim _lifecycle = new(1, 1);
    private readonly CancellationTokenSource _stopping = new();
    private RaftHost? _raft;

    /// <summary>How long a node asked whether it holds a new database's copy may take to answer before it is not waited for.</summary>
    private static readonly TimeSpan CopyAnswerWait = TimeSpan.FromSeconds(2);
    private volatile NodeIdentity? _identity;
    private readonly Func<string> _loneTag;
    private readonly ClusterHttp _http;
    private readonly HttpClient _client;
    private Task _joining = Task.CompletedTask;

    /// <param name="folder"><c>System/Cluster</c> under the data folder.</param>
    /// <param name="databases">The local databases (created on first use by the server).</param>
    /// <param name="loneTag">The tag of a server that never joined a cluster (<see cref="DocumentDatabaseOptions.NodeTag"/> as configured, A by default; read when asked, so that tests may set it after the server is built).</param>
    /// <param name="certificate">The server's current certificate, presented to the other nodes; null on an unsecured server.</param>
    public ClusterNode(ClusterOptions options, string folder, Func<string> loneTag, ILoggerFactory loggerFactory, Func<DatabasesLandlord> databases, Func<X509Certificate2?> certificate)
    {
        _http = new ClusterHttp(certificate, TimeSpan.FromMilliseconds(options.ElectionTimeoutMs));
        _client = _http.CreateClient(TimeSpan.FromSeconds(10));
        LeaderClient = _http.CreateClient(TimeSpan.FromSeconds(60));
        _loneTag = loneTag;
        _options = options;
        _folder = folder;
        _loggerFactory = loggerFactory;
        _logger = loggerFactory.CreateLogger("Jackdaw.Cluster");
        _databases = databases;
        _identity = NodeIdentity.Load(folder);
        _local = new ClusterDatabases(this, folder, databases, _logger);
    }

    /// <summary>This node's tag: from its identity; A for a lone server; <see cref="PassiveTag"/> while it waits to be added.</summary>
    public string NodeTag => _identity?.Tag ?? (IsPassive ? PassiveTag : _loneTag());

    /// <summary>Where each database's other nodes are sent (replication); none until the server sets it.</summary>
    public IReplicationTopologySink Replication { get; set; } = NoReplicationTopologySink.Instance;

    /// <summary>True while the node waits to be added to a cluster.</summary>
    public bool IsPassive => _identity is null && _options.StartsPassive;

    /// <summary>
    /// True from the start of a member (it has an identity) until its Raft runs: requests that change
    /// anything are refused meanwhile (503), since the node would take a lone server's paths.
    /// </summary>
    public bool IsStarting => _identity is not null && _raft is null;

    /// <summary>True once the node is part of a cluster (Raft runs and it has its identity).</summary>
    public bool IsClustered => _identity is not null && _raft is not null;

    /// <summary>True once the node has its identity in a cluster, even before Raft started (a member starting up).</summary>
    public bool IsMember => _identity is not null;

    /// <summary>
    /// A client for requests passed on to the leader: on a secured server it presents this server's
    /// certificate, so only requests this node already authorized for their route may use it.
    /// </summary>
    public HttpClient LeaderClient { get; }

    /// <summary>This node's URL as the others reach it (known once the server listens).</summary>
    public string? Url { get; private set; }

    /// <summary>The cluster's state as this node last applied it (empty for a lone server).</summary>
    public ClusterState State => _stateMachine?.State ?? ClusterState.Empty;

    /// <summary>The Raft log's last committed index (0 for a lone server).</summary>
    public long CommitIndex => _raft?.Cluster.AuditTrail.LastCommittedEntryIndex ?? 0;

    /// <summary>The Raft protocol's handler, or null when no Raft runs (a lone server: the path is a 404).</summary>
    public Microsoft.AspNetCore.Http.RequestDelegate? ConsensusHandler => _raft?.Handler;

    /// <summary>The leader's tag and URL as this node sees it; this node's own for a lone server; null during an election.</summary>
    public (string Tag, string Url)? Leader
    {
        get
        {
            if (_raft is not { } raft)
            {
                return IsPassive ? null : (NodeTag, Url ?? "");
            }
            if (raft.Cluster.Leader is not { } leader)
            {
                return null;
            }
            var url = UrlOf(leader);
            // A node being added may win an election before its member entry commits: it then
            // completes its own add (ClusterNode.Reconciliation.cs) under its reserved tag.
            return (State.TagOf(url) ?? State.JoiningTagOf(url)) is { } tag ? (tag, url) : null;
        }
    }

    /// <summary>True when this node leads (a lone server leads itself).</summary>
    /// <remarks>A node that has just won an election sees itself as <c>Leader</c> a moment before its leadership token is issued: either counts.</remarks>
    public bool IsLeader => _raft is { } raft
        ? !raft.Cluster.LeadershipToken.IsCancellationRequested || raft.Cluster.Leader is { IsRemote: false }
        : !IsPassive;

    /// <summary>Whether each other member answered the leader lately (only the leader knows; empty elsewhere).</summary>
    public IReadOnlyDictionary<string, bool> MemberStatus
    {
        get
        {
            var status = new Dictionary<string, bool>(StringComparer.Ordinal);
            if (_raft is not { } raft || !IsLeader)
            {
                return status;
            }
            foreach (var member in raft.Members)
            {
                if (member.IsRemote && State.TagOf(UrlOf(member)) is { } tag)
                {
                    status[tag] = member.Status == ClusterMemberStatus.Available;
                }
            }
            return status;
        }
    }

    private static string UrlOf(IClusterMember member)
    {
        var text = member.EndPoint is Microsoft.AspNetCore.Connections.UriEndPoint uri ? uri.Uri.ToString() : member.EndPoint.ToString() ?? "";
        return ClusterUrls.Normalize(text) ?? text;
    }

    /// <summary>The leader, waiting up to <paramref name="timeout"/> for one to be known (an election, or a node just added that has not heard from it yet).</summary>
    public async Task<(string Tag, string Url)?> WaitForLeaderAsync(TimeSpan timeout, CancellationToken token)
    {
        var deadline = DateTime.UtcNow + timeout;
        while (Leader is null && DateTime.UtcNow < deadline)
        {
            await Task.Delay(20, token).ConfigureAwait(false);
        }
        return Leader;
    }

    /// <summary>
    /// A leader other than the one at <paramref name="goneUrl"/> (which did not answer), waiting up
    /// to <paramref name="timeout"/> for the election that replaces it; null when none came.
    /// </summary>
    public async Task<(string Tag, string Url)?> WaitForAnotherLeaderAsync(string goneUrl, TimeSpan timeout, CancellationToken token)
    {
        var deadline = DateTime.UtcNow + timeout;
        while (DateTime.UtcNow < deadline)
        {
            if (Leader is var (tag, url) && !ClusterUrls.Same(url, goneUrl))
            {
                return (tag, url);
            }
            await Task.Delay(20, token).ConfigureAwait(false);
        }
        return null;
    }

    /// <summary>
    /// Starts the node once the server listens: Raft for a member or a passive node (and the join
    /// requests of <c>Cluster:Join</c>); nothing for a lone server.
    /// </summary>
    /// <param name="listening">The addresses the server listens on (with real ports).</param>
    public async Task StartAsync(IReadOnlyList<string> listening, CancellationToken token)
    {
        Url = _identity?.Url ?? ClusterUrls.Normalize(_options.PublicServerUrl) ?? SelfUrlFrom(listening);
        if (_identity is { } identity)
        {
            if (_options.PublicServerUrl is { } configured && !ClusterUrls.Same(configured, identity.Url))
            {
                LogUrlKept(_logger, identity.Url, configured);
            }
            await StartRaftAsync(coldStart: identity.Founder, token).ConfigureAwait(false);
        }
        else if (_options.StartsPassive)
        {
            if (Url is null)
            {
                throw new InvalidOperationException("A passive node needs a URL the others can reach: set PublicServerUrl (--PublicServerUrl http://10.0.0.2:8080) or listen on a fixed port.");
            }
            // Its databases would carry tag A (ids, change vectors) in a cluster that names it otherwise.
            if (_databases().Names is { Count: > 0 } names)
            {
                throw new InvalidOperationException($"A node joins a cluster fresh, but this data folder holds databases ({string.Join(", ", names)}): start the node with --Cluster:Passive or --Cluster:Join on an empty data folder, or add it without them and move the databases afterwards.");
            }
            await StartRaftAsync(coldStart: false, token).ConfigureAwait(false);
            if (_options.Join is { } join)
            {
                _joining = JoinLoopAsync(join, _stopping.Token);
            }
        }
    }

    private async Task StartRaftAsync(bool coldStart, CancellationToken token)
    {
        _stateMachine = new ClusterStateMachine(new DirectoryInfo(Path.Combine(_folder, "snapshots")), _options.SnapshotEvery);
        _stateMachine.Changed += OnStateChanged;
        _raft = await RaftHost.StartAsync(_folder, Url!, coldStart, _options, _stateMachine, _http, _loggerFactory, token).ConfigureAwait(false);
        _local.Start(State);
        _watchingMentors = WatchMentorsAsync(_stopping.Token);
        _reconciling = ReconcileLoopAsync(_stopping.Token);
        _watchingPromotables = WatchPromotablesAsync(_stopping.Token);
        _watchingCertificates = WatchNodeCertificatesAsync(_stopping.Token);
    }

    /// <summary>The first listening address as a URL others can use (a wildcard host read as 127.0.0.1); null for port 0 or none.</summary>
    private static string? SelfUrlFrom(IReadOnlyList<string> listening)
    {
        foreach (var address in listening)
        {
            var url = address.Replace("://+", "://127.0.0.1", StringComparison.Ordinal)
                .Replace("://*", "://127.0.0.1", StringComparison.Ordinal)
                .Replace("://0.0.0.0", "://127.0.0.1", StringComparison.Ordinal)
                .Replace("://[::]", "://127.0.0.1", StringComparison.Ordinal);
            if (ClusterUrls.Normalize(url) is { } normalized)
            {
                return normalized;
            }
        }
        return null;
    }

    /// <summary>
    /// Proposes <paramref name="command"/> and waits until it is committed and applied here.
    /// </summary>
    /// <exception cref="NotLeaderException">This node does not lead (the caller passes the request on to the leader).</exception>
    /// <exception cref="ClusterException">The state refused the command (<see cref="ClusterState.Apply"/>).</exception>
    public async Task<long> ExecuteAsync(ClusterCommand command, CancellationToken token)
    {
        if (_raft is not { } raft)
        {
            throw new ClusterException("This server is not part of a cluster: add a node first (PUT /admin/cluster/node?url=...).");
        }
        using var timeout = CancellationTokenSource.CreateLinkedTokenSource(token, _stopping.Token);
        timeout.CancelAfter(TimeSpan.FromSeconds(30));
        if (raft.Cluster.LeadershipToken.IsCancellationRequested)
        {
            if (raft.Cluster.Leader is not { IsRemote: false })
            {
                throw NotLeader();
            }
            // Elected a moment ago: the leader state (and its token) follows within an election timeout.
            using var settling = CancellationTokenSource.CreateLinkedTokenSource(timeout.Token);
            settling.CancelAfter(TimeSpan.FromMilliseconds(_options.ElectionTimeoutMs * 2));
            try
            {
                await raft.Cluster.WaitForLeadershipAsync(settling.Token).ConfigureAwait(false);
            }
            catch (OperationCanceledException) when (!token.IsCancellationRequested)
            {
                throw NotLeader();
            }
        }
        _stateMachine!.Expect(command.Id);
        string? refused;
        try
        {
            await raft.Cluster.ReplicateAsync(ClusterStateMachine.Serialize(command), context: null, timeout.Token).ConfigureAwait(false);
        }
        catch (DotNext.Net.Cluster.Consensus.Raft.NotLeaderException)
        {
            throw NotLeader();
        }
        catch (OperationCanceledException) when (!token.IsCancellationRequested)
        {
            throw new NotLeaderException("The cluster did not commit the change within 30 s: a majority of its nodes may be down. Retry when they are back (GET /cluster/topology shows them).");
        }
        finally
        {
            refused = _stateMachine.TakeOutcome(command.Id);
        }
        if (refused is not null)
        {
            throw new ClusterException(refused);
        }
        return raft.Cluster.AuditTrail.LastCommittedEntryIndex;
    }

    /// <summary>The error for a change that reached a node that does not lead, naming the leader when one is known.</summary>
    public NotLeaderException NotLeader() => Leader is var (tag, url)
        ? new NotLeaderException($"Node {NodeTag} is not the cluster's leader: send cluster changes to node {tag} at {url}.", tag, url)
        : new NotLeaderException($"The cluster has no leader at the moment (an election, or a majority of its nodes is down); retry shortly.");

    private void OnStateChanged(ClusterState before, ClusterState after)
    {
        if (_identity is null && Url is not null && after.TagOf(Url) is { } tag)
        {
            try
            {
                LearnIdentity(new NodeIdentity(tag, Url, Founder: false));
            }
            catch (Exception e) when (e is IOException or UnauthorizedAccessException or InvalidOperationException)
            {
                // Not thrown into DotNext's applier: the node stays passive (tag ?), and says why.
                LogIdentityFailed(_logger, tag, e);
            }
        }
        _local.Enqueue(after);
    }

    private void LearnIdentity(NodeIdentity identity)
    {
        identity.Save(_folder);
        _databases().SetNodeTag(identity.Tag);
        _identity = identity;
        LogIdentity(_logger, identity.Tag, identity.Url);
    }

    public async ValueTask DisposeAsync()
    {
        await _stopping.CancelAsync().ConfigureAwait(false);
        await _joining.ConfigureAwait(ConfigureAwaitOptions.SuppressThrowing);
        await _watchingMentors.ConfigureAwait(ConfigureAwaitOptions.SuppressThrowing);
        await _reconciling.ConfigureAwait(ConfigureAwaitOptions.SuppressThrowing);
        await _watchingPromotables.ConfigureAwait(ConfigureAwaitOptions.SuppressThrowing);
        await _watchingCertificates.ConfigureAwait(ConfigureAwaitOptions.SuppressThrowing);
        await _local.DisposeAsync().ConfigureAwait(false);
        if (_raft is { } raft)
        {
            await raft.DisposeAsync().ConfigureAwait(false);
        }
        if (_stateMachine is not null)
        {
            await _stateMachine.DisposeAsync().ConfigureAwait(false);
        }
        _stopping.Dispose();
        _lifecycle.Dispose();
        _membership.Dispose();
        _client.Dispose();
        LeaderClient.Dispose();
    }

    [LoggerMessage(EventId = 700, Level = LogLevel.Information, Message = "This node is {Tag} of its cluster, at {Url}")]
    private static partial void LogIdentity(ILogger logger, string tag, string url);

    [LoggerMessage(EventId = 705, Level = LogLevel.Error, Message = "This node was added to its cluster as {Tag} but could not take that identity; it stays passive")]
    private static partial void LogIdentityFailed(ILogger logger, string tag, Exception exception);

    [LoggerMessage(EventId = 701, Level = LogLevel.Warning, Message = "This node keeps the URL it was added with, {Url}; PublicServerUrl {Configured} is ignored (remove the node and add it again to change it)")]
    private static partial void LogUrlKept(ILogger logger, string url, string configured);
}
