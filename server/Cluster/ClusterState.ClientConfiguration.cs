using System.Collections.Immutable;

namespace Jackdaw.Server.Cluster;

// RavenDB's client configuration: server-wide in the state, per database in its record, each with
// the log index that set it (its etag, which clients compare).
public sealed partial class ClusterState
{
    /// <summary>The server-wide client configuration (RavenDB's <c>PUT /admin/configuration/client</c>); null: none.</summary>
    public ClusterClientConfiguration? ClientConfiguration { get; private init; }

    private static (ImmutableSortedDictionary<string, ClusterDatabaseRecord> Databases, ClusterClientConfiguration? Server, string? Refused) ApplyClientConfiguration(
        ClusterCommand command, long index, ImmutableSortedDictionary<string, ClusterDatabaseRecord> databases, ClusterClientConfiguration? server)
    {
        if (command.ClientConfiguration is not { Length: > 0 } json)
        {
            return (databases, server, "The client configuration command carries no configuration.");
        }
        if (command.Database is not { } name)
        {
            return (databases, new ClusterClientConfiguration(json, index), null);
        }
        if (!databases.TryGetValue(name, out var record))
        {
            return (databases, server, $"Database '{name}' does not exist.");
        }
        return (databases.SetItem(record.Name, record with { ClientConfiguration = new ClusterClientConfiguration(json, index) }), server, null);
    }
}
