namespace Jackdaw.Client;

/// <summary>What deploying a definition did to the index of its name (<see cref="IndexDeployment.Outcome"/>).</summary>
public enum IndexDeploymentOutcome
{
    /// <summary>No index had that name: it was created and builds from the start.</summary>
    Created,

    /// <summary>The index already had this definition (maps equal once whitespace is normalized, same field options): nothing changed, nothing rebuilds.</summary>
    Unchanged,

    /// <summary>
    /// The index had another definition: the new one builds side by side as <c>ReplacementOf/{Name}</c>
    /// while the old one answers queries, and takes its place once caught up (or at
    /// <see cref="MaintenanceOperations.ReplaceIndexAsync"/>).
    /// </summary>
    Replaced,

    /// <summary>The index had another definition but is locked with <see cref="IndexLockMode.LockedIgnore"/>: the server kept the old one.</summary>
    Ignored,
}
