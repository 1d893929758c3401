namespace Jackdaw.Server.Subscriptions;

/// <summary>
/// A batch for one worker: the matching documents of the etag range
/// (<see cref="StartExclusive"/>, <see cref="LastEtag"/>], <see cref="Count"/> of them, written as
/// <see cref="Message"/>. Acknowledging it acknowledges the range.
/// </summary>
public sealed record SubscriptionBatch(long StartExclusive, long LastEtag, int Count, ReadOnlyMemory<byte> Message)
{
    /// <summary>
    /// On a clustered database, for a batch read to the collection's end: how far each other
    /// copy's replication feed had come in the snapshot it was read from (null otherwise).
    /// </summary>
    public IReadOnlyDictionary<string, long>? Feeds { get; init; }
}
