using System.Collections.Immutable;
using System.Text;
using Jackdaw.Server.Documents;
using Jackdaw.Server.Errors;

namespace Jackdaw.Server.Cluster;

// A database's revisions configurations, in its record: set by SetRevisionsConfiguration and
// SetRevisionsConflictsConfiguration, applied by every node of the database to its copy
// (ClusterDatabases.Revisions.cs), so that every node keeps and removes the same revisions.
public sealed partial class ClusterState
{
    private static (ImmutableSortedDictionary<string, ClusterDatabaseRecord> Databases, string? Refused) ApplyRevisionsConfiguration(
        ClusterCommand command, ImmutableSortedDictionary<string, ClusterDatabaseRecord> databases)
    {
        if (command.Database is not { } name || command.Revisions is not { } json)
        {
            return (databases, "The revisions configuration command carries no database or configuration.");
        }
        if (!databases.TryGetValue(name, out var record))
        {
            return (databases, $"Database '{name}' does not exist.");
        }
        string normalized;
        try
        {
            // Stored as the database stores it, so each node compares its copy's with the record's byte for byte.
            normalized = command.Kind == ClusterCommandKind.SetRevisionsConfiguration
                ? Encoding.UTF8.GetString(RevisionsConfiguration.Parse(Encoding.UTF8.GetBytes(json)).Json)
                : Encoding.UTF8.GetString(RevisionsCollectionConfiguration.NormalizeConflictsConfiguration(Encoding.UTF8.GetBytes(json)));
        }
        catch (BadRequestException e)
        {
            return (databases, e.Message);
        }
        var changed = command.Kind == ClusterCommandKind.SetRevisionsConfiguration
            ? record with { RevisionsConfiguration = normalized }
            : record with { RevisionsConflictsConfiguration = normalized };
        return (databases.SetItem(record.Name, changed), null);
    }
}
