using System.Collections.Immutable;

namespace Jackdaw.Server.Cluster;

// Nodes being added: a reservation (tag → URL) is committed before the node enters Raft's
// membership, and PutMember turns it into a member once it has; the leader's reconciliation
// (MembershipReconciler) completes or rolls back one left half-way.
public sealed partial class ClusterState
{
    private static ImmutableSortedDictionary<string, string> NoMembers =>
        ImmutableSortedDictionary.Create<string, string>(StringComparer.Ordinal);

    /// <summary>
    /// Nodes being added (tag → URL): reserved, not yet members (RavenDB's promotables). They hold
    /// no database and are no one's leader tag until <see cref="ClusterCommandKind.PutMember"/>.
    /// </summary>
    public ImmutableSortedDictionary<string, string> Joining { get; private init; } = NoMembers;

    /// <summary>
    /// The server certificate's thumbprint of each member and node being added (tag → thumbprint),
    /// as the leader saw it when it added the node: on a secured cluster only these (and a node's
    /// own) may speak Raft's protocol. Empty on an unsecured cluster.
    /// </summary>
    public ImmutableSortedDictionary<string, string> NodeCertificates { get; private init; } = NoMembers;

    /// <summary>Whether <paramref name="thumbprint"/> is a member's or a node being added's certificate.</summary>
    public bool IsNodeCertificate(string thumbprint) => NodeCertificates.Values.Any(t => string.Equals(t, thumbprint, StringComparison.OrdinalIgnoreCase));

    private static ImmutableSortedDictionary<string, string> WithNodeCertificate(ImmutableSortedDictionary<string, string> certificates, ClusterCommand command, bool present) =>
        command.Tag is not { } tag ? certificates
        : !present ? certificates.Remove(tag)
        : command.Thumbprint is { Length: > 0 } thumbprint ? certificates.SetItem(tag, thumbprint)
        : certificates;

    /// <summary>The tag reserved for the node being added at <paramref name="url"/> (compared as URLs), or null.</summary>
    public string? JoiningTagOf(string url)
    {
        foreach (var (tag, joiningUrl) in Joining)
        {
            if (ClusterUrls.Same(joiningUrl, url))
            {
                return tag;
            }
        }
        return null;
    }

    /// <summary>Why <paramref name="tag"/> at <paramref name="url"/> clashes with a reservation for another node (null: it does not).</summary>
    private string? ReservationConflict(string tag, string url)
    {
        if (Joining.TryGetValue(tag, out var reservedUrl) && !ClusterUrls.Same(reservedUrl, url))
        {
            return $"Tag {tag} is reserved for the node being added at {reservedUrl}.";
        }
        if (JoiningTagOf(url) is { } reserved && reserved != tag)
        {
            return $"The node at {url} is being added as {reserved}.";
        }
        return null;
    }

    private (ImmutableSortedDictionary<string, string> Joining, string? Refused) ApplyReserve(
        ClusterCommand command, ImmutableSortedDictionary<string, string> members, ImmutableSortedDictionary<string, string> joining)
    {
        if (command.Tag is not { Length: > 0 } tag || command.Url is not { Length: > 0 } url)
        {
            return (joining, "The reservation of a node carries no tag or URL.");
        }
        if (members.TryGetValue(tag, out var taken))
        {
            return (joining, $"Tag {tag} is already taken by the member at {taken}.");
        }
        if (TagOf(url) is { } member)
        {
            return (joining, $"The node at {url} is already a member, as {member}.");
        }
        if (ReservationConflict(tag, url) is { } conflict)
        {
            return (joining, conflict);
        }
        return (joining.SetItem(tag, url), null);
    }
}
