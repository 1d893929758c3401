namespace Jackdaw.Server.Backup.Smuggler;

/// <summary>
/// What a dump holds, in RavenDB's names (<c>OperateOnTypes</c>; its clients send them joined by
/// commas). Jackdaw exports and imports <see cref="Documents"/>, <see cref="Attachments"/>,
/// <see cref="RevisionDocuments"/>, <see cref="Tombstones"/>, <see cref="Indexes"/>,
/// <see cref="Identities"/> and <see cref="Subscriptions"/>; the others are accepted and do nothing
/// (Jackdaw has no counters, time series, compare exchange or database record to write or read).
/// The bit values are Jackdaw's own: only the names travel.
/// </summary>
[Flags]
public enum DatabaseItemType
{
    None = 0,
    Documents = 1 << 0,
    RevisionDocuments = 1 << 1,
    Indexes = 1 << 2,
    Identities = 1 << 3,
    Tombstones = 1 << 4,
    LegacyAttachments = 1 << 5,
    Conflicts = 1 << 6,
    CompareExchange = 1 << 7,
    LegacyDocumentDeletions = 1 << 8,
    LegacyAttachmentDeletions = 1 << 9,
    DatabaseRecord = 1 << 10,
    Unknown = 1 << 11,
    Attachments = 1 << 12,
    CounterGroups = 1 << 13,
    Subscriptions = 1 << 14,
    CompareExchangeTombstones = 1 << 15,
    TimeSeries = 1 << 16,
    ReplicationHubCertificates = 1 << 17,
    TimeSeriesDeletedRanges = 1 << 18,
}
