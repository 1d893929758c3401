namespace Jackdaw.Server.Documents;

public partial class DocumentsReader
{
    /// <summary>
    /// False when no id can be in conflict in this snapshot: the database keeps it in memory
    /// (<see cref="MayHaveConflicts"/> is given by the database's reader), so a GET by id asks it
    /// before opening any tree and opens only <c>Docs</c>. True: look (<see cref="GetConflicts"/>).
    /// </summary>
    public bool MayHaveConflicts { get; protected init; } = true;

    /// <summary>How many kept versions there are (of every id).</summary>
    public long ConflictCount => _transaction.OpenTree(DocumentsStorage.ConflictsTree)?.Count ?? 0;

    /// <summary>The kept versions of an id; empty when it is not in conflict.</summary>
    public List<ConflictVersion> GetConflicts(string id)
    {
        var result = new List<ConflictVersion>();
        if (_transaction.OpenTree(DocumentsStorage.ConflictsTree) is not { Count: > 0 } tree)
        {
            return result;
        }
        var prefix = ConflictRecord.Prefix(DocumentIds.GetKey(id));
        using var iterator = tree.Iterate();
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

    /// <summary>Every kept version of every conflicted id, in id order.</summary>
    public List<ConflictVersion> GetAllConflicts()
    {
        var result = new List<ConflictVersion>();
        if (_transaction.OpenTree(DocumentsStorage.ConflictsTree) is not { Count: > 0 } tree)
        {
            return result;
        }
        using var iterator = tree.Iterate();
        if (iterator.SeekFirst())
        {
            do
            {
                result.Add(ConflictRecord.Read(iterator.Value));
            }
            while (iterator.MoveNext());
        }
        return result;
    }
}
