namespace Jackdaw.Server.Databases;

/// <summary>
/// A tombstone consumer that also reads the revision tombstones (in revision-etag order: replication's
/// revisions feed). The clean-up keeps every revision tombstone after the lowest position such
/// consumers give; with none, all of them go.
/// </summary>
public interface IRevisionTombstoneConsumer
{
    /// <summary>The revision etag up to which the consumer has every revision tombstone; <see cref="long.MaxValue"/> when it holds none.</summary>
    long GetLastProcessedRevisionTombstoneEtag();
}
