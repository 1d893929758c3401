namespace Jackdaw.Server.Cluster;

/// <summary>Another node of a database: its tag and URL, as replication needs them.</summary>
public sealed record ClusterPeer(string Tag, string Url);
