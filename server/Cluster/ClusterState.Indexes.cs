using System.Collections.Immutable;
using Jackdaw.Server.Indexing.Definitions;

namespace Jackdaw.Server.Cluster;

// The index definitions of a database record: put, delete, lock and priority, decided alike on
// every node from the record alone (the definitions are compared as the JSON committed: the node
// that proposes a put keeps the committed JSON of a definition that did not change).
public sealed partial class ClusterState
{
    private static (ImmutableSortedDictionary<string, ClusterIndex> Indexes, string? Refused) ApplyIndexes(
        ClusterCommandKind kind, ImmutableSortedDictionary<string, ClusterIndex> indexes, IReadOnlyList<ClusterIndexChange> changes)
    {
        foreach (var change in changes)
        {
            indexes.TryGetValue(change.Name, out var existing);
            switch (kind)
            {
                case ClusterCommandKind.PutIndexes:
                    if (change.Definition is not { Length: > 0 } definition)
                    {
                        return (indexes, $"The put of index '{change.Name}' carries no definition.");
                    }
                    if (existing is not null && existing.Definition != definition)
                    {
                        if (existing.LockMode == IndexLockMode.LockedError)
                        {
                            return (indexes, $"Index '{existing.Name}' is locked (LockedError): its definition cannot change. Unlock it first.");
                        }
                        if (existing.LockMode == IndexLockMode.LockedIgnore)
                        {
                            definition = existing.Definition;
                        }
                    }
                    indexes = indexes.SetItem(existing?.Name ?? change.Name, new ClusterIndex(existing?.Name ?? change.Name, definition)
                    {
                        LockMode = change.LockMode ?? existing?.LockMode ?? IndexLockMode.Unlock,
                        Priority = change.Priority ?? existing?.Priority ?? IndexPriority.Normal,
                    });
                    break;
                case ClusterCommandKind.DeleteIndexes:
                    if (existing is null)
                    {
                        return (indexes, $"Index '{change.Name}' does not exist.");
                    }
                    if (existing.LockMode == IndexLockMode.LockedError)
                    {
                        return (indexes, $"Index '{existing.Name}' is locked (LockedError): it cannot be deleted. Unlock it first.");
                    }
                    if (existing.LockMode == IndexLockMode.Unlock)
                    {
                        indexes = indexes.Remove(existing.Name);
                    }
                    break;
                case ClusterCommandKind.SetIndexLock:
                    if (existing is null || change.LockMode is not { } mode)
                    {
                        return (indexes, existing is null ? $"Index '{change.Name}' does not exist." : $"The lock change of index '{change.Name}' carries no lock mode.");
                    }
                    indexes = indexes.SetItem(existing.Name, existing with { LockMode = mode });
                    break;
                case ClusterCommandKind.SetIndexPriority:
                    if (existing is null || change.Priority is not { } priority)
                    {
                        return (indexes, existing is null ? $"Index '{change.Name}' does not exist." : $"The priority change of index '{change.Name}' carries no priority.");
                    }
                    indexes = indexes.SetItem(existing.Name, existing with { Priority = priority });
                    break;
            }
        }
        return (indexes, null);
    }
}
