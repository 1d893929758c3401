using System.Text.Json.Serialization;
using Jackdaw.Server.Indexing.Definitions;

namespace Jackdaw.Server.Cluster;

/// <summary>
/// One index a command changes: <see cref="Definition"/> (the index store's JSON) for a put,
/// <see cref="LockMode"/> and <see cref="Priority"/> when they are set (a put may set them too);
/// the name alone for a delete.
/// </summary>
public sealed record ClusterIndexChange(string Name)
{
    public string? Definition { get; init; }

    [JsonConverter(typeof(JsonStringEnumConverter<IndexLockMode>))]
    public IndexLockMode? LockMode { get; init; }

    [JsonConverter(typeof(JsonStringEnumConverter<IndexPriority>))]
    public IndexPriority? Priority { get; init; }
}
