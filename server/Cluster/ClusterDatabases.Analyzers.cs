using System.Collections.Immutable;
using Jackdaw.Server.Databases;
using Jackdaw.Server.Errors;
using Jackdaw.Server.Indexing;
using Jackdaw.Server.Indexing.Analysis;

namespace Jackdaw.Server.Cluster;

// The analyzers of the records, put in this node's copies: new and changed ones before the indexes
// (which may name them), those gone after the indexes (which may have named them).
internal sealed partial class ClusterDatabases
{
    /// <summary>
    /// Brings database <paramref name="database"/>'s analyzers from <paramref name="before"/> to
    /// <paramref name="after"/>: the puts (<paramref name="deletes"/> false; an index using one whose
    /// recipe changed is rebuilt, on every node alike) or the deletes. An analyzer an index of this
    /// node alone names (one the record lacks) is kept here, and said so. A failure is logged and
    /// fails the step (tried again later): false.
    /// </summary>
    private async Task<bool> ApplyAnalyzersAsync(
        DatabasesLandlord landlord, string database, ImmutableSortedDictionary<string, AnalyzerDefinition> before, ImmutableSortedDictionary<string, AnalyzerDefinition> after, bool deletes)
    {
        if (ReferenceEquals(before, after))
        {
            return true;
        }
        try
        {
            var store = IndexStore.Of(landlord.GetDatabase(database));
            if (!deletes)
            {
                var put = after.Values.Where(a => !before.TryGetValue(a.Name, out var was) || was != a).ToList();
                if (put.Count > 0)
                {
                    var rebuilt = await store.PutAnalyzersAsync(put).ConfigureAwait(false);
                    LogAnalyzersPut(_logger, database, string.Join(", ", put.Select(a => a.Name)), rebuilt.Count);
                }
                return true;
            }
            foreach (var name in before.Keys.Where(n => !after.ContainsKey(n)))
            {
                try
                {
                    await store.DeleteAnalyzerAsync(name).ConfigureAwait(false);
                    LogAnalyzerDeleted(_logger, database, name);
                }
                catch (AnalyzerInUseException e)
                {
                    LogAnalyzerKept(_logger, database, name, e.Message);
                }
            }
            return true;
        }
        catch (Exception e) when (e is not OperationCanceledException)
        {
            LogAnalyzersFailed(_logger, database, e);
            return false;
        }
    }

    [LoggerMessage(EventId = 746, Level = LogLevel.Information, Message = "Database {Database}: analyzers {Analyzers} put as the cluster's record says ({Rebuilt} index(es) rebuilt)")]
    private static partial void LogAnalyzersPut(ILogger logger, string database, string analyzers, int rebuilt);

    [LoggerMessage(EventId = 747, Level = LogLevel.Information, Message = "Database {Database}: analyzer {Analyzer} deleted as the cluster's record says")]
    private static partial void LogAnalyzerDeleted(ILogger logger, string database, string analyzer);

    [LoggerMessage(EventId = 748, Level = LogLevel.Warning, Message = "Database {Database}: analyzer {Analyzer} left the cluster's record but is kept on this node, where an index the record lacks names it: {Reason}")]
    private static partial void LogAnalyzerKept(ILogger logger, string database, string analyzer, string reason);

    [LoggerMessage(EventId = 749, Level = LogLevel.Error, Message = "Could not bring the analyzers of database {Database} in line with the cluster's record; tried again shortly")]
    private static partial void LogAnalyzersFailed(ILogger logger, string database, Exception exception);
}
