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
