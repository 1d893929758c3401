using Jackdaw.Server.Errors;
using Jackdaw.Server.Indexing.Analysis;

namespace Jackdaw.Server.Cluster;

/// <summary>
/// Analyzers of a clustered database, committed in its record; every node of the database puts
/// them in its copy before it builds the indexes (<see cref="ClusterDatabases"/>). Proposed on the
/// leader: the request's analyzers were compiled before, so a bad one is refused before anything is
/// committed. Each method returns the state's etag with the change, to wait for with
/// <see cref="WaitForLocalAsync"/>.
/// </summary>
public sealed partial class ClusterNode
{
    /// <summary>
    /// Puts <paramref name="definitions"/> (compiled already) in the record of <paramref name="database"/>.
    /// Nothing is committed when the record holds them all already, as they are.
    /// </summary>
    public async Task<long> PutAnalyzersAsync(string database, IReadOnlyList<AnalyzerDefinition> definitions, string commandId, CancellationToken token)
    {
        var record = RequireRecord(database);
        if (definitions.All(d => record.Analyzers.TryGetValue(d.Name, out var held) && held == d))
        {
            return State.Etag;
        }
        await ExecuteAsync(new ClusterCommand(commandId, ClusterCommandKind.PutAnalyzers) { Database = record.Name, Analyzers = definitions }, token).ConfigureAwait(false);
        return State.Etag;
    }

    /// <summary>
    /// Deletes analyzer <paramref name="name"/> from the record of <paramref name="database"/>; nothing
    /// when the record has none of that name (as on a lone server).
    /// </summary>
    /// <exception cref="AnalyzerInUseException">An index of the record names it.</exception>
    public async Task<long> DeleteAnalyzerAsync(string database, string name, string commandId, CancellationToken token)
    {
        var record = RequireRecord(database);
        if (!record.Analyzers.TryGetValue(name, out var held))
        {
            return State.Etag;
        }
        if (ClusterState.IndexesNaming(record, held.Name) is { Count: > 0 } users)
        {
            throw new AnalyzerInUseException(held.Name, users);
        }
        await ExecuteAsync(new ClusterCommand(commandId, ClusterCommandKind.DeleteAnalyzer) { Database = record.Name, Analyzer = held.Name }, token).ConfigureAwait(false);
        return State.Etag;
    }

    /// <summary>
    /// Checks that every analyzer the fields of <paramref name="definitions"/> name is built in or
    /// one of the record's: an index put on a clustered database is refused (400) otherwise, before
    /// anything is committed, rather than fail on every node.
    /// </summary>
    /// <exception cref="IndexCompilationException">A field names an analyzer that is neither.</exception>
    public static void CheckAnalyzers(ClusterDatabaseRecord record, IReadOnlyList<Indexing.Definitions.IndexDefinition> definitions)
    {
        foreach (var definition in definitions)
        {
            foreach (var (field, options) in definition.Fields)
            {
                if (options.Analyzer is not { } name || BuiltInAnalyzers.Find(name) is not null || record.Analyzers.ContainsKey(name))
                {
                    continue;
                }
                throw AnalyzerStore.Missing(definition, field, name, $"database '{record.Name}' in the cluster's record", record.Analyzers.Keys);
            }
        }
    }

    /// <summary>
    /// Puts the analyzers of this node's database <paramref name="database"/> in its record (a lone
    /// server founding a cluster), before its indexes, which may name them.
    /// </summary>
    private async Task RecordLocalAnalyzersAsync(string database, CancellationToken token)
    {
        try
        {
            var definitions = Indexing.IndexStore.Of(_databases().GetDatabase(database)).Analyzers.Definitions;
            if (definitions.Count == 0)
            {
                return;
            }
            await PutAnalyzersAsync(database, definitions, $"found/analyzers/{database}", token).ConfigureAwait(false);
        }
        catch (Exception e) when (e is not OperationCanceledException)
        {
            // The cluster is founded all the same; the analyzers stay on this node (PUT them again to record them).
            LogAnalyzersNotRecorded(_logger, e, database);
        }
    }

    [LoggerMessage(EventId = 743, Level = LogLevel.Error, Message = "The analyzers of database {Database} could not be put in its record; they stay on this node only")]
    private static partial void LogAnalyzersNotRecorded(ILogger logger, Exception exception, string database);
}
