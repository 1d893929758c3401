namespace Jackdaw.Client;

/// <summary>One indexing batch: when it ran, what it read and wrote, and the tree of timed operations it spent its time in.</summary>
public sealed class IndexingPerformanceStats
{
    /// <summary>The batch's number, increasing per index.</summary>
    public long Id { get; set; }

    public DateTime Started { get; set; }

    public DateTime? Completed { get; set; }

    public double DurationInMs { get; set; }

    /// <summary>Documents and deletions the batch read.</summary>
    public long InputCount { get; set; }

    public long SuccessCount { get; set; }

    /// <summary>Documents the maps failed on (see <see cref="MaintenanceOperations.GetIndexErrorsAsync"/>).</summary>
    public long FailedCount { get; set; }

    /// <summary>Index entries written.</summary>
    public long OutputCount { get; set; }

    /// <summary>Bytes the indexing thread allocated during the batch.</summary>
    public long AllocatedBytes { get; set; }

    /// <summary>Size of the documents read.</summary>
    public DataSize DocumentsSize { get; set; } = new();

    /// <summary>The batch as a whole; its <see cref="IndexingPerformanceOperation.Operations"/> are the steps (storage read, map per collection, Lucene writes, commit).</summary>
    public IndexingPerformanceOperation Details { get; set; } = new();
}
