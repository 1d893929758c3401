namespace Jackdaw.Server.Indexing;

/// <summary>
/// How a recorded auto-index is used on this node, as housekeeping reports it to its
/// <see cref="IAutoIndexSink"/> (a cluster's leader deletes one that every node reports expired).
/// <paramref name="CreatedAt"/> names the definition (a definition made again has another: the
/// cluster puts in the one of the definition its record holds when it sends the report);
/// <paramref name="LastUsed"/> is its last query here, or, never queried, the later of its creation
/// and the opening of this node's copy (a restart forgets the last query: the node does not vouch for
/// the time before it); <paramref name="Expired"/> says this node found it unqueried for longer than
/// its <c>AutoIndexDeleteAfter</c>, by its own clock.
/// </summary>
public sealed record AutoIndexUsage(string Name, DateTime CreatedAt, DateTime LastUsed, bool Expired);
