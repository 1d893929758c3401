using System.Text.Json;
using System.Text.Json.Serialization;

namespace Jackdaw.Server.Backup;

public sealed class BackupIndexFile
{
    public string Name { get; set; } = "";

    public long Length { get; set; }

    /// <summary>The file's last 16 bytes, hexadecimal (Lucene's footer: its magic and the file's CRC32).</summary>
    public string Tail { get; set; } = "";

    /// <summary>The backup file whose entry <c>indexes/{folder}/{name}</c> holds it (this one or an earlier one of the chain).</summary>
    public string In { get; set; } = "";
}
