namespace Jackdaw.Server.Indexing;

/// <summary>
/// What one batch of one index did (RavenDB's indexing performance stats): when, how long, how many
/// items read, entries written and documents failed, bytes allocated, and the tree of its operations.
/// </summary>
public sealed record IndexingBatch(
    long Id,
    DateTime Started,
    DateTime Completed,
    double DurationInMs,
    int InputCount,
    int OutputCount,
    int FailedCount,
    long AllocatedBytes,
    long DocumentsSize,
    IndexingOperation Details);
