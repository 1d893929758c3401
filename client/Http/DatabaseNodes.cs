using System.Collections.Concurrent;

namespace Jackdaw.Client.Http;

/// <summary>
/// What the store knows of one database's nodes: the topology learned from <c>GET /topology</c>
/// (or, until a server answered it, the store's URLs), the failed nodes and their health checks,
/// and the background refreshes. One per database, made on its first request.
/// </summary>
internal sealed class DatabaseNodes
{
    /// <summary>The first health check of a failed node (RavenDB's client waits as long).</summary>
    private static readonly TimeSpan FirstHealthCheck = TimeSpan.FromMilliseconds(100);

    /// <summary>The second health check; each later one waits 100 ms longer than the one before.</summary>
    private static readonly TimeSpan HealthCheckPeriod = TimeSpan.FromSeconds(5);

    /// <summary>How often <see cref="ReadBalanceBehavior.FastestNode"/> tests the nodes' speed again (RavenDB's clients: every minute).</summary>
    private static readonly TimeSpan SpeedTestPeriod = TimeSpan.FromMinutes(1);

    /// <summary>How often a topology made from the store's URLs is asked for again, while no server answered one.</summary>
    private static readonly TimeSpan FallbackRefreshPeriod = TimeSpan.FromSeconds(5);

    private readonly RequestExecutor _executor;
    private readonly object _lock = new();
    private readonly ConcurrentDictionary<string, byte> _checking = new(StringComparer.OrdinalIgnoreCase);
    private NodeSelector? _selector;
    private Task<NodeSelector>? _first;
    private volatile bool _fromServer;
    private int _refreshing;
    private long _lastFallbackRefresh;
    private ClientConfiguration? _clientConfiguration;
    private string _clientConfigurationEtagHeader = "\"0\"";
    private int _configuring;
    private int _speedTests;

    public DatabaseNodes(RequestExecutor executor, string database)
    {
        _executor = executor;
        Database = database;
    }

    public string Database { get; }

    /// <summary>The node selector, once the first topology update is over.</summary>
    public NodeSelector? Selector => Volatile.Read(ref _selector);

    /// <summary>The topology etag the requests carry in <c>Topology-Etag</c>, quoted as RavenDB's clients send it; null when updates are off.</summary>
    public string? TopologyEtagHeader => _executor.TopologyUpdatesDisabled || Selector is not { } selector ? null : selector.TopologyEtagHeader;

    /// <summary>The etag of the client configuration the store holds, quoted as RavenDB's clients send it in <c>Client-Configuration-Etag</c> (0: none); made once per configuration.</summary>
    public string ClientConfigurationEtagHeader => Volatile.Read(ref _clientConfigurationEtagHeader);

    /// <summary>The server's client configuration of the database, once one was read.</summary>
    public ClientConfiguration? ClientConfiguration => Volatile.Read(ref _clientConfiguration);

    /// <summary>How a session's reads are balanced: as the server's client configuration says, else as the conventions do.</summary>
    public ReadBalanceBehavior ReadBalanceBehavior =>
        Volatile.Read(ref _clientConfiguration) is { Disabled: false, ReadBalanceBehavior: { } configured } ? configured : _executor.ReadBalanceBehavior;

    /// <summary>
    /// Reads the database's client configuration from <paramref name="from"/> in the background (one
    /// read at a time), after an answer said it changed. A failed read changes nothing.
    /// </summary>
    public void RefreshClientConfigurationInBackground(ServerNode from)
    {
        if (Interlocked.CompareExchange(ref _configuring, 1, 0) != 0)
        {
            return;
        }

        _ = Task.Run(async () =>
        {
            try
            {
                var configuration = await _executor.FetchClientConfigurationAsync(from.Url, Database, _executor.Disposing).ConfigureAwait(false);
                Volatile.Write(ref _clientConfiguration, configuration);
                Volatile.Write(ref _clientConfigurationEtagHeader, "\"" + configuration.Etag.ToString(System.Globalization.CultureInfo.InvariantCulture) + "\"");
                if (Selector is { } selector)
                {
                    StartSpeedTestsIfFastest(selector);
                }
            }
            catch (Exception e) when (e is JackdawException or OperationCanceledException)
            {
                // The next answer that says so asks again.
            }
            finally
            {
                Volatile.Write(ref _configuring, 0);
            }
        });
    }

    /// <summary>
    /// The selector, after the first topology update: the first of the store's URLs whose server
    /// answers <c>GET /topology?name=</c> gives the nodes. A missing database (a topology without
    /// nodes included) or a refused access throws (every node would say the same) and the next
    /// request asks again; so does a single URL that cannot be reached. When none of several URLs
    /// answers, the store's URLs stand in for the nodes and the topology is asked for again later.
    /// </summary>
    public ValueTask<NodeSelector> GetSelectorAsync(CancellationToken token)
    {
        if (Selector is { } selector)
        {
            if (!_fromServer)
            {
                RefreshFallback();
            }

            return new ValueTask<NodeSelector>(selector);
        }

        Task<NodeSelector> first;
        lock (_lock)
        {
            // Started on the pool: a failure it met at once would otherwise clear _first here,
            // inside the assignment, and leave the failed task in it.
            first = _first ??= Task.Run(FirstUpdateAsync);
        }

        return new ValueTask<NodeSelector>(first.WaitAsync(token));
    }

    private async Task<NodeSelector> FirstUpdateAsync()
    {
        try
        {
            if (_executor.TopologyUpdatesDisabled)
            {
                _fromServer = true;
                return Publish(new NodeSelector(_executor.TopologyFromUrls(Database)));
            }

            foreach (var url in _executor.InitialUrls)
            {
                try
                {
                    var topology = await _executor.FetchTopologyAsync(url, Database, _executor.Disposing).ConfigureAwait(false);
                    _fromServer = true;
                    return Publish(new NodeSelector(topology));
                }
                catch (ServerUnavailableException) when (_executor.InitialUrls.Count == 1)
                {
                    // No other URL to try, and the request would only meet the same failure again
                    // (twice the connect timeout or the request timeout): the next request asks again.
                    throw;
                }
                catch (JackdawException e) when (e is not (DatabaseDoesNotExistException or AuthorizationException or CertificateException))
                {
                    // That server is down or has no topology to give (an older server, a proxy): try the next.
                }
            }

            Volatile.Write(ref _lastFallbackRefresh, Environment.TickCount64);
            return Publish(new NodeSelector(_executor.TopologyFromUrls(Database)));
        }
        catch
        {
            lock (_lock)
            {
                _first = null;
            }

            throw;
        }
    }

    private NodeSelector Publish(NodeSelector selector)
    {
        Volatile.Write(ref _selector, selector);
        StartSpeedTestsIfFastest(selector);
        return selector;
    }

    /// <summary>Under <see cref="ReadBalanceBehavior.FastestNode"/>: a speed test now, and one every minute while the store lives.</summary>
    private void StartSpeedTestsIfFastest(NodeSelector selector)
    {
        if (ReadBalanceBehavior != ReadBalanceBehavior.FastestNode)
        {
            return;
        }

        selector.StartSpeedTest();
        if (Interlocked.Exchange(ref _speedTests, 1) != 0)
        {
            return;
        }

        _ = Task.Run(async () =>
        {
            try
            {
                while (true)
                {
                    await Task.Delay(SpeedTestPeriod, _executor.Disposing).ConfigureAwait(false);
                    if (ReadBalanceBehavior == ReadBalanceBehavior.FastestNode)
                    {
                        Selector?.StartSpeedTest();
                    }
                }
            }
            catch (OperationCanceledException)
            {
                // The store was disposed.
            }
        });
    }

    private void RefreshFallback()
    {
        var last = Volatile.Read(ref _lastFallbackRefresh);
        if (Environment.TickCount64 - last >= FallbackRefreshPeriod.TotalMilliseconds
            && Interlocked.CompareExchange(ref _lastFallbackRefresh, Environment.TickCount64, last) == last)
        {
            RefreshInBackground(null);
        }
    }

    /// <summary>
    /// Asks for the topology again, in the background (one refresh at a time): from
    /// <paramref name="from"/> (the node that said <c>Refresh-Topology</c>), else from each node in
    /// order of preference. A newer topology replaces the old one; a failed refresh changes nothing.
    /// </summary>
    public void RefreshInBackground(ServerNode? from)
    {
        if (_executor.TopologyUpdatesDisabled || Selector is null || Interlocked.CompareExchange(ref _refreshing, 1, 0) != 0)
        {
            return;
        }

        LastRefresh = Task.Run(async () =>
        {
            try
            {
                await RefreshAsync(from).ConfigureAwait(false);
            }
            finally
            {
                Volatile.Write(ref _refreshing, 0);
            }
        });
    }

    /// <summary>The last background refresh started (for tests: it never fails).</summary>
    internal Task LastRefresh { get; private set; } = Task.CompletedTask;

    private async Task RefreshAsync(ServerNode? from)
    {
        var selector = Selector!;
        var candidates = new List<string>();
        if (from is not null)
        {
            candidates.Add(from.Url);
        }

        candidates.AddRange(selector.Topology.Nodes.Select(n => n.Url));
        candidates.AddRange(_executor.InitialUrls);
        try
        {
            // The preferred node first (all nodes may have failed: the selector still answers one).
            candidates.Insert(from is null ? 0 : 1, selector.GetPreferredNode().Node.Url);
        }
        catch (JackdawException)
        {
            // No node to prefer: the list above is enough.
        }

        foreach (var url in candidates.Distinct(StringComparer.OrdinalIgnoreCase))
        {
            try
            {
                var topology = await _executor.FetchTopologyAsync(url, Database, _executor.Disposing).ConfigureAwait(false);
                // A topology made from the store's URLs gives way to the first one a server answers.
                if (selector.TryUpdate(topology, force: !_fromServer))
                {
                    CheckFailedNodes(selector);
                }

                _fromServer = true;
                return;
            }
            catch (Exception e) when (e is JackdawException or OperationCanceledException)
            {
                // Try the next node; if none answers, the topology stays as it is.
            }
        }
    }

    /// <summary>
    /// Counts a failed request on <paramref name="node"/>, so that the next requests prefer the
    /// other nodes, and checks it in the background until it answers again (RavenDB's health
    /// check: after 100 ms, then every 5 s and 100 ms longer each time). A topology of one node
    /// has nothing to prefer, so its node is not checked. A node that answers without the database
    /// is not checked again until a new topology is taken.
    /// </summary>
    public void OnFailed(NodeSelector selector, ServerNode node)
    {
        selector.OnFailedRequest(node);
        StartCheck(selector, node);
    }

    /// <summary>Whether a health check of <paramref name="node"/> is running (for tests).</summary>
    internal bool IsChecking(ServerNode node) => _checking.ContainsKey(node.Url);

    private void StartCheck(NodeSelector selector, ServerNode node)
    {
        if (selector.Topology.Nodes.Count < 2 || !_checking.TryAdd(node.Url, 0))
        {
            return;
        }

        _ = Task.Run(() => CheckUntilHealthyAsync(node));
    }

    /// <summary>A new topology was taken: its nodes still failed (carried over) are checked, those a check gave up on included.</summary>
    private void CheckFailedNodes(NodeSelector selector)
    {
        foreach (var node in selector.Topology.Nodes)
        {
            if (selector.IsFailed(node))
            {
                StartCheck(selector, node);
            }
        }
    }

    private async Task CheckUntilHealthyAsync(ServerNode node)
    {
        var delay = FirstHealthCheck;
        var missing = false;
        try
        {
            while (true)
            {
                await Task.Delay(delay, _executor.Disposing).ConfigureAwait(false);
                // A refresh may have replaced the topology meanwhile: check the node of that name.
                var selector = Selector;
                if (selector is null || !selector.Contains(node) || !selector.IsFailed(node))
                {
                    break;
                }

                var health = await _executor.CheckHealthAsync(node.Url, Database, _executor.Disposing).ConfigureAwait(false);
                if (health == RequestExecutor.Health.Healthy)
                {
                    selector.Restore(node);
                    break;
                }

                if (health == RequestExecutor.Health.DatabaseMissing)
                {
                    // Checking would go on for as long as the database is missing there (forever,
                    // once it moved): the node stays failed, and a new topology checks it again.
                    missing = true;
                    break;
                }

                delay = delay < HealthCheckPeriod ? HealthCheckPeriod : delay + TimeSpan.FromMilliseconds(100);
            }
        }
        catch (OperationCanceledException)
        {
            // The store was disposed.
            return;
        }
        finally
        {
            _checking.TryRemove(node.Url, out _);
        }

        if (missing)
        {
            // The topology may say where the database went.
            RefreshInBackground(null);
            return;
        }

        // A request may have failed on the node again between its check and the removal above,
        // finding a check still running: that node must be checked again, or it stays failed.
        if (Selector is { } current && current.Contains(node) && current.IsFailed(node) && _checking.TryAdd(node.Url, 0))
        {
            _ = Task.Run(() => CheckUntilHealthyAsync(node));
        }
    }
}
