namespace Jackdaw.Server.Backup;

/// <summary>What a logical backup file says of itself (its <c>JackdawBackup</c> header).</summary>
/// <param name="Full">A full backup (documents, indexes, identities, subscriptions) rather than an incremental one (the changes since the previous file, deletions included).</param>
/// <param name="StartEtag">The first etag the file's documents and tombstones were read from (1 for a full backup).</param>
/// <param name="LastEtag">Every change up to this etag is in the file (or an earlier one of its chain); the next incremental starts after it.</param>
/// <param name="StartRevisionEtag">The first revision etag the file's revisions and revision tombstones were read from (1 for a full backup); null in a file written before revision positions were recorded.</param>
/// <param name="LastRevisionEtag">Every revision and revision tombstone up to this revision etag is in the file (or an earlier one of its chain); null as <paramref name="StartRevisionEtag"/>.</param>
public sealed record LogicalBackupHeader(bool Full, string Database, string DatabaseId, long StartEtag, long LastEtag, long? StartRevisionEtag = null, long? LastRevisionEtag = null);
