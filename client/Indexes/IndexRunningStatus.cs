namespace Jackdaw.Client;

/// <summary>Whether an index is indexing now, from <see cref="IndexStats.Status"/>.</summary>
public enum IndexRunningStatus
{
    Running,

    /// <summary>All indexing of the database is stopped (<see cref="MaintenanceOperations.StopIndexingAsync"/>) until started again or the server restarts.</summary>
    Paused,

    /// <summary>The index is disabled (<see cref="MaintenanceOperations.DisableIndexAsync"/>) until enabled; this survives restarts.</summary>
    Disabled,
}
