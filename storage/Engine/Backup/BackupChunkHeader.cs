using System.IO.Hashing;
using System.Runtime.InteropServices;

namespace Jackdaw.Storage.Engine.Backup;

/// <summary>What a chunk of a backup stream holds.</summary>
internal enum BackupChunkType
{
    /// <summary>Consecutive data-file pages from Number on (full streams): PayloadLength / 8192 pages.</summary>
    Pages = 1,

    /// <summary>One journal record exactly as the journal stored it (48-byte header, payload); Number is its transaction.</summary>
    JournalRecord = 2,

    /// <summary>
    /// Merged pages (minimal incrementals): Number entries of [long PageNumber][int Length][Length bytes],
    /// Length a multiple of 8192 up to 1 MiB, written in order (a later entry over the same page wins).
    /// </summary>
    MergedPages = 3,

    /// <summary>The last chunk: [long LastTransactionId][long Pages][long Records]; Number is 0.</summary>
    End = 4,
}

/// <summary>
/// The header of every chunk of a backup stream; the payload follows, then the payload's XxHash64
/// (8 bytes). Chunks are numbered from 0 so a lost, repeated or reordered chunk is found.
/// <code>
/// offset size field
///  0      4   Magic          "JBCK"
///  4      4   Type           BackupChunkType
///  8      8   Ordinal        0, 1, 2 ... in stream order
/// 16      8   Number         per type: first page, transaction id, entry count, 0
/// 24      8   PayloadLength
/// 32      8   HeaderHash     XxHash64 of bytes [0, 32)
/// </code>
/// </summary>
[StructLayout(LayoutKind.Explicit, Size = Size)]
internal struct BackupChunkHeader
{
    public const int Size = 40;
    public const uint MagicValue = 0x4B43424A; // "JBCK"

    /// <summary>Largest page run in a Pages chunk and in one merged entry: restore memory stays bounded by it (or by one journal record).</summary>
    public const int MaxRunBytes = 1024 * 1024;

    [FieldOffset(0)] public uint Magic;
    [FieldOffset(4)] public BackupChunkType Type;
    [FieldOffset(8)] public long Ordinal;
    [FieldOffset(16)] public long Number;
    [FieldOffset(24)] public long PayloadLength;
    [FieldOffset(32)] public ulong HeaderHash;

    public static ulong ComputeHash(ReadOnlySpan<byte> header) => XxHash64.HashToUInt64(header[..32]);
}
