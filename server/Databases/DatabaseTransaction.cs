using Jackdaw.Server.Documents;
using Jackdaw.Storage.Engine;

namespace Jackdaw.Server.Databases;

/// <summary>
/// The database's write transaction, as the merger runs it: the documents' operations (inherited
/// from <see cref="DocumentsTransaction"/>, so document commands run on it unchanged) plus the
/// trees other features registered with <see cref="DocumentDatabase.RegisterTrees"/>.
/// </summary>
public sealed class DatabaseTransaction : DocumentsTransaction
{
    private readonly TreeRegistry _registry;

    internal DatabaseTransaction(string databaseId, WriteTransaction transaction, long lastEtag, TreeRegistry registry, string nodeTag)
        : base(databaseId, transaction, lastEtag, nodeTag)
    {
        _registry = registry;
    }

    /// <summary>A registered feature tree, created on first use; writing to it commits the transaction.</summary>
    /// <exception cref="InvalidOperationException">The tree was not registered.</exception>
    public Tree GetTree(string name)
    {
        _registry.ThrowIfNotRegistered(name);
        MarkWritten();
        return EngineTransaction.CreateTree(name);
    }
}
