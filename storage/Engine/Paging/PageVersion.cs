using System.Collections.Concurrent;
using System.Runtime.CompilerServices;

namespace Jackdaw.Storage.Engine.Paging;

/// <summary>
/// One committed version of a page (or of an overflow run starting at that page) that is not
/// yet known to be in the data file. Versions of a page form a list, newest first.
/// Invariants: <see cref="Data"/> is never written after the version is published; the list is
/// only ever cut (Older set to null) by the flusher after the cut versions are durable in the
/// data file, so a reader that finds the cut simply reads the data file instead.
/// </summary>
internal sealed class PageVersion
{
    public PageVersion(long transactionId, byte[] data, PageVersion? older)
    {
        TransactionId = transactionId;
        Data = data;
        _older = older;
    }

    private PageVersion? _older;

    public long TransactionId { get; }

    public byte[] Data { get; }

    public PageVersion? Older
    {
        get => Volatile.Read(ref _older);
        set => Volatile.Write(ref _older, value);
    }
}

/// <summary>
/// The page translation table: page number to its committed versions that live in scratch memory
/// (managed arrays; the GC keeps one alive while any reader still holds a span into it).
/// Readers look up lock-free; the committer adds, the flusher cuts, both under <see cref="Lock"/>.
/// </summary>
internal sealed class PageTable
{
    private readonly ConcurrentDictionary<long, PageVersion> _pages = new(concurrencyLevel: 2, capacity: 1024);
    private int _versionCount;

    public object Lock { get; } = new();

    public int VersionCount => Volatile.Read(ref _versionCount);

    public bool IsEmpty => Volatile.Read(ref _versionCount) == 0;

    /// <summary>Newest version of the page visible at <paramref name="snapshot"/>, or null (read the data file).</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public byte[]? TryGet(long pageNumber, long snapshot)
    {
        if (Volatile.Read(ref _versionCount) == 0 || !_pages.TryGetValue(pageNumber, out var version))
        {
            return null;
        }

        return Find(version, snapshot);
    }

    /// <summary>Newest version of the page visible at <paramref name="snapshot"/>, with its transaction, or null.</summary>
    public PageVersion? TryGetVersion(long pageNumber, long snapshot)
    {
        if (!_pages.TryGetValue(pageNumber, out var version))
        {
            return null;
        }

        while (version is not null && version.TransactionId > snapshot)
        {
            version = version.Older;
        }

        return version;
    }

    private static byte[]? Find(PageVersion? version, long snapshot)
    {
        while (version is not null)
        {
            if (version.TransactionId <= snapshot)
            {
                return version.Data;
            }

            version = version.Older;
        }

        return null;
    }

    /// <summary>Publishes a committed transaction's pages. Caller holds <see cref="Lock"/>.</summary>
    public void Add(long transactionId, Dictionary<long, byte[]> pages)
    {
        foreach (var (number, data) in pages)
        {
            _pages.TryGetValue(number, out var head);
            _pages[number] = new PageVersion(transactionId, data, head);
        }

        Interlocked.Add(ref _versionCount, pages.Count);
    }

    /// <summary>For each page, the newest version at or below <paramref name="upTo"/> (what the data file must receive).</summary>
    public List<(long Page, PageVersion Version)> CollectFlushable(long upTo)
    {
        var result = new List<(long, PageVersion)>();
        foreach (var (number, head) in _pages)
        {
            for (var v = head; v is not null; v = v.Older)
            {
                if (v.TransactionId <= upTo)
                {
                    result.Add((number, v));
                    break;
                }
            }
        }

        return result;
    }

    /// <summary>
    /// Drops <paramref name="version"/> and every older version of the page, once they are durable
    /// in the data file. Caller holds <see cref="Lock"/>.
    /// </summary>
    public void Cut(long pageNumber, PageVersion version, List<byte[]> cutArrays)
    {
        if (!_pages.TryGetValue(pageNumber, out var head))
        {
            return;
        }

        var removed = 0;
        for (var v = version; v is not null; v = v.Older)
        {
            removed++;
            if (v.Data.Length == Constants.PageSize)
            {
                // Overflow runs are not pooled: only single pages go back to PagePool.
                cutArrays.Add(v.Data);
            }
        }

        if (ReferenceEquals(head, version))
        {
            _pages.TryRemove(new KeyValuePair<long, PageVersion>(pageNumber, head));
        }
        else
        {
            var v = head;
            while (v is not null && !ReferenceEquals(v.Older, version))
            {
                v = v.Older;
            }

            if (v is null)
            {
                return;
            }

            v.Older = null;
        }

        Interlocked.Add(ref _versionCount, -removed);
    }
}
