namespace Jackdaw.Storage.Engine.Paging;

/// <summary>
/// Recycles 8 KiB page arrays so that a steady write load does not turn every dirty page into
/// gen-2 garbage (page versions live in scratch until flushed, long enough to be promoted).
/// An array cut from the page table is retired with the current epoch; it becomes reusable only
/// once every transaction that began at or before that epoch has ended, since such a transaction
/// may still hold a span into it. Arrays of a rolled-back transaction were never visible to anyone
/// else and are reusable at once.
/// </summary>
internal sealed class PagePool
{
    private readonly int _maxPooled;
    private readonly Lock _lock = new();
    private readonly Stack<byte[]> _free = new();
    private readonly Queue<(long Epoch, List<byte[]> Arrays)> _retired = new();
    private int _retiredCount;

    /// <param name="maxPooled">Most arrays kept (idle memory is this times 8 KiB).</param>
    public PagePool(int maxPooled)
    {
        _maxPooled = maxPooled;
    }

    public int FreeCount
    {
        get
        {
            lock (_lock)
            {
                return _free.Count;
            }
        }
    }

    /// <summary>An 8 KiB array with undefined content.</summary>
    public byte[] Rent()
    {
        lock (_lock)
        {
            if (_free.TryPop(out var page))
            {
                return page;
            }
        }

        return GC.AllocateUninitializedArray<byte>(Constants.PageSize);
    }

    public void ReturnUnshared(byte[] page)
    {
        if (page.Length != Constants.PageSize)
        {
            return;
        }

        lock (_lock)
        {
            if (_free.Count < _maxPooled)
            {
                _free.Push(page);
            }
        }
    }

    public void Retire(long epoch, List<byte[]> arrays)
    {
        if (arrays.Count == 0)
        {
            return;
        }

        lock (_lock)
        {
            if (_retiredCount + _free.Count >= _maxPooled)
            {
                return;
            }

            _retired.Enqueue((epoch, arrays));
            _retiredCount += arrays.Count;
        }
    }

    /// <summary>Makes arrays retired before <paramref name="oldestActiveEpoch"/> reusable.</summary>
    public void Release(long oldestActiveEpoch)
    {
        lock (_lock)
        {
            while (_retired.TryPeek(out var head) && head.Epoch < oldestActiveEpoch)
            {
                _retired.Dequeue();
                _retiredCount -= head.Arrays.Count;
                foreach (var a in head.Arrays)
                {
                    if (_free.Count < _maxPooled)
                    {
                        _free.Push(a);
                    }
                }
            }
        }
    }

    public bool HasRetired
    {
        get
        {
            lock (_lock)
            {
                return _retired.Count > 0;
            }
        }
    }
}
