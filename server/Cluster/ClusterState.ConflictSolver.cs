using System.Collections.Immutable;
using System.Text.Json;

namespace Jackdaw.Server.Cluster;

// A database's conflict solver, in its record: set by SetConflictSolver, applied by every node of
// the database to its copy (ClusterDatabases).
public sealed partial class ClusterState
{
    private static (ImmutableSortedDictionary<string, ClusterDatabaseRecord> Databases, string? Refused) ApplyConflictSolver(
        ClusterCommand command, ImmutableSortedDictionary<string, ClusterDatabaseRecord> databases)
    {
        if (command.Database is not { } name || command.ConflictSolver is not { } solver)
        {
            return (databases, "The conflict solver command carries no database or solver.");
        }
        if (!databases.TryGetValue(name, out var record))
        {
            return (databases, $"Database '{name}' does not exist.");
        }
        try
        {
            using var json = JsonDocument.Parse(solver);
            if (json.RootElement.ValueKind != JsonValueKind.Object)
            {
                return (databases, "A conflict solver is a JSON object such as {\"ResolveToLatest\":true}.");
            }
        }
        catch (JsonException e)
        {
            return (databases, $"The conflict solver is not valid JSON: {e.Message}");
        }
        return (databases.SetItem(record.Name, record with { ConflictSolver = solver }), null);
    }
}
