using System.Buffers.Binary;
using System.Text;

namespace Jackdaw.Server.Documents;

// The revision tombstones (DocumentsTransaction.RevisionTombstones.cs), read in revision-etag order
// by the revisions feed and the clean-up.
public partial class DocumentsReader
{
    /// <summary>How many revision tombstones the database keeps.</summary>
    public long RevisionTombstoneCount => _transaction.OpenTree(DocumentsStorage.RevisionTombstonesTree)?.Count ?? 0;

    /// <summary>The revision etag of the oldest revision tombstone; null when there is none.</summary>
    public long? OldestRevisionTombstoneEtag
    {
        get
        {
            if (_transaction.OpenTree(DocumentsStorage.RevisionTombstonesTree) is not { } tree)
            {
                return null;
            }
            using var iterator = tree.Iterate();
            return iterator.SeekFirst() ? StorageKeys.ReadEtag(iterator.Key) : null;
        }
    }

    /// <summary>The revision tombstones after <paramref name="afterEtag"/> (a revision etag), oldest first, at most <paramref name="take"/>.</summary>
    public List<RevisionTombstone> GetRevisionTombstonesAfter(long afterEtag, int take)
    {
        var result = new List<RevisionTombstone>();
        if (take <= 0 || _transaction.OpenTree(DocumentsStorage.RevisionTombstonesTree) is not { } tree)
        {
            return result;
        }
        Span<byte> start = stackalloc byte[StorageKeys.EtagSize];
        StorageKeys.WriteEtag(start, Math.Max(0, afterEtag) + 1);
        using var iterator = tree.Iterate();
        if (!iterator.Seek(start))
        {
            return result;
        }
        do
        {
            var value = iterator.Value;
            result.Add(new RevisionTombstone(StorageKeys.ReadEtag(iterator.Key), BinaryPrimitives.ReadInt64LittleEndian(value), Encoding.ASCII.GetString(value[sizeof(long)..])));
        }
        while (result.Count < take && iterator.MoveNext());
        return result;
    }

    /// <summary>Whether the revision of <paramref name="changeVector"/> was removed here and its tombstone is kept.</summary>
    public bool HasRevisionTombstone(string changeVector) =>
        _transaction.OpenTree(DocumentsStorage.RevisionTombstonesByChangeVectorTree) is { } tree && tree.TryGet(Encoding.ASCII.GetBytes(changeVector), out _);
}
