namespace Jackdaw.Server.Databases;

/// <summary>
/// Something that reads the tombstone feed (an index, a subscription) and must see every deletion
/// before its tombstone is removed. Registered with <see cref="TombstoneCleaner.Register"/>.
/// </summary>
public interface ITombstoneConsumer
{
    /// <summary>Shown in stats, e.g. <c>Index 'Orders/Totals'</c>.</summary>
    string Name { get; }

    /// <summary>Whether the consumer reads the tombstones of this collection (lowercased; "" for documents without one).</summary>
    bool Consumes(string lowerCollection);

    /// <summary>The etag of the last tombstone of the collection the consumer has processed; those at or below it may go.</summary>
    long GetLastProcessedTombstoneEtag(string lowerCollection);

    /// <summary>
    /// Null while the consumer advances; otherwise why it does not (disabled, errored). It still
    /// holds every tombstone it has not passed, and stats show this reason beside them.
    /// </summary>
    string? HoldReason { get; }
}
