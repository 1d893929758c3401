using System.Text.Json;

namespace Jackdaw.Server.Backup;

/// <summary>
/// What a periodic backup task has done, stored in the database's <c>PeriodicBackupStatus</c> tree
/// after every run (so it survives restarts), with RavenDB's <c>PeriodicBackupStatus</c> names. The
/// <c>...Internal</c> times are when a run of that kind was last attempted, successful or not: the
/// schedule counts from them, so a failing run is tried again at the next occurrence, not in a loop.
/// </summary>
public sealed record PeriodicBackupStatus
{
    public long TaskId { get; init; }

    /// <summary>The node that ran the last backup (RavenDB's <c>NodeTag</c>); null on a lone server (this node).</summary>
    public string? NodeTag { get; init; }

    /// <summary>When the last snapshot that succeeded started.</summary>
    public DateTime? LastFullBackup { get; init; }

    /// <summary>When the last incremental file that succeeded started.</summary>
    public DateTime? LastIncrementalBackup { get; init; }

    public DateTime? LastFullBackupInternal { get; init; }

    public DateTime? LastIncrementalBackupInternal { get; init; }

    public long? FullBackupDurationInMs { get; init; }

    public long? IncrementalBackupDurationInMs { get; init; }

    /// <summary>Whether the last run wrote a snapshot.</summary>
    public bool IsFull { get; init; }

    /// <summary>How long the last run took, successful or not.</summary>
    public long? DurationInMs { get; init; }

    /// <summary>The current chain's folder (the last snapshot's): incrementals go there.</summary>
    public string? FolderName { get; init; }

    /// <summary>The last file written, its size and the storage transaction it ends at.</summary>
    public string? FileName { get; init; }

    public long SizeInBytes { get; init; }

    public long? TransactionId { get; init; }

    public long LastEtag { get; init; }

    /// <summary>
    /// A logical chain: the last revision etag its last file covers (Jackdaw's; revisions have their
    /// own etags). The task holds the revision tombstones after it; null: a binary chain, or a
    /// status written before it was recorded (the next run is then a full file).
    /// </summary>
    public long? LastRevisionEtag { get; init; }

    public string? LastDatabaseChangeVector { get; init; }

    public long? LastOperationId { get; init; }

    /// <summary>Why the last run failed (with the path), or null when it succeeded.</summary>
    public string? Error { get; init; }

    public DateTime? ErrorAt { get; init; }

    /// <summary>The core's note on the last file (a snapshot written where an incremental was asked, and why).</summary>
    public string? Note { get; init; }

    public byte[] ToJson() => JsonSerializer.SerializeToUtf8Bytes(this);

    public static PeriodicBackupStatus FromJson(JsonElement json) =>
        json.Deserialize<PeriodicBackupStatus>() ?? throw new JsonException("A periodic backup status is null.");
}
