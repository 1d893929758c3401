namespace Jackdaw.Storage.Engine;

/// <summary>
/// How far a backup has got: pages (from the data file, or merged pages), records (journal records,
/// or merged records of a minimal incremental) and bytes written to the destination. Written by the
/// backup's thread, read from any other (an operation's progress).
/// </summary>
public sealed class BackupProgress
{
    private long _pages;
    private long _records;
    private long _bytes;

    public long Pages => Interlocked.Read(ref _pages);

    public long Records => Interlocked.Read(ref _records);

    public long Bytes => Interlocked.Read(ref _bytes);

    public void AddPages(long count) => Interlocked.Add(ref _pages, count);

    public void AddRecords(long count) => Interlocked.Add(ref _records, count);

    public void AddBytes(long count) => Interlocked.Add(ref _bytes, count);
}
