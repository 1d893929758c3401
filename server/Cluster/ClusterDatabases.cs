using System.Threading.Channels;
using Jackdaw.Server.Databases;

namespace Jackdaw.Server.Cluster;

/// <summary>
/// Keeps this node's databases as the committed records say: creates the local database when a
/// record names this node, deletes it when a record stops naming it (or is deleted), and tells
/// replication each database's other nodes whenever they or their URLs change. Works off the
/// state machine's thread, one change after another, on the changes themselves (before → after):
/// a database is deleted only when a change takes it off this node, never because a state read
/// at start lacks it.
/// </summary>
internal sealed partial class ClusterDatabases : IAsyncDisposable
{
    private readonly ClusterNode _node;
    private readonly Func<DatabasesLandlord> _databases;
    private readonly ILogger _logger;
    private readonly Channel<(ClusterState Before, ClusterState After)> _changes =
        Channel.CreateUnbounded<(ClusterState, ClusterState)>(new UnboundedChannelOptions { SingleReader = true });
    private Task _loop = Task.CompletedTask;

    public ClusterDatabases(ClusterNode node, Func<DatabasesLandlord> databases, ILogger logger)
    {
        _node = node;
        _databases = databases;
        _logger = logger;
    }

    /// <summary>Starts applying changes, first making sure every database the state puts on this node exists here.</summary>
    public void Start(ClusterState current)
    {
        _changes.Writer.TryWrite((ClusterState.Empty, current));
        _loop = Task.Run(LoopAsync);
    }

    public void Enqueue(ClusterState before, ClusterState after) => _changes.Writer.TryWrite((before, after));

    private async Task LoopAsync()
    {
        await foreach (var (before, after) in _changes.Reader.ReadAllAsync().ConfigureAwait(false))
        {
            try
            {
                await ApplyAsync(before, after).ConfigureAwait(false);
            }
            catch (Exception e)
            {
                LogFailed(_logger, e);
            }
        }
    }

    private async Task ApplyAsync(ClusterState before, ClusterState after)
    {
        var me = _node.NodeTag;
        if (me == ClusterNode.PassiveTag || !after.Members.ContainsKey(me) && !before.Members.ContainsKey(me))
        {
            return;
        }
        var landlord = _databases();
        foreach (var record in after.Databases.Values)
        {
            if (!record.Nodes.Contains(me))
            {
                continue;
            }
            if (!landlord.Names.Contains(record.Name, StringComparer.OrdinalIgnoreCase))
            {
                landlord.TryCreate(record.Name);
                LogCreated(_logger, record.Name, me);
            }
            if (!ReferenceEquals(before.Subscriptions.Of(record.Name), after.Subscriptions.Of(record.Name))
                || !ReferenceEquals(before.Members, after.Members) || !before.Databases.ContainsKey(record.Name))
            {
                RefreshSubscriptions(landlord, record.Name);
            }
            var others = PeersOf(record, after, me);
            if (!before.Databases.TryGetValue(record.Name, out var old) || old.TopologyEtag != record.TopologyEtag
                || !others.SequenceEqual(PeersOf(old, before, me)))
            {
                _node.Replication.SetTopology(record.Name, me, others);
            }
        }
        foreach (var record in before.Databases.Values)
        {
            if (!record.Nodes.Contains(me) || (after.Databases.TryGetValue(record.Name, out var now) && now.Nodes.Contains(me)))
            {
                continue;
            }
            _node.Replication.SetTopology(record.Name, me, []);
            if (await landlord.TryDeleteAsync(record.Name).ConfigureAwait(false))
            {
                LogDeleted(_logger, record.Name, me);
            }
        }
    }

    /// <summary>This node's copy takes the cluster's subscriptions (new, changed, moved to or from this node, deleted).</summary>
    private void RefreshSubscriptions(DatabasesLandlord landlord, string database)
    {
        try
        {
            Subscriptions.SubscriptionStore.Of(landlord.GetDatabase(database)).RefreshFromCluster();
        }
        catch (Exception e)
        {
            LogSubscriptionsFailed(_logger, database, e);
        }
    }

    private static List<ClusterPeer> PeersOf(ClusterDatabaseRecord record, ClusterState state, string me) =>
        [.. record.Nodes.Where(n => n != me && state.Members.ContainsKey(n)).Select(n => new ClusterPeer(n, state.Members[n]))];

    public async ValueTask DisposeAsync()
    {
        _changes.Writer.TryComplete();
        await _loop.ConfigureAwait(ConfigureAwaitOptions.SuppressThrowing);
    }

    [LoggerMessage(EventId = 710, Level = LogLevel.Information, Message = "Created database {Database} on node {Tag}, as the cluster's record says")]
    private static partial void LogCreated(ILogger logger, string database, string tag);

    [LoggerMessage(EventId = 711, Level = LogLevel.Information, Message = "Deleted database {Database} from node {Tag}, as the cluster's record says")]
    private static partial void LogDeleted(ILogger logger, string database, string tag);

    [LoggerMessage(EventId = 713, Level = LogLevel.Warning, Message = "Could not bring the subscriptions of database {Database} in line with the cluster's state")]
    private static partial void LogSubscriptionsFailed(ILogger logger, string database, Exception exception);

    [LoggerMessage(EventId = 712, Level = LogLevel.Error, Message = "Could not bring this node's databases in line with the cluster's records")]
    private static partial void LogFailed(ILogger logger, Exception exception);
}
