using System.Text.Json.Serialization;
using Jackdaw.Server.Indexing;

namespace Jackdaw.Server.Cluster;

/// <summary>
/// What node <paramref name="Node"/> last said of the recorded auto-indexes of its copy of
/// <paramref name="Database"/> (at each housekeeping pass, to the leader: the body of
/// <see cref="ClusterNode.AutoIndexUsagePath"/>). Advisory: the leader keeps the latest one per node
/// and database in memory, never in the cluster's state.
/// </summary>
public sealed record AutoIndexUsageReport(string Node, string Database, IReadOnlyList<AutoIndexUsage> Indexes)
{
    /// <summary>When the leader got it (its own clock); not sent.</summary>
    [JsonIgnore]
    public DateTime ReceivedAt { get; init; }
}
