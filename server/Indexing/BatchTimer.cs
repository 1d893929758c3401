using System.Diagnostics;

namespace Jackdaw.Server.Indexing;

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
