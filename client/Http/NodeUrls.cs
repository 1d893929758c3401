namespace Jackdaw.Client.Http;

/// <summary>
/// What the store takes of the URLs a topology names, and how it compares two URLs.
/// </summary>
/// <remarks>
/// A server names itself by the scheme and host its requests arrive with, unless it was given a
/// public URL. Behind a proxy that ends TLS, rewrites the host or serves it under a path, that is
/// not an address the store can use. So a topology of one node keeps the URL it was asked of (the
/// one the user gave, or a node URL that already worked), and a topology of several nodes that would
/// take the store from https to http, or to another path, is refused: the store keeps to its own URLs.
/// </remarks>
internal static class NodeUrls
{
    /// <summary>Whether two URLs name the same server: as URIs, so <c>http://h</c> and <c>http://h:80/</c> are one.</summary>
    public static bool Same(string a, string b)
    {
        if (string.Equals(a, b, StringComparison.OrdinalIgnoreCase))
        {
            return true;
        }

        return Uri.TryCreate(a, UriKind.Absolute, out var x) && Uri.TryCreate(b, UriKind.Absolute, out var y)
            && Uri.Compare(x, y, UriComponents.SchemeAndServer | UriComponents.Path, UriFormat.Unescaped, StringComparison.OrdinalIgnoreCase) == 0;
    }

    /// <summary>
    /// The topology to hold of <paramref name="topology"/>, as <paramref name="from"/> answered it
    /// for <paramref name="database"/> (see the remarks). A topology without nodes says no server
    /// holds the database: <see cref="DatabaseDoesNotExistException"/>. A refused one throws
    /// <see cref="JackdawException"/> saying why.
    /// </summary>
    public static Topology Adopt(Topology topology, string from, string database)
    {
        if (topology.Nodes.Count == 0)
        {
            throw new DatabaseDoesNotExistException(
                $"GET {from}/topology?name={database} answered a topology without nodes: no server holds database '{database}'.", null, null);
        }

        if (topology.Nodes.Count == 1)
        {
            var node = topology.Nodes[0];
            return string.Equals(node.Url, from, StringComparison.Ordinal)
                ? topology
                : new Topology(topology.Etag, [new ServerNode(from, node.Database, node.ClusterTag, node.ServerRole)]);
        }

        var origin = new Uri(from, UriKind.Absolute);
        foreach (var node in topology.Nodes)
        {
            if (Refusal(origin, node.Url) is { } why)
            {
                throw new JackdawException(
                    $"GET {from}/topology?name={database} names node {node.ClusterTag} at {node.Url}, {why}; the store keeps to its own URLs. " +
                    "Give each server the public URL clients reach it by (--public-url), or list every node in DocumentStore.Urls.");
            }
        }

        return topology;
    }

    private static string? Refusal(Uri origin, string url)
    {
        if (!Uri.TryCreate(url, UriKind.Absolute, out var uri) || (uri.Scheme != Uri.UriSchemeHttp && uri.Scheme != Uri.UriSchemeHttps))
        {
            return "which is not an http(s) URL";
        }

        if (origin.Scheme == Uri.UriSchemeHttps && uri.Scheme != Uri.UriSchemeHttps)
        {
            return "over http where the store was given https";
        }

        return string.Equals(origin.AbsolutePath.TrimEnd('/'), uri.AbsolutePath.TrimEnd('/'), StringComparison.Ordinal)
            ? null
            : $"under another path than {origin.AbsolutePath.TrimEnd('/')}/";
    }
}
