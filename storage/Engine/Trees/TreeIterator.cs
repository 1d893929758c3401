using Jackdaw.Storage.Engine.Paging;
using Jackdaw.Storage.Engine.Trees;

namespace Jackdaw.Storage.Engine;

/// <summary>
/// A cursor over one tree in one transaction. Key and Value are valid until the next move, the
/// next modification of the tree, or the end of the transaction. After a modification of the tree
/// the iterator must be positioned again with a Seek method. Disposing returns it to its tree for reuse.
/// </summary>
public sealed class TreeIterator : IDisposable
{
    private const int MaxDepth = 64;

    private readonly Tree _tree;
    private readonly long[] _pages = new long[MaxDepth];
    private readonly int[] _indexes = new int[MaxDepth];
    private PageHandle _leaf;
    private int _leafLevel;
    private int _version;
    private bool _valid;

    internal TreeIterator(Tree tree)
    {
        _tree = tree;
        InUse = true;
        _version = tree.Version;
    }

    internal bool InUse { get; private set; }

    internal void Reset()
    {
        InUse = true;
        _valid = false;
        _version = _tree.Version;
    }

    private ReadTransaction Tx => _tree.Transaction;

    public ReadOnlySpan<byte> Key
    {
        get
        {
            EnsureValid();
            return TreePage.LeafKey(_leaf.Span, _indexes[_leafLevel]);
        }
    }

    public ReadOnlySpan<byte> Value
    {
        get
        {
            EnsureValid();
            return _tree.ReadValue(_leaf.Span, _indexes[_leafLevel]);
        }
    }

    private void EnsureValid()
    {
        if (!_valid || _version != _tree.Version)
        {
            throw new InvalidOperationException("The iterator is not on an entry (or the tree changed since it was positioned).");
        }
    }

    private void Start()
    {
        Tx.ThrowIfDisposed();
        _version = _tree.Version;
        _valid = false;
    }

    public bool SeekFirst()
    {
        Start();
        return DescendEdge(0, _tree.Header.RootPage, first: true);
    }

    public bool SeekLast()
    {
        Start();
        return DescendEdge(0, _tree.Header.RootPage, first: false);
    }

    /// <summary>Positions on the first key &gt;= <paramref name="key"/>.</summary>
    public bool Seek(ReadOnlySpan<byte> key)
    {
        Start();
        var index = DescendTo(key, out _);
        var count = TreePage.Count(_leaf.Span);
        if (index < count)
        {
            _indexes[_leafLevel] = index;
            return _valid = true;
        }

        _indexes[_leafLevel] = Math.Max(count - 1, 0);
        return _valid = count > 0 && NextLeaf();
    }

    /// <summary>Positions on the greatest key &lt;= <paramref name="key"/>.</summary>
    public bool SeekLastLessOrEqual(ReadOnlySpan<byte> key)
    {
        Start();
        var index = DescendTo(key, out var found);
        if (!found)
        {
            index--;
        }

        if (index >= 0)
        {
            _indexes[_leafLevel] = index;
            return _valid = true;
        }

        _indexes[_leafLevel] = 0;
        return _valid = TreePage.Count(_leaf.Span) > 0 && PrevLeaf();
    }

    /// <summary>Positions on the first key that starts with <paramref name="prefix"/>.</summary>
    public bool SeekPrefix(ReadOnlySpan<byte> prefix) => Seek(prefix) && KeyStartsWith(prefix);

    public bool KeyStartsWith(ReadOnlySpan<byte> prefix) => _valid && Key.StartsWith(prefix);

    public bool MoveNext()
    {
        if (!_valid)
        {
            return false;
        }

        EnsureValid();
        var i = _indexes[_leafLevel] + 1;
        if (i < TreePage.Count(_leaf.Span))
        {
            _indexes[_leafLevel] = i;
            return true;
        }

        return _valid = NextLeaf();
    }

    public bool MovePrev()
    {
        if (!_valid)
        {
            return false;
        }

        EnsureValid();
        var i = _indexes[_leafLevel] - 1;
        if (i >= 0)
        {
            _indexes[_leafLevel] = i;
            return true;
        }

        return _valid = PrevLeaf();
    }

    private int DescendTo(ReadOnlySpan<byte> key, out bool found)
    {
        var number = _tree.Header.RootPage;
        var level = 0;
        while (true)
        {
            _pages[level] = number;
            var handle = Tx.GetPage(number);
            var page = handle.Span;
            if (TreePage.IsLeaf(page))
            {
                _leaf = handle;
                _leafLevel = level;
                return TreePage.SearchLeaf(page, key, out found);
            }

            var i = TreePage.SearchBranch(page, key);
            _indexes[level] = i;
            number = TreePage.BranchChild(page, i);
            level++;
        }
    }

    private bool DescendEdge(int level, long number, bool first)
    {
        while (true)
        {
            _pages[level] = number;
            var handle = Tx.GetPage(number);
            var page = handle.Span;
            var count = TreePage.Count(page);
            var i = first ? 0 : count - 1;
            if (TreePage.IsLeaf(page))
            {
                _leaf = handle;
                _leafLevel = level;
                _indexes[level] = Math.Max(i, 0);
                return _valid = count > 0;
            }

            _indexes[level] = i;
            number = TreePage.BranchChild(page, i);
            level++;
        }
    }

    private bool NextLeaf()
    {
        for (var level = _leafLevel - 1; level >= 0; level--)
        {
            var page = Tx.GetPage(_pages[level]).Span;
            var i = _indexes[level] + 1;
            if (i < TreePage.Count(page))
            {
                _indexes[level] = i;
                if (DescendEdge(level + 1, TreePage.BranchChild(page, i), first: true))
                {
                    return true;
                }

                // An empty leaf (never left by deletes, but harmless): keep going.
                level = _leafLevel;
            }
        }

        return false;
    }

    private bool PrevLeaf()
    {
        for (var level = _leafLevel - 1; level >= 0; level--)
        {
            var page = Tx.GetPage(_pages[level]).Span;
            var i = _indexes[level] - 1;
            if (i >= 0)
            {
                _indexes[level] = i;
                if (DescendEdge(level + 1, TreePage.BranchChild(page, i), first: false))
                {
                    return true;
                }

                level = _leafLevel;
            }
        }

        return false;
    }

    public void Dispose()
    {
        InUse = false;
        _valid = false;
    }
}
