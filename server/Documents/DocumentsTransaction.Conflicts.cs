using Jackdaw.Storage.Engine;

namespace Jackdaw.Server.Documents;

/// <summary>
/// Kept conflicts (replication with the keep policy): the concurrent versions of an id, in the
/// <c>Conflicts</c> tree, until a local write of the id (a PUT or DELETE: its change vector
/// follows every kept version) or a replicated version newer than all of them resolves it.
/// </summary>
public partial class DocumentsTransaction
{
    private Tree? _conflicts;

    private Tree Conflicts => _conflicts ??= EngineTransaction.CreateTree(DocumentsStorage.ConflictsTree);

    /// <summary>Whether this transaction added or removed kept versions.</summary>
    internal bool ConflictsChanged { get; private set; }

    /// <summary>How many kept versions there are, this transaction's changes included.</summary>
    internal long ConflictCount => Conflicts.Count;

    /// <summary>
    /// Records a conflict between the version this node holds (<paramref name="localDocument"/>
    /// null for a deletion; <paramref name="localChangeVector"/> null when it is kept already) and an
    /// incoming one; the document itself stays as it is here.
    /// </summary>
    public void AddConflict(string id, string? collection, string changeVector, long lastModifiedTicks, byte[]? document,
        string? localChangeVector, long localTicks, byte[]? localDocument, string? localCollection)
    {
        var idKey = DocumentIds.GetKey(id);
        var stored = TryGet(id, out var record) ? record.Id : id;
        var versions = new List<ConflictVersion> { new(stored, changeVector, lastModifiedTicks, collection, document) };
        if (localChangeVector is not null)
        {
            versions.Add(new ConflictVersion(stored, localChangeVector, localTicks, localCollection, localDocument));
        }
        foreach (var version in versions)
        {
            var key = ConflictRecord.Key(idKey, version.ChangeVector);
            if (!Conflicts.TryGet(key, out _))
            {
                Conflicts.Put(key, ConflictRecord.Write(version));
                ConflictsChanged = true;
            }
        }
        MarkWritten();
    }

    /// <summary>The kept versions of an id; empty when it is not in conflict.</summary>
    public List<ConflictVersion> GetConflicts(string id)
    {
        var result = new List<ConflictVersion>();
        if (Conflicts.Count == 0)
        {
            return result;
        }
        var prefix = ConflictRecord.Prefix(DocumentIds.GetKey(id));
        using var iterator = Conflicts.Iterate();
        if (iterator.SeekPrefix(prefix))
        {
            do
            {
                result.Add(ConflictRecord.Read(iterator.Value));
            }
            while (iterator.MoveNext() && iterator.KeyStartsWith(prefix));
        }
        return result;
    }

    /// <summary>
    /// Removes the kept versions of an id (by its storage key) and returns the merge of their
    /// change vectors, which a write resolving them must follow; null when there were none.
    /// </summary>
    private string? ResolveConflicts(ReadOnlySpan<byte> idKey)
    {
        if (Conflicts.Count == 0)
        {
            return null;
        }
        var prefix = ConflictRecord.Prefix(idKey);
        var keys = new List<byte[]>();
        string? merged = null;
        using (var iterator = Conflicts.Iterate())
        {
            if (iterator.SeekPrefix(prefix))
            {
                do
                {
                    keys.Add(iterator.Key.ToArray());
                    merged = ChangeVectors.Merge(merged, ConflictRecord.Read(iterator.Value).ChangeVector);
                }
                while (iterator.MoveNext() && iterator.KeyStartsWith(prefix));
            }
        }
        foreach (var key in keys)
        {
            Conflicts.Delete(key);
            ConflictsChanged = true;
        }
        return merged;
    }

    /// <summary>Removes the kept versions of an id once a replicated version newer than all of them was stored.</summary>
    public void ClearConflicts(string id) => ResolveConflicts(DocumentIds.GetKey(id));
}
