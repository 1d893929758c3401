namespace Jackdaw.Server.Databases;

/// <summary>Settings of one database, the same for every database of a server.</summary>
public sealed class DocumentDatabaseOptions
{
    /// <summary>How often tombstones every consumer has passed are removed; <see cref="Timeout.InfiniteTimeSpan"/> turns the timer off.</summary>
    public TimeSpan TombstoneCleanupInterval { get; init; } = TimeSpan.FromMinutes(5);

    /// <summary>The most tombstones one clean-up transaction removes (a large backlog takes several).</summary>
    public int TombstoneCleanupBatch { get; init; } = 16 * 1024;
}
