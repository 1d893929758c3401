using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using Jackdaw.Storage.Engine;
using Jackdaw.Storage.Engine.Journal;
using Jackdaw.Storage.Engine.Paging;
using Jackdaw.Storage.Engine.Trees;

namespace Jackdaw.Storage.Tests.Engine;

/// <summary>The on-disk layouts are exactly what their layout comments say.</summary>
public sealed class LayoutTests : EngineTestBase
{
    [Fact]
    public void PageHeaderFieldsAreAtDocumentedOffsets()
    {
        Assert.Equal(32, Unsafe.SizeOf<PageHeader>());
        Assert.Equal(0, (int)Marshal.OffsetOf<PageHeader>(nameof(PageHeader.PageNumber)));
        Assert.Equal(8, (int)Marshal.OffsetOf<PageHeader>(nameof(PageHeader.Flags)));
        Assert.Equal(10, (int)Marshal.OffsetOf<PageHeader>(nameof(PageHeader.Count)));
        Assert.Equal(12, (int)Marshal.OffsetOf<PageHeader>(nameof(PageHeader.Lower)));
        Assert.Equal(14, (int)Marshal.OffsetOf<PageHeader>(nameof(PageHeader.Upper)));
        Assert.Equal(16, (int)Marshal.OffsetOf<PageHeader>(nameof(PageHeader.UsedBytes)));
        Assert.Equal(20, (int)Marshal.OffsetOf<PageHeader>(nameof(PageHeader.OverflowPages)));
        Assert.Equal(24, (int)Marshal.OffsetOf<PageHeader>(nameof(PageHeader.OverflowSize)));
    }

    [Fact]
    public void FileAndJournalHeadersAreAtDocumentedOffsets()
    {
        Assert.Equal(32, Unsafe.SizeOf<FileHeader>());
        Assert.Equal(16, (int)Marshal.OffsetOf<FileHeader>(nameof(FileHeader.FlushedTransactionId)));
        Assert.Equal(24, (int)Marshal.OffsetOf<FileHeader>(nameof(FileHeader.Checksum)));
        Assert.Equal(48, Unsafe.SizeOf<JournalRecordHeader>());
        Assert.Equal(8, (int)Marshal.OffsetOf<JournalRecordHeader>(nameof(JournalRecordHeader.TransactionId)));
        Assert.Equal(20, (int)Marshal.OffsetOf<JournalRecordHeader>(nameof(JournalRecordHeader.PayloadSize)));
        Assert.Equal(32, (int)Marshal.OffsetOf<JournalRecordHeader>(nameof(JournalRecordHeader.PayloadHash)));
        Assert.Equal(40, (int)Marshal.OffsetOf<JournalRecordHeader>(nameof(JournalRecordHeader.HeaderHash)));
        Assert.Equal(104, Unsafe.SizeOf<StateHeader>());
        Assert.Equal(64, (int)Marshal.OffsetOf<StateHeader>(nameof(StateHeader.RootTree)));
        Assert.Equal(96, (int)Marshal.OffsetOf<StateHeader>(nameof(StateHeader.BitmapCount)));
        Assert.Equal(32, Unsafe.SizeOf<TreeHeader>());
        Assert.Equal(24, (int)Marshal.OffsetOf<TreeHeader>(nameof(TreeHeader.PageCount)));
    }

    [Fact]
    public void LeafEntryEncodesKeyFlagsAndValueLength()
    {
        var page = new byte[Constants.PageSize];
        TreePage.InitializeLeaf(page, 9);
        var valueOffset = TreePage.InsertLeaf(page, 0, [1, 2, 3], 70_000, overflow: true);
        TreePage.InsertLeaf(page, 1, [5], 4, overflow: false);
        Assert.Equal(2, TreePage.Count(page));
        Assert.True(TreePage.LeafIsOverflow(page, 0));
        Assert.False(TreePage.LeafIsOverflow(page, 1));
        Assert.Equal(70_000, TreePage.LeafValueLength(page, 0));
        Assert.Equal(4, TreePage.LeafValueLength(page, 1));
        Assert.Equal(valueOffset, TreePage.LeafValueOffset(page, 0));
        Assert.Equal(new byte[] { 1, 2, 3 }, TreePage.LeafKey(page, 0).ToArray());
        Assert.Equal(TreePage.LeafEntryHeader + 3 + 8, TreePage.EntrySize(page, 0));
        Assert.Equal(TreePage.LeafEntryHeader + 1 + 4 + TreePage.LeafEntryHeader + 3 + 8 + 4, PageHeader.Of(page.AsSpan()).UsedBytes);
    }

    [Fact]
    public void BranchEntryEncodesChild()
    {
        var page = new byte[Constants.PageSize];
        TreePage.InitializeBranch(page, 9);
        TreePage.InsertBranch(page, 0, default, 77);
        TreePage.InsertBranch(page, 1, [4, 4], long.MaxValue - 1);
        Assert.Equal(77, TreePage.BranchChild(page, 0));
        Assert.Equal(long.MaxValue - 1, TreePage.BranchChild(page, 1));
        Assert.Equal(0, TreePage.SearchBranch(page, [4, 3]));
        Assert.Equal(1, TreePage.SearchBranch(page, [4, 4]));
        Assert.Equal(1, TreePage.SearchBranch(page, [9]));
    }

    [Fact]
    public void CompactKeepsEntriesAndReclaimsHoles()
    {
        var page = new byte[Constants.PageSize];
        TreePage.InitializeLeaf(page, 3);
        for (var i = 0; i < 20; i++)
        {
            TreePage.InsertLeaf(page, i, [(byte)i], 300, overflow: false);
        }

        for (var i = 19; i >= 0; i -= 2)
        {
            TreePage.Remove(page, i);
        }

        var before = TreePage.FreeContiguous(page);
        TreePage.Compact(page);
        Assert.True(TreePage.FreeContiguous(page) > before);
        Assert.Equal(TreePage.FreeTotal(page), TreePage.FreeContiguous(page));
        for (var i = 0; i < 10; i++)
        {
            Assert.Equal((byte)(i * 2), TreePage.LeafKey(page, i)[0]);
        }
    }
}
