namespace Jackdaw.Server.Backup;

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

    /// <summary>
    /// Logical incrementals, beside <see cref="TombstonesKeptAfter"/>: every revision tombstone after
    /// this revision etag is still in the database. Null: not known (a chain begun before revision
    /// positions were recorded), and the file is a full backup.
    /// </summary>
    public long? RevisionTombstonesKeptAfter { get; init; }

    /// <summary>Tests only: makes the stream the file is written to (a disk that fills up), instead of a new file at the path.</summary>
    internal Func<string, Stream>? CreateFile { get; init; }
}
