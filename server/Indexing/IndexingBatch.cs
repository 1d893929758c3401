using System.Diagnostics;
using Jackdaw.Server.Indexing.Workers;

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
    IndexingOperation Details)
{
    /// <summary>What the batch <paramref name="timer"/> timed did, as it ends now.</summary>
    internal static IndexingBatch Of(BatchTimer timer, long id)
    {
        var total = Stopwatch.GetTimestamp() - timer.Started;
        var mapTotal = timer.MapTicks.Values.Sum();
        var read = Math.Max(0, timer.LoopTicks - mapTotal - timer.WriteTicks - timer.DeleteTicks - timer.ReferencesTicks - timer.ReduceTicks);
        var operations = new List<IndexingOperation> { new("Storage/Read", Ms(read), []) };
        if (timer.MapTicks.Count > 0)
        {
            operations.Add(new IndexingOperation("Map", Ms(mapTotal), timer.MapTicks.Select(m => new IndexingOperation("Map/" + m.Key, Ms(m.Value), [])).ToList()));
        }
        if (timer.WriteTicks + timer.DeleteTicks > 0)
        {
            operations.Add(new IndexingOperation("Lucene/Write", Ms(timer.WriteTicks + timer.DeleteTicks),
            [
                new IndexingOperation("Lucene/AddDocument", Ms(timer.WriteTicks), []),
                new IndexingOperation("Lucene/Delete", Ms(timer.DeleteTicks), []),
            ]));
        }
        if (timer.ReferencesTicks > 0)
        {
            operations.Add(new IndexingOperation("References", Ms(timer.ReferencesTicks), []));
        }
        if (timer.ReduceTicks > 0)
        {
            operations.Add(new IndexingOperation("Reduce", Ms(timer.ReduceTicks), []));
        }
        if (timer.RefreshTicks > 0)
        {
            operations.Add(new IndexingOperation("Lucene/Refresh", Ms(timer.RefreshTicks), []));
        }
        if (timer.CommitTicks > 0)
        {
            operations.Add(new IndexingOperation("Lucene/Commit", Ms(timer.CommitTicks), []));
        }
        var duration = Ms(total);
        return new IndexingBatch(id, timer.StartedAt, DateTime.UtcNow, duration, timer.Input, timer.Output, timer.Failed,
            GC.GetAllocatedBytesForCurrentThread() - timer.AllocatedAtStart, timer.DocumentsSize,
            new IndexingOperation("Indexing", duration, operations));
    }

    private static double Ms(long ticks) => ticks * 1000.0 / Stopwatch.Frequency;
}
