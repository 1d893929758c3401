using System.Collections.Immutable;
using System.Text.Json;
using Jackdaw.Server.Errors;
using Jackdaw.Server.Indexing.Analysis;
using Jackdaw.Server.Indexing.Definitions;

namespace Jackdaw.Server.Cluster;

// The analyzers of a database record: put and delete, decided alike on every node from the record
// alone. Their code was compiled by the node that took the request; here only what a record must
// hold is checked (a valid name, a code), and a delete is refused while an index of the record
// names the analyzer (the lone server's AnalyzerInUseException).
public sealed partial class ClusterState
{
    private static (ImmutableSortedDictionary<string, ClusterDatabaseRecord> Databases, string? Refused) ApplyAnalyzers(
        ClusterCommand command, ImmutableSortedDictionary<string, ClusterDatabaseRecord> databases)
    {
        if (command.Database is not { } name || !databases.TryGetValue(name, out var record))
        {
            return (databases, $"Database '{command.Database}' does not exist.");
        }
        var analyzers = record.Analyzers;
        if (command.Kind == ClusterCommandKind.PutAnalyzers)
        {
            if (command.Analyzers is not { Count: > 0 } put)
            {
                return (databases, "The put of analyzers carries none.");
            }
            foreach (var analyzer in put)
            {
                try
                {
                    AnalyzerDefinition.ValidateName(analyzer.Name);
                }
                catch (AnalyzerCompilationException e)
                {
                    return (databases, e.Message);
                }
                if (analyzer.Code is null)
                {
                    return (databases, $"Analyzer '{analyzer.Name}' carries no code.");
                }
                // A name given in another casing replaces the one held (one analyzer per name ignoring case).
                analyzers = analyzers.Remove(analyzer.Name).Add(analyzer.Name, analyzer);
            }
            return (databases.SetItem(record.Name, record with { Analyzers = analyzers }), null);
        }
        if (command.Analyzer is not { Length: > 0 } deleted)
        {
            return (databases, "The delete of an analyzer carries no name.");
        }
        if (!analyzers.ContainsKey(deleted))
        {
            // None of that name (deleted twice in a race): nothing to do, as on a lone server.
            return (databases, null);
        }
        if (IndexesNaming(record, deleted) is { Count: > 0 } users)
        {
            return (databases, new AnalyzerInUseException(deleted, users).Message);
        }
        return (databases.SetItem(record.Name, record with { Analyzers = analyzers.Remove(deleted) }), null);
    }

    /// <summary>The names of the record's indexes whose fields name analyzer <paramref name="analyzer"/> (ignoring case), in name order.</summary>
    public static IReadOnlyList<string> IndexesNaming(ClusterDatabaseRecord record, string analyzer)
    {
        var users = new List<string>();
        foreach (var index in record.Indexes.Values)
        {
            // Cheap first: a definition that does not mention the name anywhere does not name it.
            if (index.Definition.Contains(analyzer, StringComparison.OrdinalIgnoreCase) && Names(index.Definition, analyzer))
            {
                users.Add(index.Name);
            }
        }
        return users;
    }

    private static bool Names(string definitionJson, string analyzer)
    {
        try
        {
            using var json = JsonDocument.Parse(definitionJson);
            var definition = IndexDefinition.FromStored(json.RootElement);
            return definition.Fields.Values.Any(o => string.Equals(o.Analyzer, analyzer, StringComparison.OrdinalIgnoreCase));
        }
        catch (Exception e) when (e is JsonException or KeyNotFoundException or InvalidOperationException or ArgumentException or FormatException)
        {
            // A definition the record holds was read when it was put; one that cannot be read now
            // names nothing this check could see.
            return false;
        }
    }
}
