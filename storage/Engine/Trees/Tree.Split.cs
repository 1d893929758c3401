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
        var old = _tx.Environment.TreeScratch.SplitPage;
        leaf.CopyTo(old);
        var n = TreePage.Count(old);
        Span<int> sizes = stackalloc int[n + 1];
        for (var j = 0; j <= n; j++)
        {
            sizes[j] = j == index ? TreePage.LeafEntrySize(key.Length, valueLength, overflow) + 2
                : TreePage.EntrySize(old, j < index ? j : j - 1) + 2;
        }

        var k = ChooseSplit(sizes, index, keyLengths: default);

        // Allocate first: if that fails (file limit), the leaf is still as it was.
        var right = w.NewPage(out var rightNumber);
        TreePage.InitializeLeaf(leaf, leafNumber);
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

        var separator = _tx.Environment.TreeScratch.SeparatorA;
        var firstRight = TreePage.LeafKey(right, 0);
        firstRight.CopyTo(separator);
        InsertIntoParent(w, leafLevel - 1, leafNumber, separator, firstRight.Length, rightNumber);
        return target;
    }

    /// <summary>
    /// How many siblings on each side of a full leaf may take entries before it splits. Two keeps
    /// random inserts of 1 KiB entries (seven to a page) at ~92% of the entries a page can hold;
    /// one neighbour alone gives ~87%, which is not enough for 1.3x the raw data on disk.
    /// </summary>
    internal const int MaxReach = 2;

    /// <summary>
    /// Inserts into a leaf without room, filling pages as B*-trees do: first the entries of the
    /// leaf and of its nearest siblings (up to <see cref="MaxReach"/> away under the same parent)
    /// are spread evenly over those pages when the new entry then fits; otherwise the leaf and a
    /// full neighbour become three pages about two thirds full. Inserts at either end of the leaf
    /// split it alone with <see cref="ChooseSplit"/>, so ascending and descending loads keep pages
    /// full. Each path puts the new entry into its final page before the parent is changed.
    /// </summary>
    private Span<byte> InsertIntoFullLeaf(WriteTransaction w, int leafLevel, Span<byte> leaf, long leafNumber, int index,
        ReadOnlySpan<byte> key, int valueLength, bool overflow, out int valueOffset)
    {
        if (leafLevel > 0)
        {
            // A refused relayout changes nothing, so the parent's span stays valid across the attempts.
            var parent = w.GetPage(_pathPages![leafLevel - 1]).Span;
            var i = _pathIndexes![leafLevel - 1];
            var children = TreePage.Count(parent);
            var needed = TreePage.LeafEntrySize(key.Length, valueLength, overflow) + 2;
            int leftFree = TreePage.FreeTotal(leaf), rightFree = leftFree;
            for (var d = 1; d <= MaxReach; d++)
            {
                if (i - d >= 0)
                {
                    leftFree += TreePage.FreeTotal(w.GetPage(TreePage.BranchChild(parent, i - d)).Span);
                    if (leftFree >= needed && TryRelayoutLeaves(w, leafLevel, i - d, i, grow: false, index, key, valueLength, overflow, out var target, out valueOffset))
                    {
                        return target;
                    }
                }

                if (i + d < children)
                {
                    rightFree += TreePage.FreeTotal(w.GetPage(TreePage.BranchChild(parent, i + d)).Span);
                    if (rightFree >= needed && TryRelayoutLeaves(w, leafLevel, i, i + d, grow: false, index, key, valueLength, overflow, out var target, out valueOffset))
                    {
                        return target;
                    }
                }
            }

            var count = TreePage.Count(leaf);
            if (index > 0 && index < count && children > 1)
            {
                var (first, last) = i > 0 ? (i - 1, i) : (i, i + 1);
                if (TryRelayoutLeaves(w, leafLevel, first, last, grow: true, index, key, valueLength, overflow, out var target, out valueOffset))
                {
                    return target;
                }
            }
        }

        return SplitLeafAndInsert(w, leafLevel, leaf, leafNumber, index, key, valueLength, overflow, out valueOffset);
    }

    /// <summary>
    /// Lays the entries of the leaves <paramref name="first"/>..<paramref name="last"/> (children
    /// of the parent on the path, the leaf on the path among them) plus the new entry out evenly by
    /// bytes over those pages, and over one new page after them when <paramref name="grow"/>.
    /// Nothing is modified and false is returned when no such layout fits, or when the parent has
    /// no room for the longer separators the layout needs.
    /// </summary>
    private bool TryRelayoutLeaves(WriteTransaction w, int leafLevel, int first, int last, bool grow, int index,
        ReadOnlySpan<byte> key, int valueLength, bool overflow, out Span<byte> target, out int valueOffset)
    {
        target = default;
        valueOffset = 0;
        var parentNumber = _pathPages![leafLevel - 1];
        var leafSlot = _pathIndexes![leafLevel - 1];
        var parent = w.GetPage(parentNumber).Span;
        var oldPages = last - first + 1;
        var newPages = oldPages + (grow ? 1 : 0);

        // Entry sizes in key order across the window, the new entry at newAt.
        var sizes = _tx.Environment.TreeScratch.EntrySizes;
        int n = 0, newAt = -1;
        for (var p = first; p <= last; p++)
        {
            var page = w.GetPage(TreePage.BranchChild(parent, p)).Span;
            var count = TreePage.Count(page);
            for (var e = 0; e <= count; e++)
            {
                if (p == leafSlot && e == index)
                {
                    newAt = n;
                    sizes[n++] = TreePage.LeafEntrySize(key.Length, valueLength, overflow) + 2;
                }

                if (e < count)
                {
                    sizes[n++] = TreePage.EntrySize(page, e) + 2;
                }
            }
        }

        Span<int> cuts = stackalloc int[newPages + 1];
        if (!ChooseCuts(sizes.AsSpan(0, n), cuts))
        {
            return false;
        }

        // The window's old pages, copied so entries can be laid out again in place.
        var copies = _tx.Environment.TreeScratch.RelayoutPages;
        for (var p = first; p <= last; p++)
        {
            w.GetPage(TreePage.BranchChild(parent, p)).Span.CopyTo(copies.AsSpan((p - first) * Constants.PageSize, Constants.PageSize));
        }

        // The first page keeps its separator; the others take their new first key. The parent
        // must have room for any growth of those keys (the new page's separator may split it).
        var growth = 0;
        for (var k = 1; k < oldPages; k++)
        {
            // Replaced one by one: a key that shrinks later does not make room for one that grows first.
            growth += Math.Max(0, KeyAt(copies, cuts[k], newAt, key).Length - TreePage.BranchKey(parent, first + k).Length);
        }

        if (growth > TreePage.FreeTotal(parent))
        {
            return false;
        }

        // The new page (2-to-3) is allocated before any page is rewritten: if that fails, nothing changed.
        long newNumber = 0;
        var added = newPages > oldPages ? w.NewPage(out newNumber) : default;
        int sourcePage = 0, sourceIndex = 0;
        for (var k = 0; k < newPages; k++)
        {
            Span<byte> page;
            if (k < oldPages)
            {
                var number = TreePage.BranchChild(w.GetPage(parentNumber).Span, first + k);
                page = w.ModifyPage(number);
                TreePage.InitializeLeaf(page, number);
            }
            else
            {
                page = added;
                TreePage.InitializeLeaf(page, newNumber);
                _header.PageCount++;
            }

            for (var g = cuts[k]; g < cuts[k + 1]; g++)
            {
                if (g == newAt)
                {
                    valueOffset = TreePage.InsertLeaf(page, g - cuts[k], key, valueLength, overflow);
                    target = page;
                    continue;
                }

                var source = copies.AsSpan(sourcePage * Constants.PageSize, Constants.PageSize);
                while (sourceIndex >= TreePage.Count(source))
                {
                    sourcePage++;
                    sourceIndex = 0;
                    source = copies.AsSpan(sourcePage * Constants.PageSize, Constants.PageSize);
                }

                TreePage.InsertRaw(page, g - cuts[k], TreePage.RawEntry(source, sourceIndex++));
            }
        }

        for (var k = 1; k < oldPages; k++)
        {
            var separator = KeyAt(copies, cuts[k], newAt, key);
            if (!separator.SequenceEqual(TreePage.BranchKey(w.GetPage(parentNumber).Span, first + k)))
            {
                TreePage.ReplaceBranchKey(w.ModifyPage(parentNumber), first + k, separator);
            }
        }

        if (grow)
        {
            var separator = _tx.Environment.TreeScratch.SeparatorA;
            var firstKey = KeyAt(copies, cuts[oldPages], newAt, key);
            firstKey.CopyTo(separator);
            _pathIndexes[leafLevel - 1] = last;
            InsertIntoParent(w, leafLevel - 1, TreePage.BranchChild(w.GetPage(parentNumber).Span, last), separator, firstKey.Length, newNumber);
        }

        return true;
    }

    /// <summary>The key of entry <paramref name="g"/> of a window: the new key at <paramref name="newAt"/>, else an entry of the copied pages.</summary>
    private static ReadOnlySpan<byte> KeyAt(byte[] copies, int g, int newAt, ReadOnlySpan<byte> key)
    {
        if (g == newAt)
        {
            return key;
        }

        if (g > newAt)
        {
            g--;
        }

        for (var offset = 0; ; offset += Constants.PageSize)
        {
            var page = copies.AsSpan(offset, Constants.PageSize);
            var count = TreePage.Count(page);
            if (g < count)
            {
                return TreePage.LeafKey(page, g);
            }

            g -= count;
        }
    }

    /// <summary>
    /// Cuts entries (sizes include the 2-byte offset) into <paramref name="cuts"/>.Length - 1
    /// non-empty runs as even in bytes as they come: each cut lands as near as it can to an equal
    /// share of the bytes still to place. cuts[k] is the first entry of run k. False when a run
    /// would not fit a page (the caller then does something else; this is an optimization).
    /// </summary>
    private static bool ChooseCuts(ReadOnlySpan<int> sizes, Span<int> cuts)
    {
        var pages = cuts.Length - 1;
        var n = sizes.Length;
        if (n < pages)
        {
            return false;
        }

        var remaining = 0;
        foreach (var s in sizes)
        {
            remaining += s;
        }

        cuts[0] = 0;
        cuts[pages] = n;
        var j = 0;
        for (var k = 1; k < pages; k++)
        {
            var share = remaining / (pages - k + 1);
            var run = sizes[j++];
            var limit = n - (pages - k);
            while (j < limit && run + sizes[j] <= share)
            {
                run += sizes[j++];
            }

            // One more entry when that ends nearer the share (and still fits).
            if (j < limit && run + sizes[j] - share < share - run && run + sizes[j] <= Constants.UsablePageSpace)
            {
                run += sizes[j++];
            }

            if (run > Constants.UsablePageSpace)
            {
                return false;
            }

            cuts[k] = j;
            remaining -= run;
        }

        return remaining <= Constants.UsablePageSpace;
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

        var old = _tx.Environment.TreeScratch.SplitPage;
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

        var scratch = _tx.Environment.TreeScratch;
        var promoted = ReferenceEquals(separatorBuffer, scratch.SeparatorA) ? scratch.SeparatorB : scratch.SeparatorA;
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
