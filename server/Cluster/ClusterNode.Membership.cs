using System.Net.Http.Json;
using System.Text.Json;
using Jackdaw.Server.Errors;

namespace Jackdaw.Server.Cluster;

/// <summary>Members: adding and removing nodes, founding a cluster, joining one, stepping down.</summary>
public sealed partial class ClusterNode
{
    private readonly SemaphoreSlim _membership = new(1, 1);

    /// <summary>
    /// Adds the node at <paramref name="url"/> with <paramref name="tag"/> (or the next free letter):
    /// RavenDB's <c>PUT /admin/cluster/node?url=&amp;tag=</c>, on the leader. A lone server founds a
    /// cluster first (it becomes A, with its databases). The node must be passive: a fresh server
    /// started with <c>Cluster:Passive</c> or <c>Cluster:Join</c>. It is caught up and made a voting
    /// member of Raft, then the command naming its tag is committed; the node learns its tag from it.
    /// </summary>
    /// <returns>The tag the node was added with.</returns>
    public async Task<string> AddNodeAsync(string url, string? tag, string commandId, CancellationToken token)
    {
        var normalized = ClusterUrls.Normalize(url)
            ?? throw new ClusterException($"'{url}' is not a node URL: give the absolute http or https address of a server, without a path (url=http://10.0.0.2:8080).");
        if (tag is not null && !IsValidTag(tag))
        {
            throw new ClusterException($"'{tag}' is not a node tag: 1 to 4 upper-case letters (tag=B).");
        }
        if (IsPassive)
        {
            throw new NotLeaderException("This node waits to be added to a cluster (Cluster:Passive) and leads none: add nodes on a member of the cluster.");
        }
        if (Url is null)
        {
            throw new ClusterException("This server's own URL is unknown (it listens on port 0): set PublicServerUrl before forming a cluster.");
        }
        if (ClusterUrls.Same(normalized, Url))
        {
            throw new ClusterException($"{normalized} is this node's own URL: a node cannot be added to itself.");
        }
        if (_raft is null)
        {
            // A lone server founds a cluster only for an add that can go ahead: a typo in the URL
            // must leave it lone, as it was.
            if (tag == NodeTag)
            {
                throw new ClusterException($"Tag {tag} is this server's own; choose another or leave tag out.");
            }
            await CheckPassiveAsync(normalized, token).ConfigureAwait(false);
            await FoundAsync(token).ConfigureAwait(false);
        }
        else
        {
            // A founding another add started may still be recording this node as a member: an add
            // that went on meanwhile would see no member yet and be offered this node's own tag.
            await _lifecycle.WaitAsync(token).ConfigureAwait(false);
            _lifecycle.Release();
        }
        if (!IsLeader)
        {
            throw NotLeader();
        }
        // One membership change at a time (DotNext refuses concurrent ones, and two nodes added at
        // once would be offered the same free tag).
        await _membership.WaitAsync(token).ConfigureAwait(false);
        try
        {
            return await AddNodeLockedAsync(normalized, tag, commandId, token).ConfigureAwait(false);
        }
        finally
        {
            _membership.Release();
        }
    }

    private async Task<string> AddNodeLockedAsync(string normalized, string? tag, string commandId, CancellationToken token)
    {
        var state = State;
        if (state.TagOf(normalized) is { } existing)
        {
            if (state.WasApplied(commandId) || (tag is null || tag == existing))
            {
                return existing;
            }
            throw new ClusterException($"The node at {normalized} is already a member, as {existing}.");
        }
        // An add left half-way (by this request's earlier try, or another leader's) is resumed.
        var reserved = state.JoiningTagOf(normalized);
        if (reserved is not null && tag is not null && tag != reserved)
        {
            throw new ClusterException($"The node at {normalized} is being added as {reserved}: retry with tag={reserved}, or remove {reserved} first (DELETE /admin/cluster/node?nodeTag={reserved}).");
        }
        if (reserved is null && tag is not null && (state.Members.TryGetValue(tag, out var taken) || state.Joining.TryGetValue(tag, out taken)))
        {
            throw new ClusterException($"Tag {tag} is already taken by the node at {taken}; choose another or leave tag out.");
        }
        if (tag is not null && tag == NodeTag && reserved is null)
        {
            throw new ClusterException($"Tag {tag} is this node's own; choose another or leave tag out.");
        }
        tag = reserved ?? tag ?? NextFreeTag(state, NodeTag);
        var thumbprint = await CheckPassiveAsync(normalized, token).ConfigureAwait(false);
        // The tag first, then Raft's membership, then the member entry: a failure between two steps
        // leaves a reservation, which the leader completes or drops (ClusterNode.Reconciliation.cs),
        // never a Raft voter the state has no tag for.
        if (reserved is null)
        {
            await ExecuteAsync(new ClusterCommand($"{commandId}/reserve", ClusterCommandKind.ReserveMember) { Tag = tag, Url = normalized, Thumbprint = thumbprint }, token).ConfigureAwait(false);
        }
        try
        {
            await AddVoterAsync(normalized, token).ConfigureAwait(false);
        }
        catch (ClusterException)
        {
            // DotNext could not catch the node up: nothing half-done is left behind.
            await ExecuteAsync(new ClusterCommand($"{commandId}/unreserve", ClusterCommandKind.RemoveMember) { Tag = tag }, token).ConfigureAwait(false);
            throw;
        }
        await ExecuteAsync(new ClusterCommand(commandId, ClusterCommandKind.PutMember) { Tag = tag, Url = normalized, Thumbprint = thumbprint }, token).ConfigureAwait(false);
        return tag;
    }

    /// <summary>
    /// Removes member <paramref name="tag"/>: its databases lose it (a database held by it alone is
    /// left without nodes and is deleted), then it leaves Raft's membership. The leader cannot remove
    /// itself: it steps down first (<see cref="ReelectAsync"/>).
    /// </summary>
    public async Task RemoveNodeAsync(string tag, string commandId, CancellationToken token)
    {
        if (!IsClustered)
        {
            throw new ClusterException(tag == NodeTag
                ? "This server is a cluster of one: its only node cannot be removed."
                : $"Node '{tag}' is not a member of the cluster (this server is a cluster of one, {NodeTag}).");
        }
        if (!IsLeader)
        {
            throw NotLeader();
        }
        if (!State.Members.TryGetValue(tag, out var url) && !State.Joining.TryGetValue(tag, out url))
        {
            throw new ClusterException($"Node '{tag}' is not a member of the cluster; the members are {string.Join(", ", State.Members.Keys)}.");
        }
        if (tag == NodeTag)
        {
            throw new ClusterException($"Node {tag} leads the cluster and cannot remove itself: step down first (POST /admin/cluster/reelect), then remove it on the new leader.");
        }
        await _membership.WaitAsync(token).ConfigureAwait(false);
        try
        {
            await RemoveNodeLockedAsync(tag, url, commandId, token).ConfigureAwait(false);
        }
        finally
        {
            _membership.Release();
        }
    }

    private async Task RemoveNodeLockedAsync(string tag, string url, string commandId, CancellationToken token)
    {
        var member = State.Members.ContainsKey(tag);
        await ExecuteAsync(new ClusterCommand(commandId, ClusterCommandKind.RemoveMember) { Tag = tag }, token).ConfigureAwait(false);
        if (member)
        {
            // The entry is committed once a majority holds it, maybe without the node removed; once out
            // of Raft's membership it is sent nothing more. Give it (up to 10 s, if it answers) the
            // time to apply its own removal, so that it deletes the copies its databases lost.
            await WaitUntilAppliedAsync(url, tag, token).ConfigureAwait(false);
        }
        // A failure from here on leaves a voter without a tag, which the leader removes (ClusterNode.Reconciliation.cs).
        await RemoveVoterAsync(url, token).ConfigureAwait(false);
    }

    /// <summary>Until the node at <paramref name="url"/> no longer lists <paramref name="tag"/> among its members, it stops answering, or 10 s pass.</summary>
    private async Task WaitUntilAppliedAsync(string url, string tag, CancellationToken token)
    {
        var deadline = DateTime.UtcNow + TimeSpan.FromSeconds(10);
        while (DateTime.UtcNow < deadline)
        {
            try
            {
                var topology = await _client.GetFromJsonAsync<JsonElement>(url + "/cluster/topology", token).ConfigureAwait(false);
                if (!topology.GetProperty("Topology").GetProperty("Members").TryGetProperty(tag, out _))
                {
                    return;
                }
            }
            catch (Exception e) when (e is HttpRequestException or TaskCanceledException or JsonException or KeyNotFoundException or InvalidOperationException && !token.IsCancellationRequested)
            {
                return;
            }
            await Task.Delay(50, token).ConfigureAwait(false);
        }
    }

    /// <summary>The leader steps down so that another node is elected (RavenDB's <c>POST /admin/cluster/reelect</c>).</summary>
    public async Task ReelectAsync(CancellationToken token)
    {
        if (!IsClustered)
        {
            throw new ClusterException("This server is a cluster of one: there is no other node to elect.");
        }
        if (!IsLeader)
        {
            throw NotLeader();
        }
        await _raft!.Cluster.ResignAsync(token).ConfigureAwait(false);
    }

    /// <summary>
    /// Makes this lone server the first node of a cluster: Raft starts with it as the only member
    /// (it leads at once), and the state gets it as A and a record of each local database on A, with
    /// its analyzers and static index definitions.
    /// </summary>
    private async Task FoundAsync(CancellationToken token)
    {
        await _lifecycle.WaitAsync(token).ConfigureAwait(false);
        try
        {
            if (_raft is not null)
            {
                return;
            }
            var identity = new NodeIdentity(NodeTag, Url!, Founder: true);
            // The identity first: a crash before Raft's first commit restarts as the founder again.
            identity.Save(_folder);
            _identity = identity;
            // From here on the founding is the server's, not the request's: a client that gives
            // up (or times out) half-way must not leave a cluster without its first member.
            var stopping = _stopping.Token;
            await StartRaftAsync(coldStart: true, stopping).ConfigureAwait(false);
            using var wait = CancellationTokenSource.CreateLinkedTokenSource(stopping);
            wait.CancelAfter(TimeSpan.FromSeconds(30));
            await _raft!.Cluster.WaitForLeadershipAsync(wait.Token).ConfigureAwait(false);
            if (!State.Members.ContainsKey(identity.Tag))
            {
                await ExecuteAsync(new ClusterCommand($"found/{identity.Tag}", ClusterCommandKind.PutMember) { Tag = identity.Tag, Url = identity.Url, Thumbprint = _http.Certificate?.GetCertHashString() }, stopping).ConfigureAwait(false);
            }
            foreach (var name in _databases().Names)
            {
                if (!State.Databases.ContainsKey(name))
                {
                    await ExecuteAsync(new ClusterCommand($"found/db/{name}", ClusterCommandKind.PutDatabase) { Database = name, Nodes = [identity.Tag] }, stopping).ConfigureAwait(false);
                }
                // Analyzers before the indexes that name them.
                await RecordLocalAnalyzersAsync(name, stopping).ConfigureAwait(false);
                await RecordLocalIndexesAsync(name, stopping).ConfigureAwait(false);
                await RecordLocalSubscriptionsAsync(name, stopping).ConfigureAwait(false);
                await RecordLocalBackupsAsync(name, stopping).ConfigureAwait(false);
                await RecordLocalConflictSolverAsync(name, stopping).ConfigureAwait(false);
                await RecordLocalRevisionsAsync(name, stopping).ConfigureAwait(false);
            }
            await RecordLocalClientConfigurationsAsync(_databases().Names, stopping).ConfigureAwait(false);
            await RecordLocalCertificatesAsync(token).ConfigureAwait(false);
            LogFounded(_logger, identity.Tag, identity.Url);
        }
        finally
        {
            _lifecycle.Release();
        }
    }

    /// <summary>Refuses a node that is not waiting to be added (a lone server, or a member of a cluster).</summary>
    /// <returns>The thumbprint of the server certificate the node presented (null over plain HTTP).</returns>
    private async Task<string?> CheckPassiveAsync(string url, CancellationToken token)
    {
        JsonElement topology;
        string? thumbprint;
        try
        {
            // A client of its own, to see the node's certificate (recorded: on a secured cluster
            // only the nodes' certificates may speak Raft's protocol).
            (topology, thumbprint) = await GetObservingCertificateAsync(url + "/cluster/topology", token).ConfigureAwait(false);
        }
        catch (Exception e) when (e is HttpRequestException or TaskCanceledException or JsonException or NotSupportedException)
        {
            throw new ClusterException($"The node at {url} does not answer ({e.Message}); start it with --Cluster:Passive=true (a fresh data folder) and check that this node reaches it.", e);
        }
        var nodeTag = topology.TryGetProperty("NodeTag", out var value) && value.ValueKind == JsonValueKind.String ? value.GetString() : null;
        if (nodeTag != PassiveTag)
        {
            throw new ClusterException($"The node at {url} is not waiting to be added (it is node {nodeTag ?? "(unknown)"} of a cluster or a lone server): start it on a fresh data folder with --Cluster:Passive=true, then add it.");
        }
        // It learns its tag only from a member entry with the URL it knows itself by (and Raft
        // names it by that URL): added by another spelling, it would wait for ever.
        if (topology.TryGetProperty("NodeUrl", out var own) && own.ValueKind == JsonValueKind.String
            && own.GetString() is { } ownUrl && !ClusterUrls.Same(ownUrl, url))
        {
            throw new ClusterException($"The node at {url} knows itself as {ownUrl}: add it with url={ownUrl}, or start it with --PublicServerUrl {url}.");
        }
        return thumbprint;
    }

    /// <summary><c>Cluster:Join</c>: asks the member at <paramref name="join"/> to add this node, every 2 s, until a committed state lists it.</summary>
    private async Task JoinLoopAsync(string join, CancellationToken token)
    {
        var target = $"{join.TrimEnd('/')}/admin/cluster/node?url={Uri.EscapeDataString(Url!)}";
        while (_identity is null && !token.IsCancellationRequested)
        {
            try
            {
                using var response = await _client.PutAsync(target, content: null, token).ConfigureAwait(false);
                if (!response.IsSuccessStatusCode)
                {
                    LogJoinRefused(_logger, join, (int)response.StatusCode, await response.Content.ReadAsStringAsync(token).ConfigureAwait(false));
                }
            }
            catch (Exception e) when (e is HttpRequestException or TaskCanceledException && !token.IsCancellationRequested)
            {
                LogJoinUnreachable(_logger, join, e.Message);
            }
            try
            {
                await Task.Delay(TimeSpan.FromSeconds(2), token).ConfigureAwait(false);
            }
            catch (OperationCanceledException)
            {
                return;
            }
        }
    }

    private static bool IsValidTag(string tag) => tag.Length is >= 1 and <= 4 && tag.All(char.IsAsciiLetterUpper);

    private static string NextFreeTag(ClusterState state, string own)
    {
        for (var letter = 'A'; letter <= 'Z'; letter++)
        {
            var tag = letter.ToString();
            if (tag != own && !state.Members.ContainsKey(tag) && !state.Joining.ContainsKey(tag))
            {
                return tag;
            }
        }
        throw new ClusterException("Every tag from A to Z is taken: give the node a tag of two to four letters (tag=AB).");
    }

    [LoggerMessage(EventId = 702, Level = LogLevel.Information, Message = "This server founded a cluster as node {Tag} at {Url}")]
    private static partial void LogFounded(ILogger logger, string tag, string url);

    [LoggerMessage(EventId = 703, Level = LogLevel.Information, Message = "Asked {Join} to add this node: {Status} {Body}")]
    private static partial void LogJoinRefused(ILogger logger, string join, int status, string body);

    [LoggerMessage(EventId = 704, Level = LogLevel.Debug, Message = "Asked {Join} to add this node: {Error}")]
    private static partial void LogJoinUnreachable(ILogger logger, string join, string error);
}
