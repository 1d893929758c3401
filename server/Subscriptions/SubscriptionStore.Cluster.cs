using Jackdaw.Server.Databases;
using Jackdaw.Server.Documents;
using Jackdaw.Server.Errors;
using Microsoft.Extensions.Logging;

namespace Jackdaw.Server.Subscriptions;

/// <summary>
/// The subscriptions of a clustered database: kept by the cluster (definitions, mentor, position),
/// changed by proposing to it; this node serves only those it mentors.
/// </summary>
public sealed partial class SubscriptionStore
{
    private readonly ISubscriptionCluster? _cluster;
    private readonly object _refreshLock = new();

    /// <summary>True when the cluster keeps this database's subscriptions (the database has a cluster record).</summary>
    public bool IsClustered => _cluster?.Keeps(_database.Name) == true;

    /// <summary>
    /// Brings this node's clustered subscriptions in line with the cluster's state: new ones, changed
    /// ones (disabled, given to another node: their workers are closed, to be told where to go),
    /// deleted ones. Called at open and by the cluster after each change of them; quick, in memory.
    /// </summary>
    public void RefreshFromCluster()
    {
        if (_cluster is not { } cluster || !cluster.Keeps(_database.Name))
        {
            return;
        }
        lock (_refreshLock)
        {
            var me = cluster.NodeTag;
            var names = new HashSet<string>(StringComparer.OrdinalIgnoreCase);
            foreach (var definition in cluster.Current(_database.Name))
            {
                names.Add(definition.Name);
                _subscriptions.TryGetValue(definition.Name, out var existing);
                if (existing is { Cluster: null })
                {
                    if (RecordedFrom(definition, existing.Record))
                    {
                        // This node's own from before the cluster, which the founder recorded in
                        // it: the cluster's takes its place, and the database forgets its copy.
                        ForgetLocal(existing);
                    }
                    else
                    {
                        // Another subscription under the same name: the cluster's is served, this
                        // node's stays in the database's tree (not deleted), and the log says so.
                        Shadowed(existing);
                    }
                    existing = null;
                }
                if (existing is not null && existing.Record.Query == definition.Query)
                {
                    existing.ApplyCluster(definition, me, _database.DatabaseId);
                    continue;
                }
                try
                {
                    var coordinator = new SubscriptionCoordinator(this, definition, me, _database.DatabaseId, Parse(definition.Query));
                    _subscriptions[definition.Name] = coordinator;
                    existing?.CloseAll("the subscription's query changed", canReconnect: true);
                }
                catch (InvalidQueryException e)
                {
                    _logger.LogError(e, "Subscription {Subscription} of database {Database} has a query this node cannot run", definition.Name, _database.Name);
                }
            }
            foreach (var gone in _subscriptions.Values.Where(s => s.Cluster is not null && !names.Contains(s.Record.Name)).ToList())
            {
                _subscriptions.TryRemove(gone.Record.Name, out _);
                gone.CloseAll("the subscription was deleted");
            }
        }
    }

    /// <summary>
    /// Whether the cluster's <paramref name="definition"/> was recorded from this copy's own
    /// <paramref name="local"/> one when this node founded the cluster: the founder records each
    /// with its query and creation time.
    /// </summary>
    internal static bool RecordedFrom(ClusteredSubscription definition, SubscriptionRecord local) =>
        string.Equals(definition.Query, local.Query, StringComparison.Ordinal) && definition.CreatedAt.Ticks == local.CreatedAt.Ticks;

    private void Shadowed(SubscriptionCoordinator local)
    {
        _logger.LogError("Subscription {Subscription} of database {Database} on this node ({Query}, created {Created:o}) is not the cluster's subscription of that name: "
            + "the cluster's is served; this node's stays in the database's storage, unserved",
            local.Record.Name, _database.Name, local.Record.Query, local.Record.CreatedAt);
        local.CloseAll("the cluster keeps another subscription of this name", canReconnect: true);
    }

    private void ForgetLocal(SubscriptionCoordinator local)
    {
        _logger.LogInformation("Subscription {Subscription} of database {Database} is now kept by the cluster", local.Record.Name, _database.Name);
        local.CloseAll("the subscription is now kept by the cluster", canReconnect: true);
        _ = ForgetLocalAsync(local);
    }

    private async Task ForgetLocalAsync(SubscriptionCoordinator local)
    {
        try
        {
            await local.DeleteAsync(() => _database.EnqueueAsync(new JsonRecords.StoreCommand(TreeName, local.Record.Name, null))).ConfigureAwait(false);
        }
        catch (Exception e)
        {
            // Left in the tree: the next open hands it to the cluster's again.
            _logger.LogWarning(e, "Subscription {Subscription} of database {Database}: its copy from before the cluster was not removed", local.Record.Name, _database.Name);
        }
    }

    /// <summary>
    /// On a node still loading the cluster's state (starting), a subscription it does not know yet
    /// may well exist: the worker is told to retry (503) rather than that it does not exist.
    /// </summary>
    /// <exception cref="DatabaseUnavailableException">This node has not loaded the cluster's state as far as this database yet.</exception>
    public void ThrowIfLoading(string name)
    {
        if (!_subscriptions.ContainsKey(name) && !IsClustered && _cluster?.IsLoading(_database.Name) == true)
        {
            throw new DatabaseUnavailableException(_database.Name, "this node is still loading the cluster's state (its subscriptions are kept there).");
        }
    }

    /// <summary>The subscription a worker connects to; on a clustered database one the cluster has and this store has not taken yet is taken first.</summary>
    /// <exception cref="SubscriptionDoesNotExistException">No such subscription.</exception>
    public SubscriptionCoordinator GetForWorker(string name)
    {
        // Always from the cluster's state as it is now (in memory): a new mentor must not send a
        // worker to the dead one while the node's loop has not refreshed the store yet.
        if (IsClustered)
        {
            RefreshFromCluster();
        }
        return Get(name);
    }

    private async Task<SubscriptionRecord> CreateInClusterAsync(string? name, string query, string? changeVector)
    {
        name = string.IsNullOrWhiteSpace(name) ? Guid.NewGuid().ToString("N") : name.Trim();
        if (name.Length > 256 || name.Any(char.IsControl))
        {
            throw new BadRequestException("A subscription name has at most 256 characters and no control characters.");
        }
        if (_subscriptions.ContainsKey(name))
        {
            throw new SubscriptionAlreadyExistsException(name);
        }
        IReadOnlyDictionary<string, long> position = changeVector switch
        {
            null or "" or "BeginningOfTime" => new Dictionary<string, long>(),
            "LastDocument" => CurrentPosition(),
            _ when long.TryParse(changeVector, out var etag) && etag >= 0 => new Dictionary<string, long> { [_database.DatabaseId] = etag },
            // Etags are numbered by each copy: the position belongs to the copy the vector names (the
            // others start from their beginning, which sends more, never less).
            _ when ChangeVectors.TryParse(changeVector, out var etag, out var databaseId) => new Dictionary<string, long> { [databaseId.ToString()] = etag },
            _ => throw new BadRequestException($"ChangeVector '{changeVector}' is not BeginningOfTime, LastDocument, an etag or a change vector such as A:12-..."),
        };
        try
        {
            await ProposeAsync(new SubscriptionProposal(SubscriptionProposalKind.Create, _database.Name, name) { Query = query, Position = position }).ConfigureAwait(false);
        }
        catch (ClusterException) when (_subscriptions.ContainsKey(name))
        {
            // Created meanwhile by another request.
            throw new SubscriptionAlreadyExistsException(name);
        }
        _logger.LogInformation("Subscription {Subscription} of database {Database} created in the cluster", name, _database.Name);
        return Get(name).Record;
    }

    /// <summary>Where this node's copy is now: its own last etag, and how far each other copy's feed came here.</summary>
    private Dictionary<string, long> CurrentPosition()
    {
        var last = _database.LastEtag;
        using var reader = _database.BeginRead();
        return new Dictionary<string, long>(_cluster!.FeedPositions(reader)) { [_database.DatabaseId] = last };
    }

    /// <summary>Proposes a change to the cluster; a change other than an acknowledgement is applied here before this returns.</summary>
    internal async Task ProposeAsync(SubscriptionProposal proposal)
    {
        await _cluster!.ProposeAsync(proposal, CancellationToken.None).ConfigureAwait(false);
        if (proposal.Kind != SubscriptionProposalKind.Acknowledge)
        {
            RefreshFromCluster();
        }
    }

    /// <summary>How far each other copy's replication feed had come in <paramref name="reader"/>'s snapshot (empty when not clustered).</summary>
    internal IReadOnlyDictionary<string, long> FeedPositions(Databases.DatabaseReader reader) =>
        _cluster?.FeedPositions(reader) ?? new Dictionary<string, long>();
}
