using System.Text.Json;
using System.Text.Json.Serialization;

namespace Jackdaw.Server.Backup;

/// <summary>One entry of a backup file: a stream of blocks from <see cref="Offset"/>.</summary>
public sealed class BackupEntry
{
    public string Name { get; set; } = "";

    public long Offset { get; set; }

    /// <summary>Bytes of the entry's content.</summary>
    public long Length { get; set; }

    /// <summary>Bytes the entry takes in the file (its blocks, compressed where that saved space).</summary>
    public long StoredLength { get; set; }

    /// <summary>XxHash64 of the content, hexadecimal.</summary>
    public string Hash { get; set; } = "";
}
