namespace Jackdaw.Server.Replication;

/// <summary>What a database does with concurrent versions of a document.</summary>
public enum ConflictPolicy : byte
{
    /// <summary>The latest write wins, the same on every node (<see cref="ConflictSolver"/>): the default.</summary>
    ResolveToLatest,

    /// <summary>Both versions are kept as a conflict for the user to resolve (RavenDB's behaviour without a resolver).</summary>
    Keep,
}
