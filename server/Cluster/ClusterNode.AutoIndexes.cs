using System.Globalization;
using System.Net;
using System.Text;
using Jackdaw.Server.Errors;
using Jackdaw.Server.Indexing.Definitions;

namespace Jackdaw.Server.Cluster;

/// <summary>
/// Auto-indexes of a clustered database: made by a query on one node (which uses its own at once),
/// then put in the record (by the leader: a member that does not lead asks it over HTTP, as it does
/// for a restored database), so that the other nodes build them too; taken out when housekeeping
/// deletes one. In the background: a query never waits for the cluster, and a failure is logged
/// (the index stays on the node that made it).
/// </summary>
public sealed partial class ClusterNode
{
    internal void PublishAutoIndex(string database, IndexDefinition definition)
    {
        if (RecordOf(database) is not { } record || record.Indexes.ContainsKey(definition.Name))
        {
            return;
        }
        _ = Task.Run(async () =>
        {
            try
            {
                await ProposeAutoIndexAsync(database, definition, _stopping.Token).ConfigureAwait(false);
            }
            catch (Exception e) when (!_stopping.IsCancellationRequested)
            {
                LogAutoIndexNotRecorded(_logger, e, definition.Name, database);
            }
            catch (OperationCanceledException)
            {
            }
        });
    }

    internal void RetractAutoIndex(string database, string name)
    {
        if (RecordOf(database) is not { } record || !record.Indexes.ContainsKey(name))
        {
            return;
        }
        _ = Task.Run(async () =>
        {
            try
            {
                await RetractAutoIndexAsync(database, name, _stopping.Token).ConfigureAwait(false);
            }
            catch (Exception e) when (!_stopping.IsCancellationRequested)
            {
                LogAutoIndexNotRetracted(_logger, e, name, database);
            }
            catch (OperationCanceledException)
            {
            }
        });
    }

    private async Task ProposeAutoIndexAsync(string database, IndexDefinition definition, CancellationToken token)
    {
        if (IsLeader)
        {
            try
            {
                await PutIndexesAsync(database, [(definition, null, null)], ClusterCommand.NewId(), token).ConfigureAwait(false);
                return;
            }
            catch (NotLeaderException)
            {
                // Stepped down meanwhile: ask the new leader.
            }
        }
        var leaderUrl = await LeaderUrlAsync(token).ConfigureAwait(false);
        using var content = new StringContent(definition.ToJson().ToJsonString(), Encoding.UTF8, "application/json");
        using var response = await LeaderClient.PutAsync($"{leaderUrl}/databases/{Uri.EscapeDataString(database)}/admin/indexes/auto", content, token).ConfigureAwait(false);
        await EnsureSuccessAsync(response, leaderUrl, token).ConfigureAwait(false);
    }

    private async Task RetractAutoIndexAsync(string database, string name, CancellationToken token)
    {
        if (IsLeader)
        {
            try
            {
                await DeleteIndexAsync(database, name, ClusterCommand.NewId(), token).ConfigureAwait(false);
                return;
            }
            catch (NotLeaderException)
            {
                // Stepped down meanwhile: ask the new leader.
            }
        }
        var leaderUrl = await LeaderUrlAsync(token).ConfigureAwait(false);
        using var response = await LeaderClient.DeleteAsync(
            $"{leaderUrl}/databases/{Uri.EscapeDataString(database)}/indexes?name={Uri.EscapeDataString(name)}", token).ConfigureAwait(false);
        if (response.StatusCode != HttpStatusCode.NotFound)
        {
            await EnsureSuccessAsync(response, leaderUrl, token).ConfigureAwait(false);
        }
    }

    private async Task<string> LeaderUrlAsync(CancellationToken token) =>
        await WaitForLeaderAsync(TimeSpan.FromSeconds(10), token).ConfigureAwait(false) is var (_, url)
            ? url
            : throw NotLeader();

    private static async Task EnsureSuccessAsync(HttpResponseMessage response, string leaderUrl, CancellationToken token)
    {
        if (!response.IsSuccessStatusCode)
        {
            var text = await response.Content.ReadAsStringAsync(token).ConfigureAwait(false);
            throw new ClusterException(string.Create(CultureInfo.InvariantCulture, $"The leader at {leaderUrl} answered {(int)response.StatusCode}: {text}"));
        }
    }

    [LoggerMessage(EventId = 718, Level = LogLevel.Warning, Message = "Auto-index {Index} of database {Database} could not be put in the cluster's record; it stays on this node")]
    private static partial void LogAutoIndexNotRecorded(ILogger logger, Exception exception, string index, string database);

    [LoggerMessage(EventId = 719, Level = LogLevel.Warning, Message = "Auto-index {Index} of database {Database} was deleted here but could not be taken out of the cluster's record")]
    private static partial void LogAutoIndexNotRetracted(ILogger logger, Exception exception, string index, string database);
}
