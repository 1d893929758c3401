using System.Buffers;
using System.Buffers.Binary;
using System.IO.Hashing;
using System.Text.Json;
using K4os.Compression.LZ4;

namespace Jackdaw.Server.Backup;

/// <summary>
/// The container of one backup file. Written front to back, never rewritten, so it can go straight
/// to a file (or a pipe) as the backup runs:
/// <code>
/// offset  size  field
///  0       8    magic "JDBKFILE"
///  8       4    format version (<see cref="FormatVersion"/>)
/// 12       4    reserved (0; a reader refuses anything else)
/// 16       ..   entries, one after another; each a run of blocks:
///                 [int raw length][int stored length][long XxHash64 of the stored bytes][stored bytes]
///               a block is LZ4 (fast) when that made it smaller, else raw (stored length = raw
///               length); raw blocks are at most 1 MiB; a block of raw length 0 ends the entry
///  m       ..   the manifest (<see cref="BackupManifest"/>), UTF-8 JSON
/// end-32   8    m (the manifest's offset)
/// end-24   8    the manifest's length
/// end-16   8    XxHash64 of the manifest
/// end-8    8    magic "JDBKTAIL"
/// </code>
/// The manifest names every entry with its offset, lengths and the XxHash64 of its content, so a
/// flipped byte anywhere is found: in a block by the block's hash, in the manifest by the tail's,
/// in the header or tail by the magic and the version.
/// </summary>
public static class BackupArchive
{
    public const int FormatVersion = 1;
    public const int BlockSize = 1 << 20;
    public const int HeaderSize = 16;
    public const int TailSize = 32;
    public const int BlockHeaderSize = 16;

    internal static ReadOnlySpan<byte> Magic => "JDBKFILE"u8;

    internal static ReadOnlySpan<byte> TailMagic => "JDBKTAIL"u8;
}
