namespace Jackdaw.Server.Documents;

public partial class DocumentsReader
{
    /// <summary>Whether any id is in conflict.</summary>
    public long ConflictCount => _transaction.OpenTree(DocumentsStorage.ConflictsTree)?.Count ?? 0;

    /// <summary>The kept versions of an id; empty when it is not in conflict.</summary>
    public List<ConflictVersion> GetConflicts(string id)
    {
        var result = new List<ConflictVersion>();
        if (_transaction.OpenTree(DocumentsStorage.ConflictsTree) is not { Count: > 0 } tree)
            return result;
        var prefix = ConflictRecord.Prefix(DocumentIds.GetKey(id));
        using var iterator = tree.Iterate();
        if (iterator.SeekPrefix(prefix))
        {
            do
            {
                result.Add(ConflictRecord.Read(iterator.Key, iterator.Value));
            }
            while (iterator.MoveNext() && iterator.KeyStartsWith(prefix));
        }
        return result;
    }

    /// <summary>Every kept version of every conflicted id, in id order.</summary>
    public List<ConflictVersion> GetAllConflicts()
    {
        var result = new List<ConflictVersion>();
        if (_transaction.OpenTree(DocumentsStorage.ConflictsTree) is not { Count: > 0 } tree)
            return result;
        using var iterator = tree.Iterate();
        if (iterator.SeekFirst())
        {
            do
            {
                result.Add(ConflictRecord.Read(iterator.Key, iterator.Value));
            }
            while (iterator.MoveNext());
        }
        return result;
    }
}
