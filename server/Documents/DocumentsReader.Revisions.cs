using System.Buffers.Binary;
using System.Text;
using Jackdaw.Storage.Engine;

namespace Jackdaw.Server.Documents;

/// <summary>
/// The revisions' part of the documents' read view. Lists of revisions are handed out as
/// <c>Revisions</c> keys (newest first where a client pages), each read with
/// <see cref="TryGetRevisionByKey"/>; records are valid until the reader is disposed.
/// </summary>
public partial class DocumentsReader
{
    private Tree? _revisionsTree;
    private bool _revisionsTreeOpened;

    /// <summary>The <c>Revisions</c> tree, opened once per reader (pages of revisions read it per entry).</summary>
    private Tree? RevisionsTree
    {
        get
        {
            if (!_revisionsTreeOpened)
            {
                _revisionsTree = _transaction.OpenTree(DocumentsStorage.RevisionsTree);
                _revisionsTreeOpened = true;
            }
            return _revisionsTree;
        }
    }

    /// <summary>The revisions configuration as stored (<see cref="RevisionsConfiguration.None"/> when there is none).</summary>
    public RevisionsConfiguration GetRevisionsConfiguration() =>
        _transaction.OpenTree(DocumentsStorage.MetaTree) is { } meta && meta.TryGet(DocumentsStorage.RevisionsConfigKey, out var json)
            ? RevisionsConfiguration.Parse(json)
            : RevisionsConfiguration.None;

    /// <summary>The conflict revisions configuration as stored (UTF-8 JSON), or null.</summary>
    public byte[]? GetRevisionsConflictsConfiguration() =>
        _transaction.OpenTree(DocumentsStorage.MetaTree) is { } meta && meta.TryGet(DocumentsStorage.RevisionsConflictsConfigKey, out var json)
            ? json.ToArray()
            : null;

    /// <summary>The etag of the last revision stored (the revisions' own counter); 0 when none ever was.</summary>
    public long LastRevisionEtag =>
        _transaction.OpenTree(DocumentsStorage.MetaTree) is { } meta && meta.TryGet(DocumentsStorage.LastRevisionEtagKey, out var value)
            ? BinaryPrimitives.ReadInt64LittleEndian(value)
            : 0;

    /// <summary>How many revisions the database holds.</summary>
    public long RevisionCount => _transaction.OpenTree(DocumentsStorage.RevisionsByEtagTree)?.Count ?? 0;

    /// <summary>How many revisions a document (any casing; deleted or not) has.</summary>
    public long GetRevisionsCountFor(string id)
    {
        Span<byte> key = stackalloc byte[DocumentIds.MaxKeyBytes];
        var length = DocumentIds.GetKey(id, key);
        if (length < 0 || _transaction.OpenTree(DocumentsStorage.RevisionCountsTree) is not { } counts || !counts.TryGet(key[..length], out var value))
        {
            return 0;
        }
        return BinaryPrimitives.ReadInt64LittleEndian(value);
    }

    /// <summary>The keys of a document's revisions, newest first, skipping <paramref name="start"/>, at most <paramref name="pageSize"/>.</summary>
    public List<byte[]> GetRevisionKeysFor(string id, int start, int pageSize)
    {
        var keys = new List<byte[]>();
        if (pageSize <= 0 || RevisionsTree is not { } tree || !TryRange(id, out var range))
        {
            return keys;
        }
        using var iterator = tree.Iterate();
        if (!SeekNewest(iterator, range))
        {
            return keys;
        }
        do
        {
            if (!iterator.Key.StartsWith(range))
            {
                break;
            }
            if (start > 0)
            {
                start--;
                continue;
            }
            keys.Add(iterator.Key.ToArray());
        }
        while (keys.Count < pageSize && iterator.MovePrev());
        return keys;
    }

    /// <summary>The key of a document's newest revision last modified at or before <paramref name="before"/>; null when there is none.</summary>
    public byte[]? GetRevisionKeyBefore(string id, DateTime before)
    {
        if (RevisionsTree is not { } tree || !TryRange(id, out var range))
        {
            return null;
        }
        var ticks = before.ToUniversalTime().Ticks;
        using var iterator = tree.Iterate();
        if (!SeekNewest(iterator, range))
        {
            return null;
        }
        do
        {
            if (!iterator.Key.StartsWith(range))
            {
                return null;
            }
            if (new RevisionRecord(iterator.Value).LastModifiedTicks <= ticks)
            {
                return iterator.Key.ToArray();
            }
        }
        while (iterator.MovePrev());
        return null;
    }

    /// <summary>The key of the revision of a change vector (unquoted); null when none has it.</summary>
    public byte[]? GetRevisionKey(string changeVector)
    {
        if (_transaction.OpenTree(DocumentsStorage.RevisionsByChangeVectorTree) is not { } tree || changeVector.Length == 0 || changeVector.Length > Tree.MaxKeySize)
        {
            return null;
        }
        return tree.TryGet(Encoding.UTF8.GetBytes(changeVector), out var key) ? key.ToArray() : null;
    }

    /// <summary>Reads a revision by its <c>Revisions</c> key.</summary>
    public bool TryGetRevisionByKey(ReadOnlySpan<byte> key, out RevisionRecord revision)
    {
        if (RevisionsTree is { } tree && tree.TryGet(key, out var value))
        {
            revision = new RevisionRecord(value);
            return true;
        }
        revision = default;
        return false;
    }

    /// <summary>
    /// The revisions bin (deleted documents that have revisions): the keys of their delete
    /// revisions, newest delete first, skipping <paramref name="start"/>, at most <paramref name="pageSize"/>.
    /// </summary>
    public List<byte[]> GetRevisionsBinKeys(int start, int pageSize)
    {
        var keys = new List<byte[]>();
        if (pageSize <= 0 || _transaction.OpenTree(DocumentsStorage.RevisionsBinTree) is not { } bin
            || _transaction.OpenTree(DocumentsStorage.RevisionsByEtagTree) is not { } byEtag)
        {
            return keys;
        }
        using var iterator = bin.Iterate();
        if (!iterator.SeekLast())
        {
            return keys;
        }
        do
        {
            if (start > 0)
            {
                start--;
                continue;
            }
            if (byEtag.TryGet(iterator.Key, out var key))
            {
                keys.Add(key.ToArray());
            }
        }
        while (keys.Count < pageSize && iterator.MovePrev());
        return keys;
    }

    /// <summary>
    /// The keys of every revision stored after revision etag <paramref name="afterEtag"/>, in etag
    /// order, at most <paramref name="take"/>: what an export or a backup copies.
    /// </summary>
    public List<byte[]> GetRevisionKeysAfter(long afterEtag, int take)
    {
        var keys = new List<byte[]>();
        if (take <= 0 || _transaction.OpenTree(DocumentsStorage.RevisionsByEtagTree) is not { } byEtag)
        {
            return keys;
        }
        using var iterator = byEtag.Iterate();
        if (!StorageKeys.SeekAfter(iterator, [], Math.Max(afterEtag, 0), byCollection: false))
        {
            return keys;
        }
        do
        {
            keys.Add(iterator.Value.ToArray());
        }
        while (keys.Count < take && iterator.MoveNext());
        return keys;
    }

    /// <summary>
    /// The keys of every revision, newest first (by revision etag), below <paramref name="beforeEtag"/>,
    /// at most <paramref name="take"/>: where a revert to a point in time looks for what changed since.
    /// </summary>
    public List<byte[]> GetRevisionKeysNewestFirst(long beforeEtag, int take)
    {
        var keys = new List<byte[]>();
        if (take <= 0 || beforeEtag <= 1 || _transaction.OpenTree(DocumentsStorage.RevisionsByEtagTree) is not { } byEtag)
        {
            return keys;
        }
        Span<byte> last = stackalloc byte[StorageKeys.EtagSize];
        StorageKeys.WriteEtag(last, beforeEtag - 1);
        using var iterator = byEtag.Iterate();
        if (!iterator.SeekLastLessOrEqual(last))
        {
            return keys;
        }
        do
        {
            keys.Add(iterator.Value.ToArray());
        }
        while (keys.Count < take && iterator.MovePrev());
        return keys;
    }

    /// <summary>The <c>[id prefix][0x1E]</c> range of a document's revisions; false for an id that is no storage key.</summary>
    private static bool TryRange(string id, out byte[] range)
    {
        Span<byte> key = stackalloc byte[DocumentIds.MaxKeyBytes];
        var length = DocumentIds.GetKey(id, key);
        if (length < 0)
        {
            range = [];
            return false;
        }
        Span<byte> buffer = stackalloc byte[RevisionKeys.MaxKeySize];
        range = buffer[..RevisionKeys.WriteRange(buffer, key[..length])].ToArray();
        return true;
    }

    /// <summary>Positions the iterator at the newest revision of the range (false when it has none).</summary>
    private static bool SeekNewest(TreeIterator iterator, ReadOnlySpan<byte> range)
    {
        Span<byte> last = stackalloc byte[RevisionKeys.MaxKeySize];
        range.CopyTo(last);
        StorageKeys.WriteEtag(last[range.Length..], long.MaxValue);
        return iterator.SeekLastLessOrEqual(last[..(range.Length + StorageKeys.EtagSize)]) && iterator.Key.StartsWith(range);
    }
}
