using Jackdaw.Server.Documents;
using Jackdaw.Storage.Engine;

namespace Jackdaw.Server.Databases;

/// <summary>
/// A durable snapshot of the database: the documents' reads (inherited from
/// <see cref="DocumentsReader"/>) plus the trees other features registered.
/// </summary>
public sealed class DatabaseReader : DocumentsReader
{
    private readonly TreeRegistry _registry;

    internal DatabaseReader(string databaseId, ReadTransaction transaction, TreeRegistry registry, bool mayHaveConflicts = true)
        : base(databaseId, transaction)
    {
        _registry = registry;
        MayHaveConflicts = mayHaveConflicts;
    }

    /// <summary>A registered feature tree; null when nothing was written to it yet.</summary>
    /// <exception cref="InvalidOperationException">The tree was not registered.</exception>
    public Tree? GetTree(string name)
    {
        _registry.ThrowIfNotRegistered(name);
        return EngineTransaction.OpenTree(name);
    }
}
