using Jackdaw.Server.Indexing.Definitions;

namespace Jackdaw.Server.Cluster;

/// <summary>
/// Which recorded auto-indexes the leader deletes for idleness, from the nodes' latest reports
/// (<see cref="AutoIndexUsageReport"/>; a pure function, carried out in
/// <c>ClusterNode.AutoIndexRetirement.cs</c>). Idleness is each node's own, so one is deleted only
/// when every node of its database, in a report younger than <c>freshFor</c>, says that this very
/// definition (its <c>CreatedAt</c>) went unqueried past its <c>AutoIndexDeleteAfter</c>. A node
/// that has not reported (down, just added, a leader just elected), or whose report lacks the
/// index, counts as using it: the index stays.
/// </summary>
public static class AutoIndexRetirement
{
    /// <param name="state">The cluster's state as the leader applied it.</param>
    /// <param name="reports">The latest report of each node for each database (older ones are ignored).</param>
    /// <param name="now">The leader's clock, to age the reports.</param>
    /// <param name="freshFor">How old a report may be and still count.</param>
    public static IReadOnlyList<(string Database, string Index)> Plan(
        ClusterState state, IEnumerable<AutoIndexUsageReport> reports, DateTime now, TimeSpan freshFor)
    {
        var retired = new List<(string, string)>();
        var fresh = reports.Where(r => now - r.ReceivedAt <= freshFor)
            .GroupBy(r => r.Database, StringComparer.OrdinalIgnoreCase);
        foreach (var database in fresh)
        {
            if (!state.Databases.TryGetValue(database.Key, out var record) || record.Nodes.Count == 0)
            {
                continue;
            }
            var latest = database.GroupBy(r => r.Node, StringComparer.Ordinal)
                .ToDictionary(g => g.Key, g => g.MaxBy(r => r.ReceivedAt)!, StringComparer.Ordinal);
            if (!record.Nodes.All(latest.ContainsKey))
            {
                continue;
            }
            var first = latest[record.Nodes[0]];
            foreach (var candidate in first.Indexes.Where(i => i.Expired))
            {
                if (!record.Indexes.TryGetValue(candidate.Name, out var index) || index.LockMode != IndexLockMode.Unlock)
                {
                    continue;
                }
                var definition = ClusterDatabases.Read(index.Definition);
                if (!definition.IsAutoIndex)
                {
                    continue;
                }
                bool ExpiredOn(AutoIndexUsageReport report) => report.Indexes.Any(i => i.Expired
                    && string.Equals(i.Name, index.Name, StringComparison.OrdinalIgnoreCase)
                    && i.CreatedAt == definition.CreatedAt);
                if (record.Nodes.All(node => ExpiredOn(latest[node])))
                {
                    retired.Add((record.Name, index.Name));
                }
            }
        }
        return retired;
    }
}
