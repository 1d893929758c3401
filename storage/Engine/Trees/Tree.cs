using System.Buffers.Binary;
using System.Diagnostics.CodeAnalysis;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using Jackdaw.Storage.Engine.Paging;
using Jackdaw.Storage.Engine.Trees;

namespace Jackdaw.Storage.Engine;

/// <summary>
/// A B+Tree of byte-string keys (ordered by <c>SequenceCompareTo</c>, at most
/// <see cref="MaxKeySize"/> bytes) and values of any size: inline in the leaf up to 2 KiB,
/// above that in a contiguous overflow run. A tree object belongs to one transaction.
/// </summary>
public sealed partial class Tree
{
    /// <summary>Longest key, in bytes. With values above 2 KiB moved to overflow pages, any entry is under 3.1 KiB, so any page split leaves room for the incoming entry.</summary>
    public const int MaxKeySize = Constants.MaxKeySize;

    private const int MaxDepth = 64;

    private readonly ReadTransaction _tx;
    private readonly bool _isRoot;
    private TreeHeader _header;
    private long[]? _pathPages;
    private int[]? _pathIndexes;
    private TreeIterator? _cachedIterator;
    private bool _deleted;

    internal Tree(ReadTransaction tx, string name, TreeHeader header, bool isRoot)
    {
        _tx = tx;
        Name = name;
        _header = header;
        _isRoot = isRoot;
    }

    public string Name { get; }

    /// <summary>Number of entries.</summary>
    public long Count => _header.Count;

    internal ref TreeHeader Header => ref _header;

    internal bool HeaderDirty { get; set; }

    /// <summary>Bumped by every modification; an iterator from before a modification refuses to move.</summary>
    internal int Version { get; private set; }

    internal ReadTransaction Transaction => _tx;

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private void ThrowIfUnusable()
    {
        _tx.ThrowIfDisposed();
        if (_deleted)
        {
            ThrowDeleted();
        }
    }

    [DoesNotReturn]
    private void ThrowDeleted() => throw new InvalidOperationException($"The tree '{Name}' was deleted in this transaction.");

    internal void MarkDeleted() => _deleted = true;

    /// <summary>Looks the key up. The value stays valid until the transaction ends or the next modification in it.</summary>
    public bool TryGet(ReadOnlySpan<byte> key, out ReadOnlySpan<byte> value)
    {
        ThrowIfUnusable();
        return TryGet(_tx, _header.RootPage, key, out value);
    }

    /// <summary>
    /// Looks the key up in the tree whose root is <paramref name="rootPage"/>, as <paramref name="tx"/>
    /// sees it, with no tree object: a read transaction finds a tree's header in the root tree this
    /// way (<see cref="ReadTransaction.OpenTree"/>), which saves a point read one object.
    /// </summary>
    internal static bool TryGet(ReadTransaction tx, long rootPage, ReadOnlySpan<byte> key, out ReadOnlySpan<byte> value)
    {
        var page = tx.GetPage(rootPage).Span;
        while (!TreePage.IsLeaf(page))
        {
            page = tx.GetPage(TreePage.BranchChild(page, TreePage.SearchBranch(page, key))).Span;
        }

        var index = TreePage.SearchLeaf(page, key, out var found);
        if (!found)
        {
            value = default;
            return false;
        }

        value = ReadValue(tx, page, index);
        return true;
    }

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal ReadOnlySpan<byte> ReadValue(Span<byte> leaf, int index) => ReadValue(_tx, leaf, index);

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static ReadOnlySpan<byte> ReadValue(ReadTransaction tx, Span<byte> leaf, int index)
    {
        var length = TreePage.LeafValueLength(leaf, index);
        if (TreePage.LeafIsOverflow(leaf, index))
        {
            return tx.GetPage(TreePage.LeafOverflowPage(leaf, index)).Span.Slice(PageHeader.Size, length);
        }

        return leaf.Slice(TreePage.LeafValueOffset(leaf, index), length);
    }

    public void Put(ReadOnlySpan<byte> key, ReadOnlySpan<byte> value) => value.CopyTo(Reserve(key, value.Length));

    internal void PutHeader(ReadOnlySpan<byte> key, TreeHeader header) =>
        MemoryMarshal.Write(Reserve(key, TreeHeader.Size), in header);

    /// <summary>
    /// Puts a value of <paramref name="valueLength"/> bytes under the key (replacing any) and
    /// returns it to be filled in place. The span is valid until the next modification in this
    /// transaction.
    /// </summary>
    public Span<byte> Reserve(ReadOnlySpan<byte> key, int valueLength)
    {
        var w = RequireWrite();
        ValidateKey(key);
        ArgumentOutOfRangeException.ThrowIfNegative(valueLength);
        Version++;
        HeaderDirty = true;

        var leafLevel = Descend(key);
        var leafNumber = _pathPages![leafLevel];
        var leaf = w.ModifyPage(leafNumber);
        var index = TreePage.SearchLeaf(leaf, key, out var found);
        if (found)
        {
            if (TreePage.LeafIsOverflow(leaf, index))
            {
                _header.PageCount -= w.FreeOverflow(TreePage.LeafOverflowPage(leaf, index));
            }

            TreePage.Remove(leaf, index);
        }
        else
        {
            _header.Count++;
        }

        var overflow = valueLength > Constants.MaxInlineValueSize;
        long runPage = 0;
        Span<byte> run = default;
        if (overflow)
        {
            run = w.NewOverflow(valueLength, out runPage, out var pages);
            _header.PageCount += pages;
        }

        var entrySize = TreePage.LeafEntrySize(key.Length, valueLength, overflow);
        Span<byte> target;
        int valueOffset;
        if (TreePage.FreeTotal(leaf) >= entrySize + 2)
        {
            valueOffset = TreePage.InsertLeaf(leaf, index, key, valueLength, overflow);
            target = leaf;
        }
        else
        {
            target = InsertIntoFullLeaf(w, leafLevel, leaf, leafNumber, index, key, valueLength, overflow, out valueOffset);
        }

        if (overflow)
        {
            BinaryPrimitives.WriteInt64LittleEndian(target.Slice(valueOffset), runPage);
            return run.Slice(PageHeader.Size, valueLength);
        }

        return target.Slice(valueOffset, valueLength);
    }

    /// <summary>Removes the key; false when it was not there.</summary>
    public bool Delete(ReadOnlySpan<byte> key)
    {
        var w = RequireWrite();
        var leafLevel = Descend(key);
        var leafNumber = _pathPages![leafLevel];
        TreePage.SearchLeaf(w.GetPage(leafNumber).Span, key, out var found);
        if (!found)
        {
            return false;
        }

        Version++;
        HeaderDirty = true;
        var leaf = w.ModifyPage(leafNumber);
        var index = TreePage.SearchLeaf(leaf, key, out _);
        if (TreePage.LeafIsOverflow(leaf, index))
        {
            _header.PageCount -= w.FreeOverflow(TreePage.LeafOverflowPage(leaf, index));
        }

        TreePage.Remove(leaf, index);
        _header.Count--;
        Rebalance(w, leafLevel);
        return true;
    }

    /// <summary>An iterator over this tree (reused: a disposed iterator is handed out again).</summary>
    public TreeIterator Iterate()
    {
        ThrowIfUnusable();
        var it = _cachedIterator;
        if (it is not null && !it.InUse)
        {
            it.Reset();
            return it;
        }

        it = new TreeIterator(this);
        _cachedIterator ??= it;
        return it;
    }

    private WriteTransaction RequireWrite()
    {
        ThrowIfUnusable();
        if (_tx is WriteTransaction w)
        {
            return w;
        }

        throw new InvalidOperationException($"The tree '{Name}' was opened in a read transaction; modify it in a write transaction.");
    }

    private static void ValidateKey(ReadOnlySpan<byte> key)
    {
        if (key.Length > MaxKeySize)
        {
            throw new StorageLimitException($"The key is {key.Length} bytes long; keys are limited to {MaxKeySize} bytes.");
        }
    }

    /// <summary>Walks from the root to the key's leaf, recording the path; returns the leaf's level.</summary>
    private int Descend(ReadOnlySpan<byte> key)
    {
        _pathPages ??= new long[MaxDepth];
        _pathIndexes ??= new int[MaxDepth];
        var number = _header.RootPage;
        var level = 0;
        while (true)
        {
            _pathPages[level] = number;
            var page = _tx.GetPage(number).Span;
            if (TreePage.IsLeaf(page))
            {
                return level;
            }

            var i = TreePage.SearchBranch(page, key);
            _pathIndexes[level] = i;
            number = TreePage.BranchChild(page, i);
            level++;
        }
    }

    /// <summary>Frees every page of the tree (used by DeleteTree).</summary>
    internal void FreeAllPages()
    {
        var w = RequireWrite();
        FreeSubtree(w, _header.RootPage);
        _header.PageCount = 0;
    }

    private void FreeSubtree(WriteTransaction w, long number)
    {
        var page = w.GetPage(number).Span;
        var count = TreePage.Count(page);
        if (TreePage.IsLeaf(page))
        {
            for (var i = 0; i < count; i++)
            {
                if (TreePage.LeafIsOverflow(page, i))
                {
                    w.FreeOverflow(TreePage.LeafOverflowPage(page, i));
                }
            }
        }
        else
        {
            for (var i = 0; i < count; i++)
            {
                FreeSubtree(w, TreePage.BranchChild(w.GetPage(number).Span, i));
            }
        }

        w.FreePage(number);
    }
}
