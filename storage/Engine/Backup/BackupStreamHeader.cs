using System.IO.Hashing;
using System.Runtime.InteropServices;

namespace Jackdaw.Storage.Engine.Backup;

/// <summary>What a backup stream holds.</summary>
internal enum BackupKind
{
    /// <summary>Data-file pages, then the journal records after the transaction they were copied at.</summary>
    Full = 1,

    /// <summary>Journal records, as the journal stored them.</summary>
    Incremental = 2,

    /// <summary>The newest version of every page the journal records touched, merged.</summary>
    MinimalIncremental = 3,
}

/// <summary>
/// The first 64 bytes of every backup stream (<see cref="EnvironmentBackup"/>).
/// <code>
/// offset size field
///  0      8   Magic               "JDBACKUP"
///  8      4   FormatVersion       1; a reader refuses a newer one
/// 12      4   Kind                BackupKind: 1 full, 2 incremental, 3 minimal incremental
/// 16      4   PageSize            8192
/// 20      4   (reserved, 0)
/// 24      8   AfterTransactionId  incrementals: the transaction the restore must be at (the stream takes it
///                                 to LastTransactionId); full: the data file's flushed transaction when its
///                                 pages were copied (the records that follow start after it)
/// 32      8   LastTransactionId   the transaction the stream ends at; 0 in a full stream, whose last
///                                 transaction is known only at its end (the end chunk holds it)
/// 40     16   (reserved, 0)
/// 56      8   HeaderHash          XxHash64 of bytes [0, 56)
/// </code>
/// </summary>
[StructLayout(LayoutKind.Explicit, Size = Size)]
internal struct BackupStreamHeader
{
    public const int Size = 64;
    public const ulong MagicValue = 0x5055_4B43_4142_444A; // "JDBACKUP" little-endian
    public const int CurrentFormatVersion = 1;

    [FieldOffset(0)] public ulong Magic;
    [FieldOffset(8)] public int FormatVersion;
    [FieldOffset(12)] public BackupKind Kind;
    [FieldOffset(16)] public int PageSize;
    [FieldOffset(24)] public long AfterTransactionId;
    [FieldOffset(32)] public long LastTransactionId;
    [FieldOffset(56)] public ulong HeaderHash;

    public static ulong ComputeHash(ReadOnlySpan<byte> header) => XxHash64.HashToUInt64(header[..56]);
}
