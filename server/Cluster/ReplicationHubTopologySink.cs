using Jackdaw.Server.Replication;

namespace Jackdaw.Server.Cluster;

/// <summary>
/// The cluster's database topologies handed to replication (<see cref="ReplicationHub.SetTopology"/>):
/// each database's other nodes become its senders' destinations.
/// </summary>
public sealed class ReplicationHubTopologySink(Func<ReplicationHub> hub) : IReplicationTopologySink
{
    public void SetTopology(string database, string myTag, IReadOnlyList<ClusterPeer> others)
    {
        var nodes = new ReplicationNode[others.Count];
        for (var i = 0; i < others.Count; i++)
        {
            nodes[i] = new ReplicationNode(others[i].Tag, others[i].Url);
        }
        hub().SetTopology(database, myTag, nodes);
    }

    public (long LastEtag, long Acknowledged, bool Connected, long LastRevisionEtag, long AcknowledgedRevision)? ProgressTo(string database, string tag) => hub().ProgressTo(database, tag);
}
