using System.Collections.Concurrent;
using System.Net.Http.Json;
using System.Text.Json;
using Jackdaw.Server.Errors;
using Jackdaw.Server.Indexing;

namespace Jackdaw.Server.Cluster;

/// <summary>
/// Recorded auto-indexes idle on every node: each node reports, at each housekeeping pass, how its
/// copies of a database's recorded auto-indexes are used (to the leader: <see cref="AutoIndexUsagePath"/>,
/// or kept directly when it leads); the leader keeps the latest report per node and database in
/// memory and, with the subscriptions' watch, deletes from the record those every node of the
/// database reports expired (<see cref="AutoIndexRetirement"/>), as RavenDB's leader does.
/// </summary>
public sealed partial class ClusterNode
{
    /// <summary>Where a member that does not lead sends the use of its recorded auto-indexes to the leader.</summary>
    public const string AutoIndexUsagePath = "/admin/cluster/auto-index-usage";

    /// <summary>How old a node's report may be and still count (nodes report every <c>IdleCheckInterval</c>, a minute by default).</summary>
    public static TimeSpan AutoIndexReportFreshFor { get; set; } = TimeSpan.FromMinutes(10);

    // The latest report of each node for each database ("node\ndatabase", the name upper-cased); the leader's only.
    private readonly ConcurrentDictionary<string, AutoIndexUsageReport> _autoIndexReports = new(StringComparer.Ordinal);

    /// <summary>The reports the leader holds (tests look at them).</summary>
    public IReadOnlyCollection<AutoIndexUsageReport> AutoIndexReports => [.. _autoIndexReports.Values];

    internal void ReportAutoIndexUsage(string database, IReadOnlyList<AutoIndexUsage> usage)
    {
        if (RecordOf(database) is not { } record || !record.Nodes.Contains(NodeTag))
        {
            return;
        }
        // About the definitions the record holds as this node sees it: a report older than a
        // definition made again under the name then names the earlier one, and does not count. (Not
        // the copy's own CreatedAt: a node that made the same auto-index as another before the
        // record had it keeps its copy, with its own time.)
        var current = new List<AutoIndexUsage>();
        foreach (var entry in usage)
        {
            if (record.Indexes.TryGetValue(entry.Name, out var index))
            {
                current.Add(entry with { Name = index.Name, CreatedAt = ClusterDatabases.Read(index.Definition).CreatedAt });
            }
        }
        var report = new AutoIndexUsageReport(NodeTag, record.Name, current);
        if (IsLeader)
        {
            try
            {
                ReceiveAutoIndexUsage(report);
            }
            catch (Exception e) when (e is NotLeaderException or BadRequestException)
            {
                // Stepped down, or left the cluster, meanwhile: the next pass reports again.
                LogAutoIndexUsageNotSent(_logger, record.Name, e.Message);
            }
            return;
        }
        _ = Task.Run(async () =>
        {
            try
            {
                var leaderUrl = await LeaderUrlAsync(_stopping.Token).ConfigureAwait(false);
                using var response = await LeaderClient.PostAsJsonAsync(leaderUrl + AutoIndexUsagePath, report, JsonSerializerOptions.Default, _stopping.Token).ConfigureAwait(false);
                await EnsureSuccessAsync(response, leaderUrl, _stopping.Token).ConfigureAwait(false);
            }
            catch (Exception e) when (!_stopping.IsCancellationRequested)
            {
                // The next pass reports again; meanwhile the leader counts this node as using them.
                LogAutoIndexUsageNotSent(_logger, record.Name, e.Message);
            }
            catch (OperationCanceledException)
            {
            }
        });
    }

    /// <summary>Keeps a node's report (on the leader), replacing its previous one for the database.</summary>
    /// <exception cref="NotLeaderException">This node does not lead.</exception>
    /// <exception cref="BadRequestException">The node is no member, or the database has no record.</exception>
    public void ReceiveAutoIndexUsage(AutoIndexUsageReport report)
    {
        if (!IsClustered || !IsLeader)
        {
            throw NotLeader();
        }
        if (!State.Members.ContainsKey(report.Node))
        {
            throw new BadRequestException($"Node '{report.Node}' is not a member of the cluster.");
        }
        if (RecordOf(report.Database) is not { } record)
        {
            throw new BadRequestException($"The cluster has no database '{report.Database}'.");
        }
        _autoIndexReports[report.Node + "\n" + record.Name.ToUpperInvariant()] = report with { Database = record.Name, ReceivedAt = DateTime.UtcNow };
    }

    /// <summary>
    /// On the leader, every second (with the subscriptions' mentors): deletes from the records the
    /// auto-indexes every node of their database reports expired; forgets reports too old to count.
    /// </summary>
    private async Task RetireIdleAutoIndexesAsync(ClusterState state, DateTime now, CancellationToken token)
    {
        if (_autoIndexReports.IsEmpty)
        {
            return;
        }
        foreach (var (key, report) in _autoIndexReports)
        {
            if (now - report.ReceivedAt > AutoIndexReportFreshFor)
            {
                _autoIndexReports.TryRemove(KeyValuePair.Create(key, report));
            }
        }
        foreach (var (database, index) in AutoIndexRetirement.Plan(state, _autoIndexReports.Values, now, AutoIndexReportFreshFor))
        {
            try
            {
                await DeleteIndexAsync(database, index, ClusterCommand.NewId(), token).ConfigureAwait(false);
                LogAutoIndexRetired(_logger, index, database, NodesOf(state, database));
            }
            catch (Exception e) when (e is IndexDoesNotExistException or IndexLockedException or ClusterException)
            {
                // Deleted, locked or refused meanwhile: the next pass plans from the record as it is then.
                LogAutoIndexNotRetired(_logger, index, database, e.Message);
            }
        }
    }

    private static string NodesOf(ClusterState state, string database) =>
        state.Databases.TryGetValue(database, out var record) ? string.Join(", ", record.Nodes) : "";

    [LoggerMessage(EventId = 750, Level = LogLevel.Warning, Message = "Auto-index {Index} of database {Database} was not queried past AutoIndexDeleteAfter on any of its nodes ({Nodes}); deleted from its record")]
    private static partial void LogAutoIndexRetired(ILogger logger, string index, string database, string nodes);

    [LoggerMessage(EventId = 751, Level = LogLevel.Information, Message = "Auto-index {Index} of database {Database}, idle on every node, was not deleted from its record: {Reason}")]
    private static partial void LogAutoIndexNotRetired(ILogger logger, string index, string database, string reason);

    [LoggerMessage(EventId = 752, Level = LogLevel.Debug, Message = "The use of the auto-indexes of database {Database} could not be reported to the leader (reported again at the next pass): {Error}")]
    private static partial void LogAutoIndexUsageNotSent(ILogger logger, string database, string error);
}
