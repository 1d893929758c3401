namespace Jackdaw.Client;

/// <summary>How far an index has come, from <see cref="MaintenanceOperations.GetIndexStatisticsAsync"/>.</summary>
public sealed class IndexStats
{
    public string Name { get; set; } = "";

    public IndexType Type { get; set; }

    public IndexState State { get; set; }

    /// <summary>Whether it is indexing now: running, paused with all indexing, or disabled.</summary>
    public IndexRunningStatus Status { get; set; }

    public IndexLockMode LockMode { get; set; }

    public IndexPriority Priority { get; set; }

    /// <summary>
    /// Set on a replacement built side by side (named <c>ReplacementOf/{Name}</c>): the name of the
    /// index it replaces once it has caught up.
    /// </summary>
    public string? ReplacementOf { get; set; }

    /// <summary>A replacement's progress; null for other indexes.</summary>
    public IndexProgress? Progress { get; set; }

    /// <summary>Entries the index holds (a map may produce several per document, or none).</summary>
    public long EntriesCount { get; set; }

    /// <summary>Documents the maps were run on, and how many of those runs failed.</summary>
    public long MapAttempts { get; set; }

    public long MapErrors { get; set; }

    /// <summary>The etag of the last change indexed.</summary>
    public long? LastIndexedEtag { get; set; }

    /// <summary>True while changes committed to the database are not indexed yet.</summary>
    public bool IsStale { get; set; }

    public DateTime? LastQueryingTime { get; set; }

    public DateTime? LastIndexingTime { get; set; }
}
