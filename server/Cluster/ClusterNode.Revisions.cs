using System.Text;

namespace Jackdaw.Server.Cluster;

/// <summary>
/// The revisions configurations of a clustered database (RavenDB's <c>ConfigureRevisionsOperation</c>
/// and <c>ConfigureRevisionsForConflictsOperation</c>): committed in its record on the leader, applied
/// by every node of the database to its copy (<see cref="ClusterDatabases"/>), so that every node
/// keeps, and removes, the same revisions.
/// </summary>
public sealed partial class ClusterNode
{
    /// <summary>
    /// Puts <paramref name="json"/> (checked by the caller) in the record of <paramref name="database"/>:
    /// the revisions configuration, or with <paramref name="conflicts"/> the conflict revisions
    /// configuration. Returns the state's etag with it (RavenDB's <c>RaftCommandIndex</c>).
    /// </summary>
    public async Task<long> SetRevisionsConfigurationAsync(string database, string json, bool conflicts, string commandId, CancellationToken token)
    {
        var record = RequireRecord(database);
        var kind = conflicts ? ClusterCommandKind.SetRevisionsConflictsConfiguration : ClusterCommandKind.SetRevisionsConfiguration;
        await ExecuteAsync(new ClusterCommand(commandId, kind) { Database = record.Name, Revisions = json }, token).ConfigureAwait(false);
        return State.Etag;
    }

    /// <summary>At founding: a local database's revisions configurations set before the cluster go into its record, so the nodes added later apply them too.</summary>
    private async Task RecordLocalRevisionsAsync(string database, CancellationToken token)
    {
        try
        {
            var local = _databases().GetDatabase(database);
            if (!State.Databases.TryGetValue(database, out var record))
            {
                return;
            }
            if (record.RevisionsConfiguration is null && local.RevisionsConfiguration.Json.Length > 0)
            {
                await ExecuteAsync(new ClusterCommand($"found/revisions/{database}", ClusterCommandKind.SetRevisionsConfiguration)
                {
                    Database = record.Name,
                    Revisions = Encoding.UTF8.GetString(local.RevisionsConfiguration.Json),
                }, token).ConfigureAwait(false);
            }
            byte[]? conflicts;
            using (var reader = local.BeginRead())
            {
                conflicts = reader.GetRevisionsConflictsConfiguration();
            }
            if (record.RevisionsConflictsConfiguration is null && conflicts is not null)
            {
                await ExecuteAsync(new ClusterCommand($"found/revisions-conflicts/{database}", ClusterCommandKind.SetRevisionsConflictsConfiguration)
                {
                    Database = record.Name,
                    Revisions = Encoding.UTF8.GetString(conflicts),
                }, token).ConfigureAwait(false);
            }
        }
        catch (Exception e) when (e is not OperationCanceledException)
        {
            LogRevisionsNotRecorded(_logger, e, database);
        }
    }

    [LoggerMessage(EventId = 785, Level = LogLevel.Error, Message = "The revisions configuration of database {Database} could not be put in its record; it stays on this node only")]
    private static partial void LogRevisionsNotRecorded(ILogger logger, Exception exception, string database);
}
