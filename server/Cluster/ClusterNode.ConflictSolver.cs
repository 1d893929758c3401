using Jackdaw.Server.Replication;

namespace Jackdaw.Server.Cluster;

/// <summary>
/// The conflict solver of a clustered database (RavenDB's <c>ModifyConflictSolverOperation</c>):
/// committed in its record on the leader, applied by every node of the database to its copy
/// (<see cref="ClusterDatabases"/>), so that a conflict resolves the same way on each.
/// </summary>
public sealed partial class ClusterNode
{
    /// <summary>Puts <paramref name="solver"/> (RavenDB's ConflictSolver JSON, checked by the caller) in the record of <paramref name="database"/>; returns the state's etag with it.</summary>
    public async Task<long> SetConflictSolverAsync(string database, string solver, string commandId, CancellationToken token)
    {
        var record = RequireRecord(database);
        await ExecuteAsync(new ClusterCommand(commandId, ClusterCommandKind.SetConflictSolver) { Database = record.Name, ConflictSolver = solver }, token).ConfigureAwait(false);
        return State.Etag;
    }

    /// <summary>At founding: a local database's conflict solver set before the cluster goes into its record, so the nodes added later apply it too.</summary>
    private async Task RecordLocalConflictSolverAsync(string database, CancellationToken token)
    {
        try
        {
            var solver = DatabaseReplication.Of(_databases().GetDatabase(database)).ConflictSolverJson;
            if (solver is not null && State.Databases.TryGetValue(database, out var record) && record.ConflictSolver is null)
            {
                await ExecuteAsync(new ClusterCommand($"found/solver/{database}", ClusterCommandKind.SetConflictSolver) { Database = record.Name, ConflictSolver = solver }, token).ConfigureAwait(false);
            }
        }
        catch (Exception e) when (e is not OperationCanceledException)
        {
            LogSolverNotRecorded(_logger, e, database);
        }
    }

    [LoggerMessage(EventId = 709, Level = LogLevel.Error, Message = "The conflict solver of database {Database} could not be put in its record; it stays on this node only")]
    private static partial void LogSolverNotRecorded(ILogger logger, Exception exception, string database);
}
