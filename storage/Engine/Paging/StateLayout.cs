using System.Runtime.InteropServices;

namespace Jackdaw.Storage.Engine.Paging;

/// <summary>
/// A tree's header: the value stored under the tree's name in the root tree, and (for the root
/// tree itself) at offset 56 of the state page.
/// <code>
/// offset size field
///  0      8   RootPage
///  8      8   Count      entries
/// 16      4   Depth      1 = the root is a leaf
/// 20      4   (reserved)
/// 24      8   PageCount  branch + leaf + overflow pages owned by the tree
/// </code>
/// </summary>
[StructLayout(LayoutKind.Explicit, Size = Size)]
internal struct TreeHeader
{
    public const int Size = 32;

    [FieldOffset(0)] public long RootPage;
    [FieldOffset(8)] public long Count;
    [FieldOffset(16)] public int Depth;
    [FieldOffset(24)] public long PageCount;
}

/// <summary>
/// Page 2: the committed state, rewritten (as a new page version) by every write transaction.
/// <code>
/// offset size field
///  0     32   PageHeader      Flags = State
/// 32      8   Magic           "DJSTATE1"
/// 40      8   TransactionId   the transaction that wrote this version
/// 48      8   NextPage        first never-allocated page (the high-water mark)
/// 56      8   FreePages       pages below NextPage whose bitmap bit says free
/// 64     32   RootTree        TreeHeader of the root tree (tree name to TreeHeader)
/// 96      4   BitmapCount     number of free-space bitmap pages
/// 100     4   (reserved)
/// 104   8*n   BitmapPages     page number of bitmap i, which covers pages [i*PagesPerBitmap, (i+1)*PagesPerBitmap)
/// </code>
/// </summary>
[StructLayout(LayoutKind.Explicit, Size = Size)]
internal struct StateHeader
{
    public const int Size = 104;
    public const ulong MagicValue = 0x3145544154534A44; // "DJSTATE1" little-endian
    public const int MaxBitmaps = (Constants.PageSize - Size) / 8;

    [FieldOffset(0)] public PageHeader Page;
    [FieldOffset(32)] public ulong Magic;
    [FieldOffset(40)] public long TransactionId;
    [FieldOffset(48)] public long NextPage;
    [FieldOffset(56)] public long FreePages;
    [FieldOffset(64)] public TreeHeader RootTree;
    [FieldOffset(96)] public int BitmapCount;

    public static ref StateHeader Of(Span<byte> page) => ref MemoryMarshal.AsRef<StateHeader>(page);

    public static Span<long> BitmapPages(Span<byte> page) => MemoryMarshal.Cast<byte, long>(page.Slice(Size));
}

/// <summary>
/// Pages 0 and 1: the file header, written alternately by the flusher after the data file is
/// synced. The one with the larger valid FlushedTransactionId wins; a torn or corrupt one is ignored.
/// <code>
/// offset size field
///  0      8   Magic                  "JACKDAW1"
///  8      4   FormatVersion
/// 12      4   PageSize
/// 16      8   FlushedTransactionId   every transaction up to this one is in the data file
/// 24      8   Checksum               XxHash64 of bytes [0, 24)
/// </code>
/// </summary>
[StructLayout(LayoutKind.Explicit, Size = Size)]
internal struct FileHeader
{
    public const int Size = 32;
    public const ulong MagicValue = 0x31574144_4B43414A; // "JACKDAW1" little-endian
    /// <summary>
    /// 2: journal records may hold page diffs (JournalRecordHeader.DiffFlag). Builds that read only
    /// version 1 would replay such a record as whole pages and corrupt the data file, so an
    /// environment's headers are raised to 2 on open, before any record of this build is written.
    /// </summary>
    public const int CurrentFormatVersion = 2;

    /// <summary>Version 1 folders (whole-page journal records) are read, and upgraded on open.</summary>
    public const int OldestReadableFormatVersion = 1;

    [FieldOffset(0)] public ulong Magic;
    [FieldOffset(8)] public int FormatVersion;
    [FieldOffset(12)] public int PageSize;
    [FieldOffset(16)] public long FlushedTransactionId;
    [FieldOffset(24)] public ulong Checksum;
}
