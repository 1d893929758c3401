namespace Jackdaw.Server.Indexing;

/// <summary>One timed operation of an indexing batch, with the operations it is made of.</summary>
public sealed record IndexingOperation(string Name, double DurationInMs, IReadOnlyList<IndexingOperation> Operations);
