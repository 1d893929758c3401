namespace Jackdaw.Client;

/// <summary>Whether an index is working.</summary>
public enum IndexState
{
    Normal,
    Disabled,

    /// <summary>An auto-index nobody queried for a while; it indexes again when a query needs it.</summary>
    Idle,

    /// <summary>Too many documents failed to map; it stopped until reset (<see cref="MaintenanceOperations.ResetIndexAsync"/>).</summary>
    Error,
}
