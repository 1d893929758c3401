using System.Text.Json;
using System.Text.Json.Serialization;

namespace Jackdaw.Server.Backup;

/// <summary>
/// What a backup file holds, written as JSON at its end (<see cref="BackupArchive"/>): the format,
/// the database, the point in its history the file brings a restore to, the file it continues,
/// every entry with its place, sizes and checksum, and the files of every index as of its commit.
/// </summary>
public sealed class BackupManifest
{
    public int FormatVersion { get; set; }

    public string Database { get; set; } = "";

    [JsonConverter(typeof(JsonStringEnumConverter<BackupKind>))]
    public BackupKind Kind { get; set; }

    public DateTime CreatedUtc { get; set; }

    /// <summary>The last etag (and change vector) of the database as of <see cref="TransactionId"/>.</summary>
    public long Etag { get; set; }

    public string ChangeVector { get; set; } = "";

    public string DatabaseId { get; set; } = "";

    /// <summary>The storage transaction a restore stands at after this file.</summary>
    public long TransactionId { get; set; }

    /// <summary>For an incremental file: the transaction of the chain's previous file, which it continues exactly.</summary>
    public long? PreviousTransactionId { get; set; }

    /// <summary>For an incremental file: the name of the previous file of the chain.</summary>
    public string? PreviousFile { get; set; }

    public List<BackupEntry> Entries { get; set; } = [];

    /// <summary>Every index's files as of its commit held for this file; files an earlier file of the chain holds are named by <see cref="BackupIndexFile.In"/>.</summary>
    public List<BackupIndex> Indexes { get; set; } = [];

    internal static readonly JsonSerializerOptions Json = new() { WriteIndented = false };
}

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

/// <summary>The files of one index folder, as of the commit the backup held.</summary>
public sealed class BackupIndex
{
    /// <summary>The folder's name under the database's <c>Indexes/</c> (the index record names it).</summary>
    public string Folder { get; set; } = "";

    public List<BackupIndexFile> Files { get; set; } = [];
}

public sealed class BackupIndexFile
{
    public string Name { get; set; } = "";

    public long Length { get; set; }

    /// <summary>The file's last 16 bytes, hexadecimal (Lucene's footer: its magic and the file's CRC32).</summary>
    public string Tail { get; set; } = "";

    /// <summary>The backup file whose entry <c>indexes/{folder}/{name}</c> holds it (this one or an earlier one of the chain).</summary>
    public string In { get; set; } = "";
}
