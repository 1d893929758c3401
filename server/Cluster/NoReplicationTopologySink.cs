namespace Jackdaw.Server.Cluster;

/// <summary>A sink that drops every topology: a server without replication.</summary>
public sealed class NoReplicationTopologySink : IReplicationTopologySink
{
    public static NoReplicationTopologySink Instance { get; } = new();

    public void SetTopology(string database, string myTag, IReadOnlyList<ClusterPeer> others)
    {
    }
}
