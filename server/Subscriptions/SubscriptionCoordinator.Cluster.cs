using Jackdaw.Server.Errors;
using Microsoft.Extensions.Logging;

namespace Jackdaw.Server.Subscriptions;

/// <summary>
/// A subscription of a clustered database: served only by its mentor; its position is stored in
/// the cluster (<see cref="ClusteredSubscription.Position"/>), in terms every node can resume from.
/// </summary>
public sealed partial class SubscriptionCoordinator
{
    // end of a batch read to the collection's end → the other copies' feed positions in its snapshot.
    private readonly SortedDictionary<long, IReadOnlyDictionary<string, long>> _pendingFeeds = new();
    private IReadOnlyDictionary<string, long> _acknowledgedFeeds = new Dictionary<string, long>();
    private volatile ClusteredSubscription? _cluster;
    private string? _nodeTag;

    internal SubscriptionCoordinator(SubscriptionStore store, ClusteredSubscription definition, string nodeTag, string databaseId, Rql.RqlQuery query)
        : this(store, RecordOf(definition, databaseId), query)
    {
        _cluster = definition;
        _nodeTag = nodeTag;
    }

    /// <summary>The cluster's view of it (mentor, position) on a clustered database; null for a subscription this database keeps itself.</summary>
    public ClusteredSubscription? Cluster => _cluster;

    /// <summary>True when this node serves it: not clustered, or this node is its mentor.</summary>
    public bool ServedHere => _cluster is not { } cluster || cluster.Mentor == _nodeTag;

    private static SubscriptionRecord RecordOf(ClusteredSubscription definition, string databaseId) => new(
        definition.Id, definition.Name, definition.Query, definition.Position.GetValueOrDefault(databaseId),
        definition.Disabled, definition.CreatedAt, definition.LastAckAt, null);

    private void ThrowUnlessServedHere()
    {
        if (_cluster is { } cluster && cluster.Mentor != _nodeTag)
        {
            throw new SubscriptionDoesNotBelongToNodeException(_record.Name, _nodeTag ?? "?", cluster.Mentor, cluster.MentorUrl);
        }
    }

    /// <summary>
    /// The cluster's state of this subscription changed. A node that just became its mentor starts
    /// after its own copy's entry of the stored position (0 when it has none: everything again);
    /// a node that stopped being it closes its workers (they reconnect and are sent to the mentor).
    /// </summary>
    internal void ApplyCluster(ClusteredSubscription definition, string nodeTag, string databaseId)
    {
        string? close = null;
        var canReconnect = true;
        lock (_lock)
        {
            var before = _cluster;
            var wasMine = before?.Mentor == _nodeTag;
            var mine = definition.Mentor == nodeTag;
            _cluster = definition;
            _nodeTag = nodeTag;
            _record = _record with { Disabled = definition.Disabled, LastAckAt = definition.LastAckAt ?? _record.LastAckAt };
            if (!mine || !wasMine)
            {
                // The position is the cluster's, not this node's (no worker is served here, or
                // none was until now).
                var acked = definition.Position.GetValueOrDefault(databaseId);
                _record = _record with { AckedEtag = acked };
                if (_sessions.Count == 0)
                {
                    _sentUpTo = acked;
                    _resend.Clear();
                    _doneRanges = new();
                    _pendingFeeds.Clear();
                }
                _acknowledgedFeeds = new Dictionary<string, long>();
            }
            if (wasMine && !mine)
            {
                close = $"the subscription is now served by node {definition.Mentor}";
            }
            if (definition.Disabled)
            {
                close = "the subscription was disabled";
                canReconnect = false;
            }
            if (mine && !wasMine)
            {
                _store.Logger.LogInformation("Subscription {Subscription}: this node ({Tag}) serves it now, from etag {Etag}", _record.Name, nodeTag, _record.AckedEtag);
            }
        }
        if (close is not null)
        {
            CloseAll(close, canReconnect);
        }
    }

    /// <summary>
    /// Stores an acknowledged position in the cluster: this copy's entry is the acknowledged etag;
    /// the other copies' entries come from the latest batch read to the collection's end that the
    /// position covers (everything up to its end is acknowledged, and every document those feeds
    /// had brought here by then lies before it). Older entries stay when no such batch is covered:
    /// a successor resends more, never less.
    /// </summary>
    private async Task StoreInClusterAsync(SubscriptionRecord changed, SubscriptionBatch batch)
    {
        IReadOnlyDictionary<string, long> feeds;
        List<long> covered = [];
        lock (_lock)
        {
            feeds = _acknowledgedFeeds;
            var pending = new SortedDictionary<long, IReadOnlyDictionary<string, long>>(_pendingFeeds);
            if (batch.Feeds is { } batchFeeds)
            {
                pending[batch.LastEtag] = batchFeeds;
            }
            foreach (var (end, endFeeds) in pending)
            {
                if (end > changed.AckedEtag)
                {
                    break;
                }
                feeds = endFeeds;
                covered.Add(end);
            }
        }
        var position = new Dictionary<string, long>(feeds) { [_store.Database.DatabaseId] = changed.AckedEtag };
        await _store.ProposeAsync(new SubscriptionProposal(SubscriptionProposalKind.Acknowledge, _store.Database.Name, changed.Name)
        {
            Position = position,
            Time = changed.LastAckAt ?? DateTime.UtcNow,
        }).ConfigureAwait(false);
        lock (_lock)
        {
            _acknowledgedFeeds = feeds;
            if (batch.Feeds is { } batchFeeds && batch.LastEtag > changed.AckedEtag)
            {
                _pendingFeeds[batch.LastEtag] = batchFeeds;
            }
            foreach (var end in covered)
            {
                _pendingFeeds.Remove(end);
            }
        }
    }
}
