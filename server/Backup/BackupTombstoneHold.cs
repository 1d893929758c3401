using Jackdaw.Server.Databases;

namespace Jackdaw.Server.Backup;

/// <summary>
/// Keeps every tombstone while a backup runs. The backup holds each index's last commit before it
/// copies the storage, and a restored index goes on from that commit's positions: the tombstones
/// after them must still be in the copy, however far the live index gets meanwhile. (A clean-up
/// decided before the hold removes only tombstones below the commits then, which the held ones
/// are at or past.) Revision tombstones are held too, so that nothing is cleaned while a backup
/// runs (the copy holds them as they were when it was taken).
/// </summary>
internal sealed class BackupTombstoneHold : ITombstoneConsumer, IRevisionTombstoneConsumer
{
    public string Name => "Backup";

    public bool Consumes(string lowerCollection) => true;

    public long GetLastProcessedTombstoneEtag(string lowerCollection) => 0;

    public string? HoldReason => "a backup is running";

    public long GetLastProcessedRevisionTombstoneEtag() => 0;
}
