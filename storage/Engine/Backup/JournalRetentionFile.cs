using System.Buffers.Binary;
using System.IO.Hashing;

namespace Jackdaw.Storage.Engine.Backup;

/// <summary>
/// The environment's journal retention, persisted in its folder as <c>journal-retention</c> (32 bytes):
/// <code>
/// offset size field
///  0      8   Magic          "JDRETAIN"
///  8      4   FormatVersion  1
/// 12      4   Flags          1 = retaining (RetainAfter holds); 0 = not retaining
/// 16      8   RetainAfter    journal records of every transaction after this one are kept
/// 24      8   Checksum       XxHash64 of bytes [0, 24)
/// </code>
/// Written to <c>journal-retention.new</c>, synced, renamed over the old one, folder synced: a crash
/// leaves the old setting or the new one. No file: not retaining.
/// </summary>
internal static class JournalRetentionFile
{
    public const string FileName = "journal-retention";
    private const int Size = 32;
    private const ulong MagicValue = 0x4E49_4154_4552_444A; // "JDRETAIN" little-endian

    /// <summary>The persisted retention (null: none). A damaged file is a <see cref="StorageCorruptedException"/>.</summary>
    public static long? Read(string folder)
    {
        var path = Path.Combine(folder, FileName);
        if (!File.Exists(path))
        {
            return null;
        }

        var bytes = File.ReadAllBytes(path);
        if (bytes.Length != Size || BinaryPrimitives.ReadUInt64LittleEndian(bytes) != MagicValue ||
            BinaryPrimitives.ReadUInt64LittleEndian(bytes.AsSpan(24)) != XxHash64.HashToUInt64(bytes.AsSpan(0, 24)))
        {
            throw new StorageCorruptedException(path, "The journal retention file is damaged. Deleting it stops journal retention (the next incremental backup then needs a full one first).");
        }

        var version = BinaryPrimitives.ReadInt32LittleEndian(bytes.AsSpan(8));
        if (version != 1)
        {
            throw new StorageCorruptedException(path, $"The journal retention file has format version {version}; this build reads version 1.");
        }

        return (BinaryPrimitives.ReadInt32LittleEndian(bytes.AsSpan(12)) & 1) != 0 ? BinaryPrimitives.ReadInt64LittleEndian(bytes.AsSpan(16)) : null;
    }

    public static void Write(string folder, long? retainAfter, StorageIo io)
    {
        var bytes = new byte[Size];
        BinaryPrimitives.WriteUInt64LittleEndian(bytes, MagicValue);
        BinaryPrimitives.WriteInt32LittleEndian(bytes.AsSpan(8), 1);
        BinaryPrimitives.WriteInt32LittleEndian(bytes.AsSpan(12), retainAfter is null ? 0 : 1);
        BinaryPrimitives.WriteInt64LittleEndian(bytes.AsSpan(16), retainAfter ?? 0);
        BinaryPrimitives.WriteUInt64LittleEndian(bytes.AsSpan(24), XxHash64.HashToUInt64(bytes.AsSpan(0, 24)));
        var path = Path.Combine(folder, FileName);
        var temp = path + ".new";
        using (var stream = new FileStream(temp, FileMode.Create, FileAccess.ReadWrite, FileShare.None, 1, FileOptions.None))
        {
            io.Write(stream.SafeFileHandle, bytes, 0, temp);
            io.DataSync(stream);
        }

        File.Move(temp, path, overwrite: true);
        io.SyncFolder(folder);
    }
}
