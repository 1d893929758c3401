using Jackdaw.Storage.Engine.Paging;
using Jackdaw.Storage.Engine.Trees;

namespace Jackdaw.Storage.Engine;

public sealed partial class Tree
{
    /// <summary>
    /// Splits a full leaf by bytes and puts the new entry straight into the half where it belongs,
    /// before anything is propagated upward (so no cursor into the parents can send it astray).
    /// Returns the page holding the new entry and, in <paramref name="valueOffset"/>, where its value goes.
    /// </summary>
    private Span<byte> SplitLeafAndInsert(WriteTransaction w, int leafLevel, Span<byte> leaf, long leafNumber, int index,
        ReadOnlySpan<byte> key, int valueLength, bool overflow, out int valueOffset)
    {
        var old = _splitBuffer ??= new byte[Constants.PageSize];
        leaf.CopyTo(old);
        var n = TreePage.Count(old);
        Span<int> sizes = stackalloc int[n + 1];
        for (var j = 0; j <= n; j++)
        {
            sizes[j] = j == index ? TreePage.LeafEntrySize(key.Length, valueLength, overflow) + 2
                : TreePage.EntrySize(old, j < index ? j : j - 1) + 2;
        }

        var k = ChooseSplit(sizes, index, keyLengths: default);

        TreePage.InitializeLeaf(leaf, leafNumber);
        var right = w.NewPage(out var rightNumber);
        TreePage.InitializeLeaf(right, rightNumber);
        _header.PageCount++;

        Span<byte> target = default;
        valueOffset = 0;
        for (var j = 0; j <= n; j++)
        {
            var page = j < k ? leaf : right;
            var position = j < k ? j : j - k;
            if (j == index)
            {
                valueOffset = TreePage.InsertLeaf(page, position, key, valueLength, overflow);
                target = page;
            }
            else
            {
                TreePage.InsertRaw(page, position, TreePage.RawEntry(old, j < index ? j : j - 1));
            }
        }

        var separator = _separatorA ??= new byte[MaxKeySize];
        var firstRight = TreePage.LeafKey(right, 0);
        firstRight.CopyTo(separator);
        InsertIntoParent(w, leafLevel - 1, leafNumber, separator, firstRight.Length, rightNumber);
        return target;
    }

    /// <summary>
    /// Before splitting a full leaf, shifts its first entries (those before the insert position)
    /// to the left sibling when that makes room, and updates the separator in the parent. Random
    /// inserts then fill pages to ~80% instead of the ~60% that splits alone leave with entries of
    /// a seventh of a page. The new entry always stays in this leaf.
    /// </summary>
    private bool MoveToLeftSibling(WriteTransaction w, int leafLevel, Span<byte> leaf, ref int index, int needed)
    {
        var parentNumber = _pathPages![leafLevel - 1];
        var i = _pathIndexes![leafLevel - 1];
        if (i == 0)
        {
            return false;
        }

        var parent = w.GetPage(parentNumber).Span;
        var leftNumber = TreePage.BranchChild(parent, i - 1);
        var leftFree = TreePage.FreeTotal(w.GetPage(leftNumber).Span);
        var target = BalanceTarget(TreePage.FreeTotal(leaf), leftFree, needed);
        if (target < 0)
        {
            return false;
        }

        int k = 0, moved = 0;
        while (moved < target)
        {
            // Entries [0, index - 1) may move: the leaf keeps at least one key below the new one.
            var size = k + 1 < index ? TreePage.EntrySize(leaf, k) + 2 : int.MaxValue;
            if (k + 1 >= index || moved + size > leftFree)
            {
                if (TreePage.FreeTotal(leaf) + moved >= needed)
                {
                    break;
                }

                return false;
            }

            moved += size;
            k++;
        }

        // With k == index the new key would become the leaf's first key, below the separator
        // taken from entry k: the parent would route it to the left sibling. Split instead.
        var oldSeparator = TreePage.BranchKey(parent, i).Length;
        if (k >= index || k >= TreePage.Count(leaf) || TreePage.FreeTotal(parent) < TreePage.LeafKey(leaf, k).Length - oldSeparator)
        {
            return false;
        }

        var left = w.ModifyPage(leftNumber);
        for (var j = 0; j < k; j++)
        {
            TreePage.InsertRaw(left, TreePage.Count(left), TreePage.RawEntry(leaf, j));
        }

        for (var j = 0; j < k; j++)
        {
            TreePage.Remove(leaf, 0);
        }

        TreePage.ReplaceBranchKey(w.ModifyPage(parentNumber), i, TreePage.LeafKey(leaf, 0));
        index -= k;
        return true;
    }

    /// <summary>
    /// Bytes to move into a sibling so both end about equally free, or -1 when the sibling is too
    /// full to be worth it (it must keep room for another entry like this one, or the next insert
    /// would shift entries again and every insert would dirty three pages).
    /// </summary>
    private static int BalanceTarget(int leafFree, int siblingFree, int needed)
    {
        if (siblingFree < 2 * needed)
        {
            return -1;
        }

        return Math.Max(needed - leafFree, (siblingFree - leafFree + needed) / 2);
    }

    /// <summary>The mirror of <see cref="MoveToLeftSibling"/>: shifts the last entries (after the insert position) to the right sibling.</summary>
    private bool MoveToRightSibling(WriteTransaction w, int leafLevel, Span<byte> leaf, int index, int needed)
    {
        var parentNumber = _pathPages![leafLevel - 1];
        var i = _pathIndexes![leafLevel - 1];
        var parent = w.GetPage(parentNumber).Span;
        if (i + 1 >= TreePage.Count(parent))
        {
            return false;
        }

        var rightNumber = TreePage.BranchChild(parent, i + 1);
        var rightFree = TreePage.FreeTotal(w.GetPage(rightNumber).Span);
        var target = BalanceTarget(TreePage.FreeTotal(leaf), rightFree, needed);
        if (target < 0)
        {
            return false;
        }

        var count = TreePage.Count(leaf);
        int m = count, moved = 0;
        while (moved < target)
        {
            var size = m - 1 >= index ? TreePage.EntrySize(leaf, m - 1) + 2 : int.MaxValue;
            if (m - 1 < index || moved + size > rightFree)
            {
                if (TreePage.FreeTotal(leaf) + moved >= needed)
                {
                    break;
                }

                return false;
            }

            moved += size;
            m--;
        }

        var oldSeparator = TreePage.BranchKey(parent, i + 1).Length;
        if (m == count || TreePage.FreeTotal(parent) < TreePage.LeafKey(leaf, m).Length - oldSeparator)
        {
            return false;
        }

        var right = w.ModifyPage(rightNumber);
        for (var j = count - 1; j >= m; j--)
        {
            TreePage.InsertRaw(right, 0, TreePage.RawEntry(leaf, j));
        }

        TreePage.ReplaceBranchKey(w.ModifyPage(parentNumber), i + 1, TreePage.LeafKey(leaf, m));
        for (var j = count - 1; j >= m; j--)
        {
            TreePage.Remove(leaf, j);
        }

        return true;
    }

    /// <summary>
    /// Where to cut n+1 entries (sizes include the 2-byte offset) into [0,k) and [k,n]: both halves
    /// must fit. Appending at the end keeps the left page full (sequential inserts fill pages),
    /// prepending likewise; otherwise the cut is as even in bytes as possible. For branches,
    /// <paramref name="keyLengths"/> is given: entry k's key moves up and leaves the right page.
    /// </summary>
    private static int ChooseSplit(ReadOnlySpan<int> sizes, int index, ReadOnlySpan<int> keyLengths)
    {
        var n = sizes.Length - 1;
        var total = 0;
        foreach (var s in sizes)
        {
            total += s;
        }

        var isBranch = !keyLengths.IsEmpty;
        if (index == n && total - sizes[n] <= Constants.UsablePageSpace)
        {
            return n;
        }

        if (index == 0 && !isBranch && total - sizes[0] <= Constants.UsablePageSpace)
        {
            return 1;
        }

        var best = -1;
        var bestDiff = int.MaxValue;
        var left = 0;
        for (var k = 1; k <= n; k++)
        {
            left += sizes[k - 1];
            var right = total - left - (isBranch ? keyLengths[k] : 0);
            if (left <= Constants.UsablePageSpace && right <= Constants.UsablePageSpace)
            {
                var diff = Math.Abs(left - right);
                if (diff < bestDiff)
                {
                    bestDiff = diff;
                    best = k;
                }
            }
        }

        if (best < 0)
        {
            throw new InvalidOperationException($"No split of {n + 1} entries ({total} bytes) fits two pages; entry limits were violated.");
        }

        return best;
    }

    /// <summary>Adds (separator, right) after the child at <c>_pathIndexes[level]</c> in the branch at <paramref name="level"/>, splitting upward as needed.</summary>
    private void InsertIntoParent(WriteTransaction w, int level, long leftNumber, byte[] separatorBuffer, int separatorLength, long rightNumber)
    {
        var separator = separatorBuffer.AsSpan(0, separatorLength);
        if (level < 0)
        {
            var root = w.NewPage(out var rootNumber);
            TreePage.InitializeBranch(root, rootNumber);
            TreePage.InsertBranch(root, 0, default, leftNumber);
            TreePage.InsertBranch(root, 1, separator, rightNumber);
            _header.RootPage = rootNumber;
            _header.Depth++;
            _header.PageCount++;
            return;
        }

        var parentNumber = _pathPages![level];
        var parent = w.ModifyPage(parentNumber);
        var index = _pathIndexes![level] + 1;
        var size = TreePage.BranchEntrySize(separatorLength);
        if (TreePage.FreeTotal(parent) >= size + 2)
        {
            TreePage.InsertBranch(parent, index, separator, rightNumber);
            return;
        }

        var old = _splitBuffer!;
        parent.CopyTo(old);
        var n = TreePage.Count(old);
        Span<int> sizes = stackalloc int[n + 1];
        Span<int> keyLengths = stackalloc int[n + 1];
        for (var j = 0; j <= n; j++)
        {
            if (j == index)
            {
                sizes[j] = size + 2;
                keyLengths[j] = separatorLength;
            }
            else
            {
                var src = j < index ? j : j - 1;
                sizes[j] = TreePage.EntrySize(old, src) + 2;
                keyLengths[j] = TreePage.BranchKey(old, src).Length;
            }
        }

        var k = ChooseSplit(sizes, index, keyLengths);
        TreePage.InitializeBranch(parent, parentNumber);
        var right = w.NewPage(out var newRight);
        TreePage.InitializeBranch(right, newRight);
        _header.PageCount++;

        var promoted = ReferenceEquals(separatorBuffer, _separatorA) ? (_separatorB ??= new byte[MaxKeySize]) : _separatorA!;
        var promotedLength = 0;
        for (var j = 0; j <= n; j++)
        {
            ReadOnlySpan<byte> key;
            long child;
            if (j == index)
            {
                key = separator;
                child = rightNumber;
            }
            else
            {
                var src = j < index ? j : j - 1;
                key = TreePage.BranchKey(old, src);
                child = TreePage.BranchChild(old, src);
            }

            if (j < k)
            {
                TreePage.InsertBranch(parent, j, key, child);
            }
            else if (j == k)
            {
                key.CopyTo(promoted);
                promotedLength = key.Length;
                TreePage.InsertBranch(right, 0, default, child);
            }
            else
            {
                TreePage.InsertBranch(right, j - k, key, child);
            }
        }

        InsertIntoParent(w, level - 1, parentNumber, promoted, promotedLength, newRight);
    }

    /// <summary>
    /// After a delete at <paramref name="level"/>: drops an empty page, merges a page under a
    /// quarter full into a sibling when both fit one page, and collapses a root with one child.
    /// </summary>
    private void Rebalance(WriteTransaction w, int level)
    {
        var number = _pathPages![level];
        if (level == 0)
        {
            var root = w.GetPage(number).Span;
            while (!TreePage.IsLeaf(root) && TreePage.Count(root) == 1)
            {
                var child = TreePage.BranchChild(root, 0);
                w.FreePage(_header.RootPage);
                _header.RootPage = child;
                _header.Depth--;
                _header.PageCount--;
                root = w.GetPage(child).Span;
            }

            if (!TreePage.IsLeaf(root) && TreePage.Count(root) == 0)
            {
                TreePage.InitializeLeaf(w.ModifyPage(_header.RootPage), _header.RootPage);
                _header.Depth = 1;
            }

            return;
        }

        var page = w.GetPage(number).Span;
        var count = TreePage.Count(page);
        if (count > 0 && PageHeader.Of(page).UsedBytes >= Constants.UsablePageSpace / 4)
        {
            return;
        }

        var parentNumber = _pathPages[level - 1];
        var parent = w.ModifyPage(parentNumber);
        var i = _pathIndexes![level - 1];
        if (count == 0)
        {
            w.FreePage(number);
            _header.PageCount--;
            TreePage.Remove(parent, i);
            if (i == 0 && TreePage.Count(parent) > 0)
            {
                // The new first child covers from the parent's lower bound: its key becomes implicit.
                TreePage.ReplaceBranchKey(parent, 0, default);
            }

            Rebalance(w, level - 1);
            return;
        }

        if (TreePage.Count(parent) < 2)
        {
            return;
        }

        var (leftIndex, rightIndex) = i > 0 ? (i - 1, i) : (i, i + 1);
        var leftNumber = TreePage.BranchChild(parent, leftIndex);
        var rightNumber = TreePage.BranchChild(parent, rightIndex);
        var isLeaf = TreePage.IsLeaf(page);
        var separator = TreePage.BranchKey(parent, rightIndex);
        var rightPage = w.GetPage(rightNumber).Span;
        var merged = PageHeader.Of(w.GetPage(leftNumber).Span).UsedBytes + PageHeader.Of(rightPage).UsedBytes + (isLeaf ? 0 : separator.Length);
        if (merged > Constants.UsablePageSpace)
        {
            return;
        }

        var left = w.ModifyPage(leftNumber);
        rightPage = w.GetPage(rightNumber).Span;
        var rightCount = TreePage.Count(rightPage);
        for (var j = 0; j < rightCount; j++)
        {
            if (isLeaf)
            {
                TreePage.InsertRaw(left, TreePage.Count(left), TreePage.RawEntry(rightPage, j));
            }
            else
            {
                TreePage.InsertBranch(left, TreePage.Count(left), j == 0 ? separator : TreePage.BranchKey(rightPage, j), TreePage.BranchChild(rightPage, j));
            }
        }

        w.FreePage(rightNumber);
        _header.PageCount--;
        TreePage.Remove(parent, rightIndex);
        Rebalance(w, level - 1);
    }
}
