using System.Net.Http.Json;
using System.Text.Json;

namespace Jackdaw.Server.Tests.Infrastructure;

/// <summary>
/// N server processes on loopback, each with its own folder under one temp folder, formed into a
/// cluster: node 0 is a lone server, the others start passive and are added through node 0
/// (<c>PUT /admin/cluster/node</c>), which becomes A and the others B, C, ... in order.
/// </summary>
public sealed class TestCluster : IAsyncDisposable
{
    private readonly TempFolder _folder = new("jackdaw-cluster");

    private TestCluster()
    {
    }

    public List<ClusterNodeProcess> Nodes { get; } = [];

    public HttpClient Http { get; } = new() { Timeout = TimeSpan.FromSeconds(60) };

    /// <summary>Generous: a loaded 2-core machine runs three servers and the test.</summary>
    public static readonly TimeSpan Timeout = TimeSpan.FromSeconds(60);

    /// <summary>Starts <paramref name="count"/> nodes; formed into one cluster unless <paramref name="form"/> is false (node 0 lone, the rest passive).</summary>
    /// <param name="arguments">More options for every node (<c>--Cluster:SnapshotEvery=3</c>).</param>
    public static async Task<TestCluster> StartAsync(int count, bool form = true, params string[] arguments)
    {
        var cluster = new TestCluster();
        var starts = Enumerable.Range(0, count)
            .Select(i => ClusterNodeProcess.StartAsync(Path.Combine(cluster._folder.Path, ((char)('a' + i)).ToString()), i == 0 ? arguments : [.. arguments, "--Cluster:Passive=true"]))
            .ToList();
        try
        {
            foreach (var start in starts)
            {
                cluster.Nodes.Add(await start);
            }
            if (form)
            {
                for (var i = 1; i < count; i++)
                {
                    var tag = ((char)('A' + i)).ToString();
                    using var added = await cluster.Http.PutAsync($"{cluster.Nodes[0].Url}/admin/cluster/node?url={Uri.EscapeDataString(cluster.Nodes[i].Url)}&tag={tag}", null);
                    Assert.True(added.IsSuccessStatusCode, $"Adding {cluster.Nodes[i].Url}: {(int)added.StatusCode} {await added.Content.ReadAsStringAsync()}");
                }
                foreach (var node in cluster.Nodes)
                {
                    await Poll.UntilAsync(async () => (await cluster.TopologyAsync(node)) is { } t && t.GetProperty("Topology").GetProperty("Members").EnumerateObject().Count() == count
                        && t.GetProperty("NodeTag").GetString() != "?", Timeout, $"{node.Url} to see {count} members");
                }
            }
            return cluster;
        }
        catch
        {
            // A node whose start had not been awaited when another failed is still ended.
            foreach (var start in starts)
            {
                try
                {
                    var node = await start;
                    if (!cluster.Nodes.Contains(node))
                    {
                        cluster.Nodes.Add(node);
                    }
                }
                catch (Exception)
                {
                    // That start's own failure: nothing of it to end.
                }
            }
            await cluster.DisposeAsync();
            throw;
        }
    }

    /// <summary>The node's <c>/cluster/topology</c>, or null when it does not answer.</summary>
    public async Task<JsonElement?> TopologyAsync(ClusterNodeProcess node)
    {
        if (!node.IsRunning || node.IsPaused)
        {
            return null;
        }
        try
        {
            using var cts = new CancellationTokenSource(TimeSpan.FromSeconds(5));
            return await Http.GetFromJsonAsync<JsonElement>($"{node.Url}/cluster/topology", cts.Token);
        }
        catch (Exception e) when (e is HttpRequestException or TaskCanceledException)
        {
            return null;
        }
    }

    /// <summary>The node that leads, as every running node that is not paused agrees; waits for one.</summary>
    public async Task<ClusterNodeProcess> WaitForLeaderAsync(ClusterNodeProcess? not = null)
    {
        ClusterNodeProcess? leader = null;
        await Poll.UntilAsync(async () =>
        {
            var tags = new HashSet<string?>();
            foreach (var node in Nodes.Where(n => n.IsRunning && !n.IsPaused))
            {
                var topology = await TopologyAsync(node);
                if (topology is not { } t || t.GetProperty("Leader").ValueKind != JsonValueKind.String)
                {
                    return false;
                }
                tags.Add(t.GetProperty("Leader").GetString());
            }
            if (tags.Count != 1)
            {
                return false;
            }
            leader = NodeByTag(tags.Single()!);
            return leader is not null && leader != not && leader.IsRunning && !leader.IsPaused;
        }, Timeout, "one leader all running nodes agree on");
        return leader!;
    }

    /// <summary>The node of <paramref name="tag"/> (A is node 0, B node 1, ...).</summary>
    public ClusterNodeProcess NodeByTag(string tag) => Nodes[tag[0] - 'A'];

    /// <summary>The databases a node holds copies of (<c>GET /admin/databases</c>; <c>GET /databases</c> lists the cluster's).</summary>
    public async Task<List<string>> DatabasesOnAsync(ClusterNodeProcess node)
    {
        var answer = await Http.GetFromJsonAsync<JsonElement>($"{node.Url}/admin/databases");
        return [.. answer.GetProperty("Databases").EnumerateArray().Select(d => d.GetString()!)];
    }

    public async ValueTask DisposeAsync()
    {
        foreach (var node in Nodes)
        {
            node.Dispose();
        }
        Http.Dispose();
        await Task.Yield();
        _folder.Dispose();
    }
}
