using Jackdaw.Storage.Engine.Journal;
using Jackdaw.Storage.Engine.Paging;

namespace Jackdaw.Storage.Engine;

/// <summary>
/// A journaled, memory-mapped B+Tree store over one folder: one writer at a time, any number of
/// readers, each seeing the last durable commit as of its start.
/// <para>
/// Page versions: a page number names a logical page. A write transaction never writes a page in
/// place; it writes a new version (a managed array) that, at commit, joins the page table tagged
/// with the transaction id. A reader with snapshot S reads the newest version with id &lt;= S, or
/// the data file when the table has none. The flusher writes to the data file only versions with
/// id &lt;= the oldest active reader's snapshot and drops them from the table only after the data
/// file is synced; so the data file never changes under a reader that can see the change, and a
/// freed page can be reused by the very next transaction (old readers still resolve the old version).
/// </para>
/// </summary>
public sealed partial class StorageEnvironment : IDisposable
{
    private const string LockFileName = "jackdaw.lock";

    private readonly FileStream _lockFile;
    private readonly SemaphoreSlim _writeLock = new(1, 1);
    private readonly Lock _readersLock = new();
    private readonly Dictionary<long, int> _readers = [];
    private readonly Dictionary<long, int> _epochs = [];
    private long _epoch;
    private readonly Lock _flushLock = new();
    private readonly Thread _flusher;
    private readonly AutoResetEvent _flushSignal = new(false);
    private readonly CancellationTokenSource _stop = new();
    private long _lastCommitted;
    private long _lastDurable;
    private long _flushCount;
    private int _compressionSkips;
    private bool _disposed;
    private bool _releaseWhenReadersEnd;
    private Exception? _flushFailure;

    private StorageEnvironment(StorageEnvironmentOptions options, FileStream lockFile, DataFile dataFile, Recovery.Result recovered, long? retention, Dictionary<long, byte[]>? readOnlyOverlay = null)
    {
        _retention = retention;
        Options = options;
        Pool = new PagePool(Math.Clamp(options.FlushThresholdPages, 1024, 64 * 1024));
        _lockFile = lockFile;
        DataFile = dataFile;
        _lastCommitted = recovered.LastTransactionId;
        _lastDurable = recovered.LastTransactionId;
        Journal = new JournalWriter(options.Path, options.MaxJournalFileSize, recovered.NextJournalSequence, OnDurable, options.Io, recovered.Retained);
        RecoveredTransactions = recovered.ReplayedTransactions;
        if (readOnlyOverlay is not null)
        {
            // Recovery could not write: the journal's transactions live in memory as one version,
            // nothing is ever flushed, and the journal files stay for the next (writable) open.
            ReadOnlyReason = new DiskFullException(options.Path);
            if (readOnlyOverlay.Count > 0)
            {
                PageTable.Add(recovered.LastTransactionId, readOnlyOverlay);
            }
        }
        else
        {
            // Retained files the retention no longer needs (it moved on or stopped before a crash).
            Journal.DropRetained(retention);
        }

        _flusher = new Thread(FlusherLoop) { IsBackground = true, Name = "Jackdaw flusher" };
        _flusher.Start();
    }

    /// <summary>
    /// Why the environment was opened read-only (recovery could not write its files: a full disk),
    /// or null when it is writable. Read-only, every acknowledged transaction is readable and every
    /// write throws this exception; reopen once the cause is gone.
    /// </summary>
    public DiskFullException? ReadOnlyReason { get; }

    /// <summary>
    /// Why writes fail from now on until the environment is reopened (a journal write failed, e.g.
    /// the disk filled up), or why it opened read-only; null while it is healthy.
    /// </summary>
    public Exception? Failure => Journal.Failure ?? ReadOnlyReason;

    public StorageEnvironmentOptions Options { get; }

    /// <summary>Transactions replayed from the journal when this environment opened.</summary>
    public int RecoveredTransactions { get; }

    internal DataFile DataFile { get; }

    internal PageTable PageTable { get; } = new();

    internal PagePool Pool { get; }

    /// <summary>Split and relayout buffers of the (single) writer.</summary>
    internal Trees.TreeScratch TreeScratch { get; } = new();

    internal JournalWriter Journal { get; }

    internal long LastCommitted => Volatile.Read(ref _lastCommitted);

    internal long LastDurable => Volatile.Read(ref _lastDurable);

    public static StorageEnvironment Open(StorageEnvironmentOptions options)
    {
        ArgumentNullException.ThrowIfNull(options);
        Directory.CreateDirectory(options.Path);
        FileStream lockFile;
        try
        {
            lockFile = new FileStream(Path.Combine(options.Path, LockFileName), FileMode.OpenOrCreate, FileAccess.ReadWrite, FileShare.None, 1, FileOptions.None);
        }
        catch (IOException e)
        {
            throw new EnvironmentLockedException(options.Path, e);
        }

        DataFile? dataFile = null;
        try
        {
            dataFile = DataFile.Open(options.Path, options.InitialDataFileSize, options.Io, out _);
            var retention = Backup.JournalRetentionFile.Read(options.Path);
            Recovery.Result recovered;
            try
            {
                recovered = Recovery.Run(dataFile, options.Path, retention, options.Io);
            }
            catch (DiskFullException)
            {
                // Replaying into the data file needs space it cannot have. Every journal file is
                // still there (they are deleted only after the replay is synced), and a replay is
                // safe to repeat over a partly written data file: replay into memory instead.
                var overlay = new Dictionary<long, byte[]>();
                recovered = Recovery.RunInMemory(dataFile, options.Path, overlay);
                return new StorageEnvironment(options, lockFile, dataFile, recovered, retention, overlay);
            }

            return new StorageEnvironment(options, lockFile, dataFile, recovered, retention);
        }
        catch
        {
            dataFile?.Dispose();
            lockFile.Dispose();
            throw;
        }
    }

    public ReadTransaction BeginRead()
    {
        long snapshot;
        long epoch;
        lock (_readersLock)
        {
            // Checked under the lock: Dispose sets _disposed before it counts the open readers under
            // this lock, so a reader either is counted (and the mapping stays) or sees the flag.
            ThrowIfDisposed();
            snapshot = _lastDurable;
            Increment(_readers, snapshot);
            epoch = _epoch;
            Increment(_epochs, epoch);
        }

        return new ReadTransaction(this, snapshot, epoch);
    }

    internal void EndRead(long snapshot, long epoch)
    {
        var release = false;
        lock (_readersLock)
        {
            Decrement(_readers, snapshot);
            Decrement(_epochs, epoch);
            if (_releaseWhenReadersEnd && _readers.Count == 0)
            {
                _releaseWhenReadersEnd = false;
                release = true;
            }
        }

        if (release)
        {
            // The last reader of a disposed environment: only now may another open the folder.
            DataFile.ReleaseMappings();
            _lockFile.Dispose();
        }
    }

    private long BeginEpoch()
    {
        lock (_readersLock)
        {
            Increment(_epochs, _epoch);
            return _epoch;
        }
    }

    internal void EndEpoch(long epoch)
    {
        lock (_readersLock)
        {
            Decrement(_epochs, epoch);
        }
    }

    /// <summary>
    /// Retires arrays cut from the page table: a transaction that began before now may still
    /// hold them. Returns the oldest epoch any open transaction holds (the current one if none).
    /// </summary>
    private void RetireAndRelease(List<byte[]> cut)
    {
        long retireEpoch;
        long oldest;
        lock (_readersLock)
        {
            retireEpoch = _epoch++;
            oldest = _epoch;
            foreach (var (e, _) in _epochs)
            {
                oldest = Math.Min(oldest, e);
            }
        }

        Pool.Retire(retireEpoch, cut);
        Pool.Release(oldest);
    }

    private void ReleaseRetired()
    {
        long oldest;
        lock (_readersLock)
        {
            oldest = _epoch;
            foreach (var (e, _) in _epochs)
            {
                oldest = Math.Min(oldest, e);
            }
        }

        Pool.Release(oldest);
    }

    private static void Increment(Dictionary<long, int> counts, long key) =>
        counts[key] = counts.GetValueOrDefault(key) + 1;

    private static void Decrement(Dictionary<long, int> counts, long key)
    {
        var n = counts[key] - 1;
        if (n == 0)
        {
            counts.Remove(key);
        }
        else
        {
            counts[key] = n;
        }
    }

    public WriteTransaction BeginWrite() => BeginWrite(Timeout.InfiniteTimeSpan);

    public WriteTransaction BeginWrite(TimeSpan timeout)
    {
        ThrowIfDisposed();
        if (!_writeLock.Wait(timeout))
        {
            throw new TimeoutException($"No write transaction could start within {timeout}: another write transaction is still open.");
        }

        try
        {
            ThrowIfDisposed();
            if (ReadOnlyReason is { } readOnly)
            {
                throw new DiskFullException(readOnly.Path, readOnly);
            }

            if (Journal.Failure is { } failure)
            {
                throw JournalWriter.FailedEarlier(failure);
            }

            if (PageTable.VersionCount >= 4L * Options.FlushThresholdPages)
            {
                // Backpressure: the flusher fell behind the writers; catch up before adding more
                // scratch memory (a no-op when an old reader is what holds the pages back).
                FlushCore();
            }

            if (Pool.HasRetired)
            {
                ReleaseRetired();
            }

            return new WriteTransaction(this, LastCommitted, BeginEpoch());
        }
        catch
        {
            _writeLock.Release();
            throw;
        }
    }

    /// <summary>
    /// Publishes a prepared transaction: its pages join the page table (visible to the next
    /// writer at once, to readers once durable) and its record goes to the journal writer.
    /// Called with the write lock held; releases it.
    /// </summary>
    internal CommitHandle Publish(long transactionId, Dictionary<long, byte[]> pages, JournalRecord record)
    {
        Task durable;
        try
        {
            lock (PageTable.Lock)
            {
                PageTable.Add(transactionId, pages);
                Volatile.Write(ref _lastCommitted, transactionId);
            }

            durable = Journal.Enqueue(record);
        }
        finally
        {
            _writeLock.Release();
        }

        if (PageTable.VersionCount >= Options.FlushThresholdPages)
        {
            _flushSignal.Set();
        }

        return new CommitHandle(transactionId, durable);
    }

    internal void ReleaseWriteLock() => _writeLock.Release();

    /// <summary>
    /// Adaptive compression: after a record that LZ4 could not shrink by an eighth (random values),
    /// the next 15 skip the attempt. Only the writer (under the write lock) touches this.
    /// </summary>
    internal bool ShouldCompress()
    {
        if (_compressionSkips > 0)
        {
            _compressionSkips--;
            return false;
        }

        return true;
    }

    internal void ReportCompression(bool helped) => _compressionSkips = helped ? 0 : 15;

    private void OnDurable(long transactionId)
    {
        lock (_readersLock)
        {
            Volatile.Write(ref _lastDurable, transactionId);
        }
    }

    private void ThrowIfDisposed() => ObjectDisposedException.ThrowIf(_disposed, this);

    public EnvironmentStats GetStats()
    {
        ThrowIfDisposed();
        long oldest;
        lock (_readersLock)
        {
            oldest = OldestReaderLocked();
        }

        using var tx = BeginRead();
        var state = tx.ReadState();

        return new EnvironmentStats
        {
            LastCommittedTransactionId = LastCommitted,
            LastDurableTransactionId = LastDurable,
            FlushedTransactionId = DataFile.FlushedTransactionId,
            AllocatedPages = state.NextPage,
            FreePages = state.FreePages,
            UsedPages = state.NextPage - state.FreePages,
            DataFileSize = DataFile.Length,
            JournalSize = Journal.TotalSize,
            ScratchPageVersions = PageTable.VersionCount,
            OldestActiveReaderTransactionId = oldest,
            FlushCount = Interlocked.Read(ref _flushCount),
        };
    }

    /// <summary>The high-water mark of the state in the data file: no flushed page lies at or beyond it.</summary>
    private unsafe long FlushedHighWater()
    {
        var state = new Span<byte>(DataFile.PagePointer(Paging.Constants.StatePage, out _), Paging.Constants.PageSize);
        return Paging.StateHeader.Of(state).NextPage;
    }

    private long OldestReaderLocked()
    {
        var oldest = -1L;
        foreach (var (snapshot, _) in _readers)
        {
            if (oldest < 0 || snapshot < oldest)
            {
                oldest = snapshot;
            }
        }

        return oldest;
    }

    /// <summary>
    /// Tests only: stops like a killed process would, without flushing: the journal stays the only
    /// copy of recent transactions and the headers stay as they were.
    /// </summary>
    internal void DisposeWithoutFlush()
    {
        _writeLock.Wait();
        _disposed = true;
        _stop.Cancel();
        _flushSignal.Set();
        _flusher.Join();
        Journal.Dispose();
        DataFile.Dispose();
        _lockFile.Dispose();
    }

    public void Dispose()
    {
        if (_disposed)
        {
            return;
        }

        // Wait for an open writer to finish, then refuse new ones.
        _writeLock.Wait();
        _disposed = true;
        long highWater = 0;
        try
        {
            _stop.Cancel();
            _flushSignal.Set();
            _flusher.Join();
            Journal.Dispose();
            if (Journal.Failure is null && ReadOnlyReason is null)
            {
                FlushCore();
                highWater = FlushedHighWater();
            }
        }
        finally
        {
            bool readersOpen;
            lock (_readersLock)
            {
                readersOpen = _readers.Count > 0;
                // Readers still open keep their maps, and the lock file, until the last one ends:
                // another environment opening the folder meanwhile could rewrite pages they read.
                _releaseWhenReadersEnd = readersOpen;
            }

            DataFile.Dispose(unmap: !readersOpen, trimToPages: readersOpen ? 0 : highWater);
            if (!readersOpen)
            {
                _lockFile.Dispose();
            }
            _flushSignal.Dispose();
            _stop.Dispose();

            // Writers queued behind us wake up and see the environment is disposed.
            _writeLock.Release();
        }
    }
}

/// <summary>What <see cref="StorageEnvironment.GetStats"/> reports.</summary>
public sealed record EnvironmentStats
{
    public long LastCommittedTransactionId { get; init; }

    public long LastDurableTransactionId { get; init; }

    public long FlushedTransactionId { get; init; }

    /// <summary>Pages below the high-water mark (in use or free).</summary>
    public long AllocatedPages { get; init; }

    public long UsedPages { get; init; }

    public long FreePages { get; init; }

    public long DataFileSize { get; init; }

    public long JournalSize { get; init; }

    /// <summary>Committed page versions waiting in scratch memory for the flusher.</summary>
    public int ScratchPageVersions { get; init; }

    /// <summary>Snapshot of the oldest open read transaction, or -1 when none is open.</summary>
    public long OldestActiveReaderTransactionId { get; init; }

    public long FlushCount { get; init; }
}

/// <summary>A transaction handed to the journal; <see cref="Durable"/> completes once it is on disk.</summary>
public sealed class CommitHandle
{
    internal CommitHandle(long transactionId, Task durable)
    {
        TransactionId = transactionId;
        Durable = durable;
    }

    public long TransactionId { get; }

    public Task Durable { get; }

    public void Wait() => Durable.GetAwaiter().GetResult();
}
