namespace Jackdaw.Server.Backup;

/// <summary>The kinds of file a binary backup chain holds (a logical chain: <see cref="Full"/> and <see cref="Incremental"/>).</summary>
public enum BackupKind
{
    /// <summary>A snapshot: every page, every index's files, as of one transaction.</summary>
    Full,

    /// <summary>The journal records since the previous file of the chain.</summary>
    Incremental,

    /// <summary>The newest version of each page those records touched, merged.</summary>
    MinimalIncremental,
}

/// <summary>What one backup run writes, and where.</summary>
public sealed class BackupRequest
{
    /// <summary>The chain's folder (made when missing); the new file goes into it.</summary>
    public required string Folder { get; init; }

    /// <summary>
    /// A snapshot. When false, an incremental file on the folder's chain; a snapshot all the same
    /// when the folder holds none, or the journals since its last file were not kept
    /// (<see cref="BackupResult.Note"/> says why).
    /// </summary>
    public bool Full { get; init; }

    /// <summary>The kind of an incremental file: minimal (pages) rather than journal records.</summary>
    public bool Minimal { get; init; }

    /// <summary>Keep the journals from this file on, for the chain's next incremental (periodic tasks).</summary>
    public bool RetainJournals { get; init; }

    /// <summary>With <see cref="RetainJournals"/>: the lowest transaction other chains still need the journals after.</summary>
    public long? OtherChainsNeedAfter { get; init; }

    /// <summary>
    /// A logical file (RavenDB's <c>BackupType</c> <c>Backup</c>, <see cref="LogicalBackups"/>) rather than
    /// the binary chain's; <see cref="Minimal"/>, <see cref="RetainJournals"/> and <see cref="OtherChainsNeedAfter"/> do not apply.
    /// </summary>
    public bool Logical { get; init; }

    /// <summary>
    /// Logical incrementals: every tombstone after this etag is still in the database (a periodic
    /// task's hold has kept them since its chain's last file). Null: nobody kept them, and the file
    /// is a full backup (<see cref="BackupResult.Note"/> says why).
    /// </summary>
    public long? TombstonesKeptAfter { get; init; }

    /// <summary>Tests only: makes the stream the file is written to (a disk that fills up), instead of a new file at the path.</summary>
    internal Func<string, Stream>? CreateFile { get; init; }
}

/// <summary>What a backup run wrote.</summary>
public sealed class BackupResult
{
    public required string FileName { get; init; }

    public required string FilePath { get; init; }

    public required BackupKind Kind { get; init; }

    /// <summary>A logical file (<see cref="Kind"/> is then <see cref="BackupKind.Full"/> or <see cref="BackupKind.Incremental"/>).</summary>
    public bool Logical { get; init; }

    public long SizeInBytes { get; init; }

    /// <summary>The last etag the file covers (its database's state as of <see cref="TransactionId"/>).</summary>
    public long Etag { get; init; }

    public string ChangeVector { get; init; } = "";

    /// <summary>The storage transaction the file ends at: the next incremental continues from it.</summary>
    public long TransactionId { get; init; }

    public TimeSpan Duration { get; init; }

    public long Pages { get; init; }

    /// <summary>Entries of the file (the storage stream, each index file).</summary>
    public long Entries { get; init; }

    /// <summary>Why the file is not of the kind asked for (a snapshot instead of an incremental), else null.</summary>
    public string? Note { get; init; }
}

/// <summary>A restore of a chain into a new database.</summary>
public sealed class RestoreRequest
{
    /// <summary>The chain's folder.</summary>
    public required string BackupLocation { get; init; }

    public required string DatabaseName { get; init; }

    /// <summary>The last file to apply (a file name in the folder); null for all.</summary>
    public string? LastFileNameToRestore { get; init; }
}

/// <summary>What a restore (or a verification) applied.</summary>
public sealed class RestoreResult
{
    public required string DatabaseName { get; init; }

    /// <summary>The files applied, in order.</summary>
    public required IReadOnlyList<string> Files { get; init; }

    public long Etag { get; init; }

    public long TransactionId { get; init; }

    public int Indexes { get; init; }

    public long SizeInBytes { get; init; }

    public TimeSpan Duration { get; init; }
}
