using System.Diagnostics;

namespace Jackdaw.Server.Indexing;

/// <summary>One timed operation of an indexing batch, with the operations it is made of.</summary>
public sealed record IndexingOperation(string Name, double DurationInMs, IReadOnlyList<IndexingOperation> Operations);

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

/// <summary>The last batches of an index, oldest first (a bounded ring).</summary>
public sealed class IndexingBatchRing
{
    /// <summary>Batches kept per index.</summary>
    public const int Capacity = 1000;

    private readonly IndexingBatch[] _items = new IndexingBatch[Capacity];
    private long _count;

    public void Add(IndexingBatch batch)
    {
        lock (_items)
        {
            _items[_count % Capacity] = batch;
            _count++;
        }
    }

    public IndexingBatch[] ToArray()
    {
        lock (_items)
        {
            var length = (int)Math.Min(_count, Capacity);
            var result = new IndexingBatch[length];
            var first = _count - length;
            for (var i = 0; i < length; i++)
                result[i] = _items[(first + i) % Capacity];
            return result;
        }
    }
}

/// <summary>
/// Times the parts of one batch as the loop runs them (one thread: plain fields). Reading the
/// storage is what the loop's time leaves once mapping and Lucene writes are taken out.
/// </summary>
internal sealed class BatchTimer
{
    private readonly long _started = Stopwatch.GetTimestamp();
    private readonly DateTime _startedAt = DateTime.UtcNow;
    private readonly long _allocatedAtStart = GC.GetAllocatedBytesForCurrentThread();
    private readonly Dictionary<string, long> _mapTicks = new(StringComparer.Ordinal);
    private long _loopTicks;
    private long _writeTicks;
    private long _deleteTicks;
    private long _referencesTicks;
    private long _refreshTicks;
    private long _commitTicks;

    public int Input;
    public int Output;
    public int Failed;
    public long DocumentsSize;

    public void AddMap(string collection, long ticks) =>
        _mapTicks[collection] = _mapTicks.GetValueOrDefault(collection) + ticks;

    public void AddWrite(long ticks) => _writeTicks += ticks;

    public void AddDelete(long ticks) => _deleteTicks += ticks;

    public void AddReferences(long ticks) => _referencesTicks += ticks;

    public void EndLoop() => _loopTicks = Stopwatch.GetTimestamp() - _started;

    public void AddRefresh(long ticks) => _refreshTicks += ticks;

    public void AddCommit(long ticks) => _commitTicks += ticks;

    public bool Committed => _commitTicks > 0;

    private static double Ms(long ticks) => ticks * 1000.0 / Stopwatch.Frequency;

    public IndexingBatch Finish(long id)
    {
        var total = Stopwatch.GetTimestamp() - _started;
        var mapTotal = _mapTicks.Values.Sum();
        var read = Math.Max(0, _loopTicks - mapTotal - _writeTicks - _deleteTicks - _referencesTicks);
        var operations = new List<IndexingOperation> { new("Storage/Read", Ms(read), []) };
        if (_mapTicks.Count > 0)
            operations.Add(new IndexingOperation("Map", Ms(mapTotal), _mapTicks.Select(m => new IndexingOperation("Map/" + m.Key, Ms(m.Value), [])).ToList()));
        if (_writeTicks + _deleteTicks > 0)
        {
            operations.Add(new IndexingOperation("Lucene/Write", Ms(_writeTicks + _deleteTicks),
            [
                new IndexingOperation("Lucene/AddDocument", Ms(_writeTicks), []),
                new IndexingOperation("Lucene/Delete", Ms(_deleteTicks), []),
            ]));
        }
        if (_referencesTicks > 0)
            operations.Add(new IndexingOperation("References", Ms(_referencesTicks), []));
        if (_refreshTicks > 0)
            operations.Add(new IndexingOperation("Lucene/Refresh", Ms(_refreshTicks), []));
        if (_commitTicks > 0)
            operations.Add(new IndexingOperation("Lucene/Commit", Ms(_commitTicks), []));
        var duration = Ms(total);
        return new IndexingBatch(id, _startedAt, DateTime.UtcNow, duration, Input, Output, Failed,
            GC.GetAllocatedBytesForCurrentThread() - _allocatedAtStart, DocumentsSize,
            new IndexingOperation("Indexing", duration, operations));
    }
}
