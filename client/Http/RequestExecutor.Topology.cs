using System.Net;
using System.Text.Json;

namespace Jackdaw.Client.Http;

/// <summary>The executor's requests about the nodes themselves: topologies, health checks, speed tests.</summary>
internal sealed partial class RequestExecutor
{
    /// <summary>
    /// <c>GET {url}/topology?name={database}</c>, from that server alone:
    /// <c>{"Etag":n,"Nodes":[{"Url","ClusterTag","Database","ServerRole"}]}</c>, as
    /// <see cref="NodeUrls.Adopt"/> takes it (one node keeps <paramref name="url"/>; no node is a
    /// missing database). The nodes' URLs join those server-wide requests may go to. Throws what the
    /// server answered, or why it could not be reached.
    /// </summary>
    public async Task<Topology> FetchTopologyAsync(string url, string database, CancellationToken token)
    {
        var body = await GetOnceAsync(url, "/topology?name=" + Uri.EscapeDataString(database), token).ConfigureAwait(false);
        var topology = NodeUrls.Adopt(ParseTopology(body, database, url), url, database);
        LearnUrls(topology);
        return topology;
    }

    /// <summary>A GET sent to <paramref name="url"/> alone (no failover): the answer's body, or what the server answered as an error, or why it could not be reached.</summary>
    private async Task<byte[]> GetOnceAsync(string url, string pathAndQuery, CancellationToken token)
    {
        var attempt = new Attempt(_client, HttpCompletionOption.ResponseContentRead, null, HttpMethod.Get, pathAndQuery, null, null);
        var (response, failure) = await TrySendOnceAsync(url, attempt, null, token).ConfigureAwait(false);
        if (response is null)
        {
            throw failure!;
        }

        using (response)
        {
            if (!response.IsSuccessStatusCode)
            {
                throw await CreateErrorAsync(response, attempt.Method, attempt.PathAndQuery, token).ConfigureAwait(false);
            }

            return await response.Content.ReadAsByteArrayAsync(token).ConfigureAwait(false);
        }
    }

    internal static Topology ParseTopology(ReadOnlySpan<byte> body, string database, string from)
    {
        try
        {
            using var json = JsonDocument.Parse(body.ToArray());
            var root = json.RootElement;
            if (root.ValueKind != JsonValueKind.Object)
            {
                throw new JsonException($"the answer is a JSON {root.ValueKind}, not an object");
            }

            var etag = root.TryGetProperty("Etag", out var e) && e.TryGetInt64(out var n) ? n : 0;
            var nodes = new List<ServerNode>();
            if (root.TryGetProperty("Nodes", out var array) && array.ValueKind == JsonValueKind.Array)
            {
                foreach (var node in array.EnumerateArray())
                {
                    if (node.ValueKind != JsonValueKind.Object)
                    {
                        continue;
                    }

                    var nodeUrl = node.TryGetProperty("Url", out var u) && u.ValueKind == JsonValueKind.String ? u.GetString()!.TrimEnd('/') : null;
                    if (string.IsNullOrEmpty(nodeUrl))
                    {
                        continue;
                    }

                    var tag = node.TryGetProperty("ClusterTag", out var t) && t.ValueKind == JsonValueKind.String ? t.GetString()! : "?";
                    var name = node.TryGetProperty("Database", out var d) && d.ValueKind == JsonValueKind.String ? d.GetString()! : database;
                    var role = node.TryGetProperty("ServerRole", out var r) && r.ValueKind == JsonValueKind.String && Enum.TryParse<ServerNode.Role>(r.GetString(), ignoreCase: true, out var parsed)
                        ? parsed
                        : ServerNode.Role.Member;
                    nodes.Add(new ServerNode(nodeUrl, name, tag, role));
                }
            }

            return new Topology(etag, nodes);
        }
        catch (JsonException e)
        {
            throw new JackdawException($"GET {from}/topology?name={database} answered with something that is not a topology: {e.Message}", e);
        }
    }

    /// <summary>
    /// <c>GET {url}/databases/{db}/configuration/client</c> (RavenDB's
    /// <c>GetClientConfigurationOperation</c>): <c>{"Etag":n,"Configuration":{"Disabled","ReadBalanceBehavior",...}|null}</c>.
    /// </summary>
    public async Task<ClientConfiguration> FetchClientConfigurationAsync(string url, string database, CancellationToken token)
    {
        var pathAndQuery = DocumentStore.DatabasePath(database) + "/configuration/client";
        var body = await GetOnceAsync(url, pathAndQuery, token).ConfigureAwait(false);
        try
        {
            using var json = JsonDocument.Parse(body);
            var root = json.RootElement;
            if (root.ValueKind != JsonValueKind.Object)
            {
                throw new JsonException($"the answer is a JSON {root.ValueKind}, not an object");
            }

            var etag = root.TryGetProperty("Etag", out var e) && e.TryGetInt64(out var n) ? n : 0;
            if (!root.TryGetProperty("Configuration", out var configuration) || configuration.ValueKind != JsonValueKind.Object)
            {
                return new ClientConfiguration { Etag = etag, Disabled = true };
            }

            return new ClientConfiguration
            {
                Etag = etag,
                Disabled = configuration.TryGetProperty("Disabled", out var disabled) && disabled.ValueKind == JsonValueKind.True,
                ReadBalanceBehavior = configuration.TryGetProperty("ReadBalanceBehavior", out var balance) && balance.ValueKind == JsonValueKind.String
                    && Enum.TryParse<ReadBalanceBehavior>(balance.GetString(), ignoreCase: true, out var parsed)
                    ? parsed
                    : null,
            };
        }
        catch (JsonException e)
        {
            throw new JackdawException($"GET {url}{pathAndQuery} answered with something that is not a client configuration: {e.Message}", e);
        }
    }

    /// <summary>Server-wide requests may go to every node a topology named, after the store's own URLs.</summary>
    private void LearnUrls(Topology topology)
    {
        while (true)
        {
            var current = Volatile.Read(ref _serverUrls);
            var added = new List<string>();
            foreach (var node in topology.Nodes)
            {
                if (!current.Any(u => NodeUrls.Same(u, node.Url)) && !added.Exists(u => NodeUrls.Same(u, node.Url)))
                {
                    added.Add(node.Url);
                }
            }

            if (added.Count == 0 || Interlocked.CompareExchange(ref _serverUrls, [.. current, .. added], current) == current)
            {
                return;
            }
        }
    }

    /// <summary>What a health check found.</summary>
    internal enum Health
    {
        /// <summary>The node answered 2xx: it serves the database again.</summary>
        Healthy,

        /// <summary>No answer, or an error: check again later.</summary>
        Down,

        /// <summary>The node answered, without the database (<c>Database-Missing</c>): checking again will not bring it back.</summary>
        DatabaseMissing,
    }

    /// <summary>RavenDB's response header naming the database a node does not hold (with a 503).</summary>
    private const string DatabaseMissingHeaderName = "Database-Missing";

    /// <summary>
    /// The health check of a failed node: <c>GET /databases/{db}/stats?failure=check</c> (RavenDB's
    /// clients use it on a server without <c>/databases/{db}/healthcheck</c>, which Jackdaw lacks).
    /// </summary>
    public async Task<Health> CheckHealthAsync(string url, string database, CancellationToken token)
    {
        var attempt = new Attempt(_client, HttpCompletionOption.ResponseContentRead, null, HttpMethod.Get, DocumentStore.DatabasePath(database) + "/stats?failure=check", null, null);
        try
        {
            var (response, _) = await TrySendOnceAsync(url, attempt, null, token).ConfigureAwait(false);
            using (response)
            {
                return response switch
                {
                    { IsSuccessStatusCode: true } => Health.Healthy,
                    { StatusCode: HttpStatusCode.ServiceUnavailable } when response.Headers.Contains(DatabaseMissingHeaderName) => Health.DatabaseMissing,
                    _ => Health.Down,
                };
            }
        }
        catch (JackdawException)
        {
            return Health.Down;
        }
    }

    /// <summary>
    /// A read during a speed test (<see cref="ReadBalanceBehavior.FastestNode"/>): sent to every
    /// node at once, as RavenDB's client does; the first node to answer successfully wins a round.
    /// Returns what <paramref name="chosen"/> (the node the read would have gone to) answered, so
    /// what a session reads does not depend on the race; the other answers are dropped as they come.
    /// </summary>
    /// <remarks>
    /// A refresh may have replaced the topology since <paramref name="chosen"/> was chosen: then it
    /// is not among the nodes raced, and the read goes to it alone, as outside a speed test.
    /// </remarks>
    internal Task<(HttpResponseMessage? Response, JackdawException? Failure)> RaceAsync(DatabaseNodes nodes, NodeSelector selector, ServerNode chosen, Attempt attempt, CancellationToken token)
    {
        var topology = selector.Topology;
        var mine = -1;
        for (var i = 0; i < topology.Nodes.Count; i++)
        {
            if (ReferenceEquals(topology.Nodes[i], chosen))
            {
                mine = i;
            }
        }

        if (mine < 0)
        {
            return TrySendOnceAsync(chosen.Url, attempt, nodes, token);
        }

        var tasks = topology.Nodes.Select(n => TrySendOnceAsync(n.Url, attempt, nodes, token)).ToArray();
        _ = RecordFastestAsync(selector, topology, tasks, mine);
        return tasks[mine];
    }

    /// <summary>Records the first node to answer successfully, and disposes every answer but the chosen node's.</summary>
    private static async Task RecordFastestAsync(NodeSelector selector, Topology topology, Task<(HttpResponseMessage? Response, JackdawException? Failure)>[] tasks, int chosen)
    {
        var pending = tasks.ToList();
        var recorded = false;
        while (pending.Count > 0)
        {
            var done = await Task.WhenAny(pending).ConfigureAwait(false);
            pending.Remove(done);
            var index = Array.IndexOf(tasks, done);
            if (!done.IsCompletedSuccessfully)
            {
                _ = done.Exception;
                continue;
            }

            if (!recorded && done.Result.Response is { IsSuccessStatusCode: true })
            {
                selector.RecordFastest(index, topology.Nodes[index]);
                recorded = true;
            }

            if (index != chosen)
            {
                done.Result.Response?.Dispose();
            }
        }
    }
}
