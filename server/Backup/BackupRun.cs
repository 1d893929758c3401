namespace Jackdaw.Server.Backup;

/// <summary>
/// The progress of one backup, restore or verification, read from other threads while it runs
/// (an operation's state shows it): pages copied, entries written or read, bytes.
/// </summary>
public sealed class BackupRun
{
    private long _pages;
    private long _entries;
    private long _bytes;

    /// <summary>Pages copied or applied (the engine's count while it copies the storage).</summary>
    public long Pages => (Engine?.Pages ?? 0) + Volatile.Read(ref _pages);

    /// <summary>The storage engine's counters of the copy in progress.</summary>
    public Jackdaw.Storage.Engine.BackupProgress? Engine { get; internal set; }

    public long Entries => Volatile.Read(ref _entries);

    public long Bytes => Volatile.Read(ref _bytes);

    private string _stage = "starting";
    private long _stages;

    /// <summary>What the run is doing now, e.g. "copying the storage", "copying index folder 'orders-1a2b'".</summary>
    public string Stage
    {
        get => Volatile.Read(ref _stage);
        set
        {
            Volatile.Write(ref _stage, value);
            Interlocked.Increment(ref _stages);
        }
    }

    /// <summary>Moves whenever anything above does (the operation publishes progress only when it moved).</summary>
    public long Version => Pages + Entries + Bytes + (Engine?.Bytes ?? 0) + Volatile.Read(ref _stages);

    internal void AddPages(long count) => Interlocked.Add(ref _pages, count);

    internal void AddEntries(long count) => Interlocked.Add(ref _entries, count);

    internal void AddBytes(long count) => Interlocked.Add(ref _bytes, count);
}
