namespace Jackdaw.Client;

/// <summary>How an index takes a changed definition (<see cref="MaintenanceOperations.SetIndexLockAsync(IndexLockMode, string[])"/>).</summary>
public enum IndexLockMode
{
    /// <summary>A changed definition is built side by side and replaces the index.</summary>
    Unlock,

    /// <summary>A changed definition is ignored: the PUT succeeds and the index keeps its definition.</summary>
    LockedIgnore,

    /// <summary>A changed definition is refused with <see cref="IndexLockedException"/>; nothing of that PUT is applied.</summary>
    LockedError,
}
