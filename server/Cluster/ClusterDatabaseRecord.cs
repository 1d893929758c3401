namespace Jackdaw.Server.Cluster;

/// <summary>
/// A database as the cluster knows it: its name, the nodes that hold it (in the order clients
/// prefer them) and its settings. <see cref="TopologyEtag"/> is the log index of the last change of
/// its nodes: what <c>GET /topology</c> answers as <c>Etag</c>, so clients see when to refresh.
/// </summary>
public sealed record ClusterDatabaseRecord(string Name, IReadOnlyList<string> Nodes, long TopologyEtag)
{
    public IReadOnlyDictionary<string, string> Settings { get; init; } = new Dictionary<string, string>();
}
