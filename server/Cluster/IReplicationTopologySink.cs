namespace Jackdaw.Server.Cluster;

/// <summary>
/// Where the cluster sends each database's replication destinations: called whenever a database
/// record's nodes or a member's URL change, and once per local database when the node starts.
/// <paramref name="others"/> is empty when this node no longer holds the database (before it is
/// deleted here). The server points it at replication (<c>ServerContext</c>); until then it is
/// <see cref="NoReplicationTopologySink"/>.
/// </summary>
public interface IReplicationTopologySink
{
    void SetTopology(string database, string myTag, IReadOnlyList<ClusterPeer> others);

    /// <summary>
    /// How far this node's replication of <paramref name="database"/> reached node <paramref name="tag"/>
    /// (a promotable this node mentors): this node's last etag, read first, the etag the node
    /// acknowledged, whether the connection is open, and the same two of the revisions' own feed
    /// (this node's last revision etag, the revision etag the node holds everything up to; -1
    /// before it answered); null when it does not replicate there.
    /// </summary>
    (long LastEtag, long Acknowledged, bool Connected, long LastRevisionEtag, long AcknowledgedRevision)? ProgressTo(string database, string tag) => null;
}
