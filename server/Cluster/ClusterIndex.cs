using System.Text.Json.Serialization;
using Jackdaw.Server.Indexing.Definitions;

namespace Jackdaw.Server.Cluster;

/// <summary>
/// An index as a database record holds it: its name, its definition as the JSON the index store
/// takes (<see cref="IndexDefinition.ToJson"/>, with its creation time, so every node builds the
/// same definition), its lock mode and its priority. Each node of the database builds it from this.
/// </summary>
public sealed record ClusterIndex(string Name, string Definition)
{
    [JsonConverter(typeof(JsonStringEnumConverter<IndexLockMode>))]
    public IndexLockMode LockMode { get; init; } = IndexLockMode.Unlock;

    [JsonConverter(typeof(JsonStringEnumConverter<IndexPriority>))]
    public IndexPriority Priority { get; init; } = IndexPriority.Normal;
}
