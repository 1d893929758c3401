namespace Jackdaw.Client;

/// <summary>One node of a database's topology, as <c>GET /topology?name=</c> answers it (RavenDB's <c>ServerNode</c>).</summary>
public sealed class ServerNode
{
    /// <summary>The role RavenDB gives a node in a database's topology.</summary>
    public enum Role
    {
        None,
        Promotable,
        Member,
        Rehab,
    }

    public ServerNode(string url, string database, string clusterTag, Role serverRole)
    {
        Url = url;
        Database = database;
        ClusterTag = clusterTag;
        ServerRole = serverRole;
    }

    /// <summary>The node's base URL, without a trailing slash.</summary>
    public string Url { get; }

    public string Database { get; }

    /// <summary>The node's tag in the cluster (<c>A</c>, <c>B</c>, ...); <c>?</c> for a URL the client was given but has no topology of.</summary>
    public string ClusterTag { get; }

    public Role ServerRole { get; }

    public override string ToString() => $"{ClusterTag} {Url} ({ServerRole})";
}
