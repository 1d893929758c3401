using System.Diagnostics;

namespace Jackdaw.Server.Indexing.Workers;

/// <summary>
/// Times the parts of one batch as the loop runs them (one thread: plain fields). Reading the
/// storage is what the loop's time leaves once mapping and Lucene writes are taken out. The index
/// turns it into its performance record (<c>IndexingBatch</c>) when the batch ends.
/// </summary>
internal sealed class BatchTimer
{
    private readonly Dictionary<string, long> _mapTicks;

    public int Input;
    public int Output;
    public int Failed;
    public long DocumentsSize;

    public BatchTimer()
    {
        Started = Stopwatch.GetTimestamp();
        StartedAt = DateTime.UtcNow;
        AllocatedAtStart = GC.GetAllocatedBytesForCurrentThread();
        // After the count of allocated bytes: the batch's own allocations include it.
        _mapTicks = new Dictionary<string, long>(StringComparer.Ordinal);
    }

    /// <summary>When the batch started (a <see cref="Stopwatch"/> timestamp).</summary>
    public long Started { get; }

    public DateTime StartedAt { get; }

    /// <summary>The bytes the loop's thread had allocated when the batch started.</summary>
    public long AllocatedAtStart { get; }

    /// <summary>The time of the loop's reading, mapping and writing (ticks), set by <see cref="EndLoop"/>.</summary>
    public long LoopTicks { get; private set; }

    /// <summary>The time of the map per collection (ticks).</summary>
    public IReadOnlyDictionary<string, long> MapTicks => _mapTicks;

    public long WriteTicks { get; private set; }

    public long DeleteTicks { get; private set; }

    public long ReferencesTicks { get; private set; }

    /// <summary>The time of a map-reduce's reduce, its store's writes and its results' Lucene writes (ticks).</summary>
    public long ReduceTicks { get; private set; }

    public long RefreshTicks { get; private set; }

    public long CommitTicks { get; private set; }

    public void AddMap(string collection, long ticks) =>
        _mapTicks[collection] = _mapTicks.GetValueOrDefault(collection) + ticks;

    public void AddWrite(long ticks) => WriteTicks += ticks;

    public void AddDelete(long ticks) => DeleteTicks += ticks;

    public void AddReferences(long ticks) => ReferencesTicks += ticks;

    public void AddReduce(long ticks) => ReduceTicks += ticks;

    public void EndLoop() => LoopTicks = Stopwatch.GetTimestamp() - Started;

    public void AddRefresh(long ticks) => RefreshTicks += ticks;

    public void AddCommit(long ticks) => CommitTicks += ticks;

    public bool Committed => CommitTicks > 0;
}
