using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;

namespace Jackdaw.Storage.Engine.Paging;

/// <summary>Page flags, stored in <see cref="PageHeader.Flags"/>.</summary>
[Flags]
internal enum PageFlags : byte
{
    None = 0,
    Leaf = 1,
    Branch = 2,
    Overflow = 4,
    State = 8,
    FreeSpaceBitmap = 16,
}

/// <summary>
/// The first 32 bytes of every page (8 KiB; an overflow run is one header and then its value).
/// <code>
/// offset size field
///  0      8   PageNumber      the page's own number (a cheap check that a page is where it belongs)
///  8      1   Flags           PageFlags
///  9      1   (reserved)
/// 10      2   Count           B+Tree pages: number of entries
/// 12      2   Lower           B+Tree pages: end of the sorted ushort offset array (starts at 32)
/// 14      2   Upper           B+Tree pages: start of the entry heap (grows down from 8192)
/// 16      2   UsedBytes       B+Tree pages: sum of live entry sizes plus 2 per offset
/// 18      2   (reserved)
/// 20      4   OverflowPages   overflow runs: number of pages in the run
/// 24      8   OverflowSize    overflow runs: value length in bytes
/// </code>
/// </summary>
[StructLayout(LayoutKind.Explicit, Size = Size)]
internal struct PageHeader
{
    public const int Size = 32;

    [FieldOffset(0)] public long PageNumber;
    [FieldOffset(8)] public PageFlags Flags;
    [FieldOffset(10)] public ushort Count;
    [FieldOffset(12)] public ushort Lower;
    [FieldOffset(14)] public ushort Upper;
    [FieldOffset(16)] public ushort UsedBytes;
    [FieldOffset(20)] public int OverflowPages;
    [FieldOffset(24)] public long OverflowSize;

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public static ref PageHeader Of(Span<byte> page) => ref MemoryMarshal.AsRef<PageHeader>(page);

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public static ref readonly PageHeader Of(ReadOnlySpan<byte> page) => ref MemoryMarshal.AsRef<PageHeader>(page);
}

internal static class Constants
{
    public const int PageSize = 8192;
    public const int PageShift = 13;

    /// <summary>Bytes available to offsets and entries in a B+Tree page.</summary>
    public const int UsablePageSpace = PageSize - PageHeader.Size;

    /// <summary>Values longer than this go to an overflow run (a quarter page: a 1.1 KiB value stays inline).</summary>
    public const int MaxInlineValueSize = 2048;

    public const int MaxKeySize = 1024;

    /// <summary>Pages 0 and 1 hold the alternating file headers; page 2 the committed state; page 3 the first free-space bitmap.</summary>
    public const long HeaderPageA = 0;
    public const long HeaderPageB = 1;
    public const long StatePage = 2;
    public const long FirstBitmapPage = 3;
    public const long FirstFreePage = 4;

    /// <summary>One bitmap page tracks this many pages (one bit each, after its page header).</summary>
    public const int PagesPerBitmap = (PageSize - PageHeader.Size) * 8;

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public static int PagesForOverflow(long valueLength) => checked((int)((PageHeader.Size + valueLength + PageSize - 1) >> PageShift));
}
