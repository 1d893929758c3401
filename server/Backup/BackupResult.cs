namespace Jackdaw.Server.Backup;

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

    /// <summary>A logical file: the last revision etag it covers (its revisions and revision tombstones); the next incremental starts after it.</summary>
    public long RevisionEtag { get; init; }

    /// <summary>The storage transaction the file ends at: the next incremental continues from it.</summary>
    public long TransactionId { get; init; }

    public TimeSpan Duration { get; init; }

    public long Pages { get; init; }

    /// <summary>Entries of the file (the storage stream, each index file).</summary>
    public long Entries { get; init; }

    /// <summary>Why the file is not of the kind asked for (a snapshot instead of an incremental), else null.</summary>
    public string? Note { get; init; }
}
