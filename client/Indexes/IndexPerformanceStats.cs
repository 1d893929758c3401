namespace Jackdaw.Client;

/// <summary>The recent indexing batches of one index, oldest first, from <see cref="MaintenanceOperations.GetIndexPerformanceAsync(string[])"/>.</summary>
public sealed class IndexPerformanceStats
{
    public string Name { get; set; } = "";

    public IndexingPerformanceStats[] Performance { get; set; } = [];
}
