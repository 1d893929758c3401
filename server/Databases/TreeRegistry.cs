using Jackdaw.Server.Documents;

namespace Jackdaw.Server.Databases;

/// <summary>
/// The one registration point for trees of features beside the documents (index definitions,
/// subscription positions, ...): a feature registers its tree names once when it starts, and only
/// registered names can be opened through the database's transactions. The documents' own trees
/// (<see cref="DocumentsStorage.TreeNames"/>) can never be registered.
/// </summary>
internal sealed class TreeRegistry
{
    private readonly NonBlocking.ConcurrentDictionary<string, string> _owners = new(StringComparer.Ordinal);

    public void Register(string owner, IEnumerable<string> names)
    {
        foreach (var name in names)
        {
            ArgumentException.ThrowIfNullOrWhiteSpace(name);
            if (DocumentsStorage.TreeNames.Contains(name, StringComparer.Ordinal))
            {
                throw new InvalidOperationException($"'{name}' is a tree of the documents schema; {owner} must use a tree of its own.");
            }
            var existing = _owners.GetOrAdd(name, owner);
            if (existing != owner)
            {
                throw new InvalidOperationException($"The tree '{name}' is already registered by {existing}; {owner} must use another name.");
            }
        }
    }

    public void ThrowIfNotRegistered(string name)
    {
        if (!_owners.ContainsKey(name))
        {
            throw new InvalidOperationException($"The tree '{name}' is not registered; register it with DocumentDatabase.RegisterTrees first.");
        }
    }
}
