using System.Numerics;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using System.Text;
using Jackdaw.Storage.Engine.Journal;
using Jackdaw.Storage.Engine.Paging;
using Jackdaw.Storage.Engine.Trees;

namespace Jackdaw.Storage.Engine;

/// <summary>
/// The single writer. Reads see the last commit (durable or not) plus its own changes; changes
/// live in private page copies until <see cref="Commit"/>. Dispose without commit = rollback.
/// </summary>
public sealed class WriteTransaction : ReadTransaction
{
    private readonly Dictionary<long, byte[]> _dirty = [];

    // The committed version each page of _dirty was copied from (absent for new pages): the journal
    // records only what the transaction changed in it.
    private readonly Dictionary<long, PageHandle> _bases = [];
    private readonly long _id;
    private byte[]? _state;
    private bool _committed;

    internal WriteTransaction(StorageEnvironment environment, long lastCommitted, long epoch)
        : base(environment, lastCommitted, epoch)
    {
        _id = lastCommitted + 1;
    }

    public override long Id => _id;

    internal override bool IsWrite => true;

    internal int DirtyPageCount => _dirty.Count;

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal override PageHandle GetPage(long pageNumber) =>
        _dirty.TryGetValue(pageNumber, out var page) ? new PageHandle(page) : base.GetPage(pageNumber);

    /// <summary>The transaction's own writable copy of the page (copied on first write).</summary>
    internal Span<byte> ModifyPage(long pageNumber)
    {
        if (_dirty.TryGetValue(pageNumber, out var page))
        {
            return page;
        }

        var committed = base.GetPage(pageNumber);
        var source = committed.Span;
        var copy = source.Length == Constants.PageSize ? Environment.Pool.Rent() : GC.AllocateUninitializedArray<byte>(source.Length);
        source.CopyTo(copy);
        _dirty[pageNumber] = copy;
        _bases[pageNumber] = committed;
        return copy;
    }

    private ref StateHeader State
    {
        get
        {
            _state ??= ModifyPageArray(Constants.StatePage);
            return ref StateHeader.Of(_state);
        }
    }

    private byte[] ModifyPageArray(long pageNumber)
    {
        ModifyPage(pageNumber);
        return _dirty[pageNumber];
    }

    /// <summary>A fresh zeroed 8 KiB page.</summary>
    internal Span<byte> NewPage(out long pageNumber)
    {
        pageNumber = AllocatePages(1);
        var page = Environment.Pool.Rent();
        Array.Clear(page);
        _dirty[pageNumber] = page;
        _bases.Remove(pageNumber);
        return page;
    }

    /// <summary>A fresh overflow run for a value of <paramref name="valueLength"/> bytes (the value starts after the page header).</summary>
    internal Span<byte> NewOverflow(long valueLength, out long pageNumber, out int pages)
    {
        pages = Constants.PagesForOverflow(valueLength);
        pageNumber = AllocatePages(pages);
        var run = GC.AllocateUninitializedArray<byte>(checked(pages * Constants.PageSize));
        run.AsSpan(0, PageHeader.Size).Clear();
        ref var h = ref PageHeader.Of(run.AsSpan());
        h.PageNumber = pageNumber;
        h.Flags = PageFlags.Overflow;
        h.OverflowPages = pages;
        h.OverflowSize = valueLength;
        var tail = PageHeader.Size + valueLength;
        run.AsSpan((int)tail).Clear();
        _dirty[pageNumber] = run;
        _bases.Remove(pageNumber);
        return run;
    }

    /// <summary>Frees an overflow run; returns its page count.</summary>
    internal int FreeOverflow(long pageNumber)
    {
        var pages = PageHeader.Of(GetPage(pageNumber).Span).OverflowPages;
        FreePages(pageNumber, pages);
        return pages;
    }

    internal void FreePage(long pageNumber) => FreePages(pageNumber, 1);

    private void FreePages(long start, int count)
    {
        ref var s = ref State;
        for (var p = start; p < start + count; p++)
        {
            var bitmap = BitmapFor(p, out var bit);
            bitmap[bit >> 6] |= 1UL << (bit & 63);
        }

        s.FreePages += count;

        // The freed version need not reach the journal: no one can read a free page. If the run is
        // allocated again in this transaction, it is journaled whole.
        _dirty.Remove(start);
        _bases.Remove(start);
    }

    private Span<ulong> BitmapFor(long page, out int bit)
    {
        var index = (int)(page / Constants.PagesPerBitmap);
        bit = (int)(page % Constants.PagesPerBitmap);
        var bitmapPage = StateHeader.BitmapPages(_state ?? ModifyPageArray(Constants.StatePage))[index];
        return MemoryMarshal.Cast<byte, ulong>(ModifyPage(bitmapPage).Slice(PageHeader.Size));
    }

    private long AllocatePages(int count)
    {
        ref var s = ref State;
        if (s.FreePages >= count && TryAllocateFree(count, out var reused))
        {
            s.FreePages -= count;
            return reused;
        }

        while (true)
        {
            var last = s.NextPage + count - 1;
            var needed = (int)(last / Constants.PagesPerBitmap) + 1;
            if (needed <= s.BitmapCount)
            {
                break;
            }

            if (s.BitmapCount >= StateHeader.MaxBitmaps)
            {
                throw new StorageLimitException($"The data file cannot grow past {(long)StateHeader.MaxBitmaps * Constants.PagesPerBitmap} pages.");
            }

            // A new bitmap page takes the next page itself; a zeroed bitmap marks every page in use.
            var bitmapPage = s.NextPage++;
            var page = Environment.Pool.Rent();
            Array.Clear(page);
            ref var h = ref PageHeader.Of(page.AsSpan());
            h.PageNumber = bitmapPage;
            h.Flags = PageFlags.FreeSpaceBitmap;
            _dirty[bitmapPage] = page;
            _bases.Remove(bitmapPage);
            StateHeader.BitmapPages(_state!)[s.BitmapCount++] = bitmapPage;
        }

        var result = s.NextPage;
        s.NextPage += count;
        return result;
    }

    /// <summary>First fit: the lowest run of <paramref name="count"/> free pages inside one bitmap.</summary>
    private bool TryAllocateFree(int count, out long start)
    {
        var s = StateHeader.Of(_state!);
        var bitmaps = StateHeader.BitmapPages(_state!);
        for (var b = 0; b < s.BitmapCount; b++)
        {
            var basePage = (long)b * Constants.PagesPerBitmap;
            var limit = (int)Math.Min(Constants.PagesPerBitmap, s.NextPage - basePage);
            if (limit <= 0)
            {
                break;
            }

            var words = MemoryMarshal.Cast<byte, ulong>(GetPage(bitmaps[b]).Span.Slice(PageHeader.Size));
            var found = count == 1 ? FindSingle(words, limit) : FindRun(words, limit, count);
            if (found >= 0)
            {
                var w = MemoryMarshal.Cast<byte, ulong>(ModifyPage(bitmaps[b]).Slice(PageHeader.Size));
                for (var i = found; i < found + count; i++)
                {
                    w[i >> 6] &= ~(1UL << (i & 63));
                }

                start = basePage + found;
                return true;
            }
        }

        start = 0;
        return false;
    }

    private static int FindSingle(ReadOnlySpan<ulong> words, int limit)
    {
        var wordLimit = (limit + 63) >> 6;
        var i = words[..wordLimit].IndexOfAnyExcept(0UL);
        if (i < 0)
        {
            return -1;
        }

        var bit = (i << 6) + BitOperations.TrailingZeroCount(words[i]);
        return bit < limit ? bit : -1;
    }

    private static int FindRun(ReadOnlySpan<ulong> words, int limit, int count)
    {
        var run = 0;
        var runStart = 0;
        for (var bit = 0; bit < limit; bit++)
        {
            var word = words[bit >> 6];
            if ((bit & 63) == 0 && word == 0)
            {
                run = 0;
                bit += 63;
                continue;
            }

            if ((word & (1UL << (bit & 63))) != 0)
            {
                if (run == 0)
                {
                    runStart = bit;
                }

                if (++run == count)
                {
                    return runStart;
                }
            }
            else
            {
                run = 0;
            }
        }

        return -1;
    }

    /// <summary>Opens the tree, creating it (empty) when it does not exist.</summary>
    public Tree CreateTree(string name)
    {
        ThrowIfDisposed();
        if (OpenTree(name) is { } existing)
        {
            return existing;
        }

        var key = Encoding.UTF8.GetBytes(name);
        if (key.Length == 0 || key.Length > Tree.MaxKeySize)
        {
            throw new ArgumentException($"A tree name must be 1 to {Tree.MaxKeySize} UTF-8 bytes; '{name}' is {key.Length}.", nameof(name));
        }

        var root = NewPage(out var rootNumber);
        TreePage.InitializeLeaf(root, rootNumber);
        var header = new TreeHeader { RootPage = rootNumber, Count = 0, Depth = 1, PageCount = 1 };
        RootTree.PutHeader(key, header);
        var tree = new Tree(this, name, header, isRoot: false);
        OpenedTrees[name] = tree;
        return tree;
    }

    /// <summary>Deletes the tree and frees its pages; false when it does not exist.</summary>
    public bool DeleteTree(string name)
    {
        ThrowIfDisposed();
        var tree = OpenTree(name);
        if (tree is null)
        {
            return false;
        }

        tree.FreeAllPages();
        RootTree.Delete(Encoding.UTF8.GetBytes(name));
        tree.MarkDeleted();
        OpenedTrees[name] = null;
        return true;
    }

    /// <summary>Commits and returns once the transaction is durable in the journal.</summary>
    public void Commit() => CommitPipelined().Wait();

    /// <summary>
    /// Hands the transaction to the journal writer and ends it: the write lock is released at
    /// once so the next <see cref="StorageEnvironment.BeginWrite()"/> can prepare its changes on
    /// top of this one while the journal write is in flight. Readers see the transaction once
    /// <see cref="CommitHandle.Durable"/> has completed. If the journal write fails, the handle
    /// faults and the environment refuses further writes until reopened.
    /// </summary>
    public CommitHandle CommitPipelined()
    {
        ThrowIfDisposed();
        foreach (var (name, tree) in OpenedTrees)
        {
            if (tree is { HeaderDirty: true })
            {
                RootTree.PutHeader(Encoding.UTF8.GetBytes(name), tree.Header);
                tree.HeaderDirty = false;
            }
        }

        if (_dirty.Count == 0)
        {
            _committed = true;
            Dispose();
            return new CommitHandle(Snapshot, Task.CompletedTask);
        }

        ref var s = ref State;
        s.RootTree = RootTree.Header;
        s.TransactionId = _id;
        var tryCompress = Environment.ShouldCompress();
        var record = JournalRecord.Build(_id, _dirty, _bases, tryCompress);
        if (tryCompress)
        {
            Environment.ReportCompression(record.Compressed);
        }

        _committed = true;
        MarkDisposed();
        var handle = Environment.Publish(_id, _dirty, record);
        Environment.EndEpoch(Epoch);
        return handle;
    }

    protected override void OnDispose()
    {
        // A pipelined commit releases the lock itself; an empty commit and a rollback end here.
        if (!_committed)
        {
            // Nobody else ever saw these arrays.
            foreach (var (_, page) in _dirty)
            {
                Environment.Pool.ReturnUnshared(page);
            }

            _dirty.Clear();
        }

        if (!_committed || _dirty.Count == 0)
        {
            Environment.EndEpoch(Epoch);
            Environment.ReleaseWriteLock();
        }
    }
}
