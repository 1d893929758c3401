namespace Jackdaw.Client;

/// <summary>
/// The nodes that hold a database, in the server's order of preference, and the topology's etag:
/// a later topology has a higher one (RavenDB's <c>Topology</c>).
/// </summary>
public sealed class Topology
{
    public Topology(long etag, IReadOnlyList<ServerNode> nodes)
    {
        Etag = etag;
        Nodes = nodes;
    }

    public long Etag { get; }

    public IReadOnlyList<ServerNode> Nodes { get; }
}
