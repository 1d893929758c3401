using Jackdaw.Storage.Engine.Paging;
using Jackdaw.Storage.Engine.Trees;

namespace Jackdaw.Storage.Engine;

public sealed partial class Tree
{
    /// <summary>
    /// Walks the whole tree and checks its structure (expensive; tests and diagnostics): keys sorted
    /// within pages and within their parent's bounds, all leaves at one depth, no empty non-root
    /// page, page byte accounting, entry and page counts. Throws <see cref="StorageException"/> naming the page.
    /// </summary>
    internal TreeValidation Validate()
    {
        ThrowIfUnusable();
        var result = new TreeValidation();
        var leafDepth = -1;
        Walk(_header.RootPage, 1, [], null, isRoot: true, ref leafDepth, result);
        if (result.Entries != _header.Count)
        {
            Fail(_header.RootPage, $"the header counts {_header.Count} entries but the leaves hold {result.Entries}");
        }

        if (result.Pages != _header.PageCount)
        {
            Fail(_header.RootPage, $"the header counts {_header.PageCount} pages but the tree holds {result.Pages}");
        }

        if (leafDepth != _header.Depth)
        {
            Fail(_header.RootPage, $"the header says depth {_header.Depth} but leaves are at depth {leafDepth}");
        }

        return result;
    }

    private void Walk(long number, int depth, byte[] lower, byte[]? upper, bool isRoot, ref int leafDepth, TreeValidation result)
    {
        var page = _tx.GetPage(number).Span;
        ref readonly var h = ref PageHeader.Of(page);
        if (h.PageNumber != number)
        {
            Fail(number, $"it says it is page {h.PageNumber}");
        }

        var count = h.Count;
        if (count == 0 && !isRoot)
        {
            Fail(number, "a non-root page is empty");
        }

        var used = 0;
        for (var i = 0; i < count; i++)
        {
            used += TreePage.EntrySize(page, i) + 2;
            var offset = TreePage.OffsetOf(page, i);
            if (offset < h.Upper || offset + TreePage.EntrySize(page, i) > Constants.PageSize)
            {
                Fail(number, $"entry {i} at offset {offset} is outside the heap");
            }
        }

        if (used != h.UsedBytes || h.Lower != PageHeader.Size + (2 * count))
        {
            Fail(number, $"byte accounting is off (used {used}, header {h.UsedBytes})");
        }

        result.Pages++;
        result.UsedBytes += used;
        if (TreePage.IsLeaf(page))
        {
            if (leafDepth < 0)
            {
                leafDepth = depth;
            }
            else if (leafDepth != depth)
            {
                Fail(number, $"leaf at depth {depth}, others at {leafDepth}");
            }

            result.Leaves++;
            result.EntriesPerLeaf.Add(count);
            for (var i = 0; i < count; i++)
            {
                var key = TreePage.LeafKey(page, i);
                CheckBounds(number, key, lower, upper, i > 0 ? TreePage.LeafKey(page, i - 1) : default, i > 0);
                if (TreePage.LeafIsOverflow(page, i))
                {
                    var run = PageHeader.Of(_tx.GetPage(TreePage.LeafOverflowPage(page, i)).Span);
                    if ((run.Flags & PageFlags.Overflow) == 0 || run.OverflowSize != TreePage.LeafValueLength(page, i))
                    {
                        Fail(number, $"entry {i}'s overflow run does not match its value");
                    }

                    result.Pages += run.OverflowPages;
                }
                else if (TreePage.LeafValueLength(page, i) > Constants.MaxInlineValueSize)
                {
                    Fail(number, $"entry {i} holds a {TreePage.LeafValueLength(page, i)}-byte value inline");
                }
            }

            result.Entries += count;
            return;
        }

        result.Branches++;
        for (var i = 1; i < count; i++)
        {
            CheckBounds(number, TreePage.BranchKey(page, i), lower, upper, i > 1 ? TreePage.BranchKey(page, i - 1) : default, i > 1);
        }

        for (var i = 0; i < count; i++)
        {
            page = _tx.GetPage(number).Span;
            var childLower = i == 0 ? lower : TreePage.BranchKey(page, i).ToArray();
            var childUpper = i + 1 < count ? TreePage.BranchKey(page, i + 1).ToArray() : upper;
            Walk(TreePage.BranchChild(page, i), depth + 1, childLower, childUpper, isRoot: false, ref leafDepth, result);
        }
    }

    private static void CheckBounds(long number, ReadOnlySpan<byte> key, byte[] lower, byte[]? upper, ReadOnlySpan<byte> previous, bool hasPrevious)
    {
        if (key.SequenceCompareTo(lower) < 0 || (upper is not null && key.SequenceCompareTo(upper) >= 0))
        {
            Fail(number, "a key is outside the bounds its parent gives the page");
        }

        if (hasPrevious && previous.SequenceCompareTo(key) >= 0)
        {
            Fail(number, "keys are not strictly increasing");
        }
    }

    private static void Fail(long number, string what) => throw new StorageException($"Tree invariant violated at page {number}: {what}.");
}

/// <summary>What <see cref="Tree.Validate"/> counted.</summary>
internal sealed class TreeValidation
{
    public long Entries { get; set; }

    public long Pages { get; set; }

    public long Leaves { get; set; }

    public long Branches { get; set; }

    public long UsedBytes { get; set; }

    /// <summary>Entry count of each leaf, in key order.</summary>
    public List<int> EntriesPerLeaf { get; } = [];
}
