namespace Jackdaw.Server.Subscriptions;

/// <summary>
/// A batch for one worker: the matching documents of the etag range
/// (<see cref="StartExclusive"/>, <see cref="LastEtag"/>], <see cref="Count"/> of them, written as
/// <see cref="Message"/>. Acknowledging it acknowledges the range.
/// </summary>
public sealed record SubscriptionBatch(long StartExclusive, long LastEtag, int Count, ReadOnlyMemory<byte> Message);
