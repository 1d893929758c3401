namespace Jackdaw.Client;

/// <summary>How much of the database's indexing time an index gets (<see cref="MaintenanceOperations.SetIndexPriorityAsync(IndexPriority, string[])"/>).</summary>
public enum IndexPriority
{
    Low,
    Normal,
    High,
}
