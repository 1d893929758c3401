using System.Buffers.Binary;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using Jackdaw.Storage.Engine.Paging;

namespace Jackdaw.Storage.Engine.Trees;

/// <summary>
/// Slotted B+Tree pages. After the 32-byte <see cref="PageHeader"/> comes a sorted array of
/// ushort entry offsets (growing up to Lower); entries live in a heap growing down from the
/// page end (down to Upper). Deleting an entry leaves a hole that <see cref="Compact"/> reclaims.
/// <code>
/// leaf entry:   [0] ushort KeyLength  [2] byte Flags (1 = overflow)  [3] int ValueLength  [7] key
///               then the value inline, or a long: the first page of the value's overflow run
/// branch entry: [0] ushort KeyLength  [2] long ChildPage  [10] key
///               entry 0 of a branch has an empty key that stands for "less than everything"
/// </code>
/// </summary>
internal static class TreePage
{
    public const int LeafEntryHeader = 7;
    public const int BranchEntryHeader = 10;
    public const byte OverflowFlag = 1;

    public static void InitializeLeaf(Span<byte> page, long number) => Initialize(page, number, PageFlags.Leaf);

    public static void InitializeBranch(Span<byte> page, long number) => Initialize(page, number, PageFlags.Branch);

    private static void Initialize(Span<byte> page, long number, PageFlags flags)
    {
        ref var h = ref PageHeader.Of(page);
        h = default;
        h.PageNumber = number;
        h.Flags = flags;
        h.Lower = PageHeader.Size;
        h.Upper = Constants.PageSize;
    }

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public static bool IsLeaf(ReadOnlySpan<byte> page) => (PageHeader.Of(page).Flags & PageFlags.Leaf) != 0;

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public static int Count(ReadOnlySpan<byte> page) => PageHeader.Of(page).Count;

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public static int OffsetOf(ReadOnlySpan<byte> page, int index) =>
        Unsafe.ReadUnaligned<ushort>(ref Unsafe.Add(ref MemoryMarshal.GetReference(page), PageHeader.Size + (index * 2)));

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public static ReadOnlySpan<byte> LeafKey(ReadOnlySpan<byte> page, int index)
    {
        var o = OffsetOf(page, index);
        int len = BinaryPrimitives.ReadUInt16LittleEndian(page.Slice(o));
        return page.Slice(o + LeafEntryHeader, len);
    }

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public static ReadOnlySpan<byte> BranchKey(ReadOnlySpan<byte> page, int index)
    {
        var o = OffsetOf(page, index);
        int len = BinaryPrimitives.ReadUInt16LittleEndian(page.Slice(o));
        return page.Slice(o + BranchEntryHeader, len);
    }

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public static ReadOnlySpan<byte> Key(ReadOnlySpan<byte> page, int index) =>
        IsLeaf(page) ? LeafKey(page, index) : BranchKey(page, index);

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public static long BranchChild(ReadOnlySpan<byte> page, int index) =>
        BinaryPrimitives.ReadInt64LittleEndian(page.Slice(OffsetOf(page, index) + 2));

    public static void SetBranchChild(Span<byte> page, int index, long child) =>
        BinaryPrimitives.WriteInt64LittleEndian(page.Slice(OffsetOf(page, index) + 2), child);

    public static bool LeafIsOverflow(ReadOnlySpan<byte> page, int index) => (page[OffsetOf(page, index) + 2] & OverflowFlag) != 0;

    public static int LeafValueLength(ReadOnlySpan<byte> page, int index) =>
        BinaryPrimitives.ReadInt32LittleEndian(page.Slice(OffsetOf(page, index) + 3));

    /// <summary>Offset within the page of the value (inline) or of the overflow page number.</summary>
    public static int LeafValueOffset(ReadOnlySpan<byte> page, int index)
    {
        var o = OffsetOf(page, index);
        return o + LeafEntryHeader + BinaryPrimitives.ReadUInt16LittleEndian(page.Slice(o));
    }

    public static long LeafOverflowPage(ReadOnlySpan<byte> page, int index) =>
        BinaryPrimitives.ReadInt64LittleEndian(page.Slice(LeafValueOffset(page, index)));

    public static int LeafEntrySize(int keyLength, int valueLength, bool overflow) =>
        LeafEntryHeader + keyLength + (overflow ? 8 : valueLength);

    public static int BranchEntrySize(int keyLength) => BranchEntryHeader + keyLength;

    /// <summary>Size of entry <paramref name="index"/> in the heap (without its 2-byte offset).</summary>
    public static int EntrySize(ReadOnlySpan<byte> page, int index)
    {
        var o = OffsetOf(page, index);
        int keyLength = BinaryPrimitives.ReadUInt16LittleEndian(page.Slice(o));
        if (!IsLeaf(page))
        {
            return BranchEntryHeader + keyLength;
        }

        var overflow = (page[o + 2] & OverflowFlag) != 0;
        return LeafEntrySize(keyLength, BinaryPrimitives.ReadInt32LittleEndian(page.Slice(o + 3)), overflow);
    }

    public static ReadOnlySpan<byte> RawEntry(ReadOnlySpan<byte> page, int index) => page.Slice(OffsetOf(page, index), EntrySize(page, index));

    /// <summary>
    /// Leaf: index of the first key >= <paramref name="key"/>, and whether it is equal.
    /// </summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public static int SearchLeaf(ReadOnlySpan<byte> page, ReadOnlySpan<byte> key, out bool found)
    {
        int lo = 0, hi = Count(page) - 1;
        while (lo <= hi)
        {
            var mid = (int)((uint)(lo + hi) >> 1);
            var c = LeafKey(page, mid).SequenceCompareTo(key);
            if (c == 0)
            {
                found = true;
                return mid;
            }

            if (c < 0)
            {
                lo = mid + 1;
            }
            else
            {
                hi = mid - 1;
            }
        }

        found = false;
        return lo;
    }

    /// <summary>Branch: index of the child whose range holds <paramref name="key"/> (greatest i with key_i &lt;= key; entry 0 is minus infinity).</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public static int SearchBranch(ReadOnlySpan<byte> page, ReadOnlySpan<byte> key)
    {
        int lo = 1, hi = Count(page) - 1;
        while (lo <= hi)
        {
            var mid = (int)((uint)(lo + hi) >> 1);
            var c = BranchKey(page, mid).SequenceCompareTo(key);
            if (c == 0)
            {
                return mid;
            }

            if (c < 0)
            {
                lo = mid + 1;
            }
            else
            {
                hi = mid - 1;
            }
        }

        return lo - 1;
    }

    public static int FreeContiguous(ReadOnlySpan<byte> page)
    {
        ref readonly var h = ref PageHeader.Of(page);
        return h.Upper - h.Lower;
    }

    public static int FreeTotal(ReadOnlySpan<byte> page) => Constants.UsablePageSpace - PageHeader.Of(page).UsedBytes;

    /// <summary>Makes room for an entry of <paramref name="size"/> bytes at <paramref name="index"/>; returns its offset. Caller checked it fits.</summary>
    public static int Allocate(Span<byte> page, int index, int size)
    {
        if (FreeContiguous(page) < size + 2)
        {
            Compact(page);
        }

        ref var h = ref PageHeader.Of(page);
        var count = h.Count;
        var offsets = page.Slice(PageHeader.Size, (count + 1) * 2);
        offsets.Slice(index * 2, (count - index) * 2).CopyTo(offsets.Slice((index + 1) * 2));
        var offset = h.Upper - size;
        BinaryPrimitives.WriteUInt16LittleEndian(offsets.Slice(index * 2), (ushort)offset);
        h.Upper = (ushort)offset;
        h.Lower += 2;
        h.Count++;
        h.UsedBytes += (ushort)(size + 2);
        return offset;
    }

    /// <summary>Inserts a leaf entry; returns the offset of its value area (inline value or overflow page number).</summary>
    public static int InsertLeaf(Span<byte> page, int index, ReadOnlySpan<byte> key, int valueLength, bool overflow)
    {
        var size = LeafEntrySize(key.Length, valueLength, overflow);
        var o = Allocate(page, index, size);
        BinaryPrimitives.WriteUInt16LittleEndian(page.Slice(o), (ushort)key.Length);
        page[o + 2] = overflow ? OverflowFlag : (byte)0;
        BinaryPrimitives.WriteInt32LittleEndian(page.Slice(o + 3), valueLength);
        key.CopyTo(page.Slice(o + LeafEntryHeader));
        return o + LeafEntryHeader + key.Length;
    }

    public static void InsertBranch(Span<byte> page, int index, ReadOnlySpan<byte> key, long child)
    {
        var o = Allocate(page, index, BranchEntrySize(key.Length));
        BinaryPrimitives.WriteUInt16LittleEndian(page.Slice(o), (ushort)key.Length);
        BinaryPrimitives.WriteInt64LittleEndian(page.Slice(o + 2), child);
        key.CopyTo(page.Slice(o + BranchEntryHeader));
    }

    /// <summary>Copies a raw entry (as returned by <see cref="RawEntry"/>) to <paramref name="index"/>.</summary>
    public static void InsertRaw(Span<byte> page, int index, ReadOnlySpan<byte> entry)
    {
        var o = Allocate(page, index, entry.Length);
        entry.CopyTo(page.Slice(o));
    }

    public static void Remove(Span<byte> page, int index)
    {
        var size = EntrySize(page, index);
        ref var h = ref PageHeader.Of(page);
        var count = h.Count;
        var offsets = page.Slice(PageHeader.Size, count * 2);
        offsets.Slice((index + 1) * 2).CopyTo(offsets.Slice(index * 2));
        h.Count--;
        h.Lower -= 2;
        h.UsedBytes -= (ushort)(size + 2);
        if (h.Count == 0)
        {
            h.Upper = Constants.PageSize;
        }
    }

    /// <summary>Rewrites the heap without holes, keeping entry order.</summary>
    public static void Compact(Span<byte> page)
    {
        Span<byte> copy = stackalloc byte[Constants.PageSize];
        page.CopyTo(copy);
        ref var h = ref PageHeader.Of(page);
        var count = h.Count;
        var upper = Constants.PageSize;
        for (var i = 0; i < count; i++)
        {
            var entry = RawEntry(copy, i);
            upper -= entry.Length;
            entry.CopyTo(page.Slice(upper));
            BinaryPrimitives.WriteUInt16LittleEndian(page.Slice(PageHeader.Size + (i * 2)), (ushort)upper);
        }

        h.Upper = (ushort)upper;
        page.Slice(h.Lower, upper - h.Lower).Clear();
    }

    /// <summary>Replaces the key of branch entry <paramref name="index"/> (used when its page's first key must change). Caller checked it fits.</summary>
    public static void ReplaceBranchKey(Span<byte> page, int index, ReadOnlySpan<byte> key)
    {
        var child = BranchChild(page, index);
        Remove(page, index);
        InsertBranch(page, index, key, child);
    }
}
