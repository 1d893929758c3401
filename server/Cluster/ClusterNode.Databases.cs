using System.Text;
using System.Text.Json;
using Jackdaw.Server.Errors;

namespace Jackdaw.Server.Cluster;

/// <summary>Database records: which nodes hold each database. Each node creates and deletes its own copy as the committed records say (<see cref="ClusterDatabases"/>).</summary>
public sealed partial class ClusterNode
{
    /// <summary>
    /// Creates the record of database <paramref name="name"/> on <paramref name="members"/> when
    /// given, else on <paramref name="replicationFactor"/> members chosen by the leader (those that
    /// answer it first, then the fewest databases, then by tag). Waits until this node applied it.
    /// </summary>
    /// <returns>The record as committed, and the log index it was committed at.</returns>
    public async Task<(ClusterDatabaseRecord Record, long Index)> CreateDatabaseAsync(
        string name, int replicationFactor, IReadOnlyList<string>? members, IReadOnlyDictionary<string, string>? settings, string commandId, CancellationToken token)
    {
        if (Jackdaw.Server.Databases.DatabaseNames.Validate(name) is { } problem)
        {
            throw new BadRequestException(problem);
        }
        var state = State;
        if (state.WasApplied(commandId) && state.Databases.TryGetValue(name, out var done))
        {
            return (done, CommitIndex);
        }
        if (state.Databases.ContainsKey(name))
        {
            throw new DatabaseAlreadyExistsException(name);
        }
        IReadOnlyList<string> nodes;
        if (members is { Count: > 0 })
        {
            foreach (var member in members)
            {
                if (!state.Members.ContainsKey(member))
                {
                    throw new ClusterException($"Node '{member}' of Topology.Members is not a member of the cluster; the members are {string.Join(", ", state.Members.Keys)}.");
                }
            }
            nodes = [.. members.Distinct()];
        }
        else
        {
            if (replicationFactor < 1)
            {
                throw new ClusterException($"ReplicationFactor {replicationFactor} is not a number of nodes: give 1 or more.");
            }
            if (replicationFactor > state.Members.Count)
            {
                throw new ClusterException($"ReplicationFactor {replicationFactor} is more than the cluster's {state.Members.Count} nodes ({string.Join(", ", state.Members.Keys)}): add nodes first, or ask for fewer.");
            }
            // Nodes that answer the leader first (a database put on a dead node has one copy less
            // until it comes back), then the least loaded.
            var status = MemberStatus;
            nodes = [.. state.Members.Keys
                .OrderBy(tag => tag == NodeTag || status.GetValueOrDefault(tag) ? 0 : 1)
                .ThenBy(tag => state.Databases.Values.Count(d => d.Nodes.Contains(tag)))
                .ThenBy(tag => tag, StringComparer.Ordinal)
                .Take(replicationFactor)];
        }
        try
        {
            var index = await ExecuteAsync(new ClusterCommand(commandId, ClusterCommandKind.PutDatabase) { Database = name, Nodes = nodes, Settings = settings }, token).ConfigureAwait(false);
            return (State.Databases.TryGetValue(name, out var created) ? created : throw new DatabaseDoesNotExistException(name), index);
        }
        catch (ClusterException) when (State.Databases.ContainsKey(name) && !State.WasApplied(commandId))
        {
            // Created meanwhile by another request (committed before ours).
            throw new DatabaseAlreadyExistsException(name);
        }
    }

    /// <summary>
    /// Waits, up to <paramref name="timeout"/>, until every other node of <paramref name="record"/>
    /// that answers holds its copy, as RavenDB's create waits for the database's nodes: a client
    /// that created a database uses it next on whichever node its topology names, which may be
    /// another than the one that answered (that one may die next). A node that does not answer
    /// (down, stopped) is not waited for: it makes its copy when it is back.
    /// </summary>
    public Task WaitForCopiesAsync(ClusterDatabaseRecord record, TimeSpan timeout, CancellationToken token)
    {
        var state = State;
        var deadline = DateTime.UtcNow + timeout;
        return Task.WhenAll(record.Nodes
            .Where(tag => tag != NodeTag && state.Members.ContainsKey(tag))
            .Select(tag => WaitForCopyAsync(state.Members[tag], record.Name, deadline, token)));
    }

    private async Task WaitForCopyAsync(string url, string name, DateTime deadline, CancellationToken token)
    {
        while (DateTime.UtcNow < deadline)
        {
            using (var limit = CancellationTokenSource.CreateLinkedTokenSource(token))
            {
                limit.CancelAfter(CopyAnswerWait);
                try
                {
                    using var answer = await _client.GetAsync($"{url}/admin/databases", limit.Token).ConfigureAwait(false);
                    if (!answer.IsSuccessStatusCode)
                    {
                        return;
                    }
                    using var list = await JsonDocument.ParseAsync(await answer.Content.ReadAsStreamAsync(limit.Token).ConfigureAwait(false), cancellationToken: limit.Token).ConfigureAwait(false);
                    if (list.RootElement.GetProperty("Databases").EnumerateArray().Any(d => string.Equals(d.GetString(), name, StringComparison.OrdinalIgnoreCase)))
                    {
                        return;
                    }
                }
                catch (Exception e) when (e is HttpRequestException or JsonException or KeyNotFoundException
                    || e is OperationCanceledException && !token.IsCancellationRequested)
                {
                    return;
                }
            }
            await Task.Delay(20, token).ConfigureAwait(false);
        }
    }

    /// <summary>Adds database <paramref name="name"/> to node <paramref name="tag"/>, or to a member that lacks it when null: as a promotable (<c>ClusterNode.Promotables.cs</c>).</summary>
    public async Task<(ClusterDatabaseRecord Record, long Index)> AddDatabaseNodeAsync(string name, string? tag, string commandId, CancellationToken token)
    {
        var state = State;
        if (tag is not null && !state.Members.ContainsKey(tag))
        {
            throw new ClusterException($"Node '{tag}' is not a member of the cluster; the members are {string.Join(", ", state.Members.Keys)}.");
        }
        if (!state.Databases.TryGetValue(name, out var record))
        {
            throw new DatabaseDoesNotExistException(name);
        }
        if (tag is null)
        {
            tag = state.Members.Keys.FirstOrDefault(t => !record.Nodes.Contains(t))
                ?? throw new ClusterException($"Database '{name}' is already on every node of the cluster ({string.Join(", ", record.Nodes)}).");
        }
        else if (record.Nodes.Contains(tag) && !state.WasApplied(commandId))
        {
            throw new ClusterException($"Database '{name}' is already on node {tag}.");
        }
        // It enters as a promotable; its mentor, a member that answers the leader, promotes it once it caught up.
        var status = MemberStatus;
        var mentor = record.Members.FirstOrDefault(t => t == NodeTag || status.GetValueOrDefault(t)) ?? record.Members.FirstOrDefault();
        var index = await ExecuteAsync(new ClusterCommand(commandId, ClusterCommandKind.AddDatabaseNode) { Database = name, Tag = tag, Mentor = mentor }, token).ConfigureAwait(false);
        return (State.Databases.TryGetValue(name, out var added) ? added : throw new DatabaseDoesNotExistException(name), index);
    }

    /// <summary>
    /// Deletes database <paramref name="name"/> from <paramref name="fromNodes"/>, or everywhere when
    /// null. Each node deletes its copy when it applies the change.
    /// </summary>
    public async Task<long> DeleteDatabaseAsync(string name, IReadOnlyList<string>? fromNodes, string commandId, CancellationToken token)
    {
        var state = State;
        if (!state.Databases.TryGetValue(name, out var record))
        {
            if (state.WasApplied(commandId))
            {
                return CommitIndex;
            }
            throw new DatabaseDoesNotExistException(name);
        }
        if (fromNodes is not null)
        {
            foreach (var node in fromNodes)
            {
                if (!record.Nodes.Contains(node))
                {
                    throw new ClusterException($"Database '{name}' is not on node '{node}' (it is on {string.Join(", ", record.Nodes)}).");
                }
            }
        }
        return await ExecuteAsync(new ClusterCommand(commandId, ClusterCommandKind.DeleteDatabase) { Database = name, Nodes = fromNodes }, token).ConfigureAwait(false);
    }

    /// <summary>
    /// Waits (up to <paramref name="timeout"/>) until this node's databases follow the cluster's
    /// state as of log index <paramref name="index"/> (created, deleted, peers told); false on timeout.
    /// </summary>
    public Task<bool> WaitForDatabasesAsync(long index, TimeSpan timeout, CancellationToken token) =>
        _local.WaitForAsync(index, timeout, token);

    /// <summary>
    /// Records a database made on this node outside the cluster's commands (a restore) as held by
    /// this node alone, so that clients find it (<c>/topology</c>) and the cluster knows the name.
    /// On a member that does not lead, asked of the leader (<c>PUT /admin/databases</c> with
    /// <c>Topology.Members</c> this node). Nothing on a lone server.
    /// </summary>
    public async Task RecordLocalDatabaseAsync(string name, CancellationToken token)
    {
        if (!IsClustered)
        {
            return;
        }
        if (IsLeader)
        {
            await CreateDatabaseAsync(name, 1, [NodeTag], null, ClusterCommand.NewId(), token).ConfigureAwait(false);
            return;
        }
        if (Leader is not var (_, leaderUrl))
        {
            throw NotLeader();
        }
        var body = JsonSerializer.Serialize(new Dictionary<string, object>
        {
            ["DatabaseName"] = name,
            ["Topology"] = new Dictionary<string, object> { ["Members"] = new[] { NodeTag } },
        });
        using var content = new StringContent(body, Encoding.UTF8, "application/json");
        using var response = await LeaderClient.PutAsync($"{leaderUrl}/admin/databases", content, token).ConfigureAwait(false);
        if (!response.IsSuccessStatusCode)
        {
            throw new ClusterException($"The leader at {leaderUrl} did not record database '{name}' on node {NodeTag}: {(int)response.StatusCode} {await response.Content.ReadAsStringAsync(token).ConfigureAwait(false)}");
        }
    }
}
