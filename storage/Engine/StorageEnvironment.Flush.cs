namespace Jackdaw.Storage.Engine;

public sealed partial class StorageEnvironment
{
    /// <summary>Synchronously writes every durable committed page no reader still needs the old version of to the data file.</summary>
    public void Flush()
    {
        ThrowIfDisposed();
        FlushCore();
        if (Volatile.Read(ref _flushFailure) is { } failure)
        {
            throw new StorageException("Flushing the data file failed.", failure);
        }
    }

    private void FlusherLoop()
    {
        while (!_stop.IsCancellationRequested)
        {
            _flushSignal.WaitOne(Options.FlushInterval);
            if (_stop.IsCancellationRequested)
            {
                return;
            }

            try
            {
                FlushCore();
            }
            catch (Exception e)
            {
                // Retried next period; the journal still holds every transaction, so nothing is lost.
                Volatile.Write(ref _flushFailure, e);
            }
        }
    }

    /// <summary>
    /// Decides what to flush under the readers lock only (no I/O there), then writes outside any
    /// lock the writer or readers take. Serialized with itself by <see cref="_flushLock"/>.
    /// </summary>
    private void FlushCore()
    {
        if (ReadOnlyReason is not null)
        {
            // The overlay holds what the data file could not receive; the journal keeps it.
            return;
        }

        lock (_flushLock)
        {
            if (WriteFlushablePages() is not var (upTo, pages))
            {
                return;
            }

            DataFile.WriteHeader(upTo);
            var cut = new List<byte[]>(pages.Count);
            lock (PageTable.Lock)
            {
                foreach (var (number, version) in pages)
                {
                    PageTable.Cut(number, version, cut);
                }
            }

            RetireAndRelease(cut);

            DeleteFlushedJournals();
            Interlocked.Increment(ref _flushCount);
            Volatile.Write(ref _flushFailure, null);
        }
    }

    /// <summary>
    /// The first half of a flush: writes the newest version up to min(last durable, oldest reader) of
    /// every page in the page table to the data file and syncs it; null when there is nothing to flush.
    /// Caller holds <see cref="_flushLock"/>.
    /// </summary>
    private (long UpTo, List<(long Page, Paging.PageVersion Version)> Pages)? WriteFlushablePages()
    {
        long upTo;
        lock (_readersLock)
        {
            upTo = _lastDurable;
            var oldest = OldestReaderLocked();
            if (oldest >= 0 && oldest < upTo)
            {
                upTo = oldest;
            }
        }

        if (upTo <= DataFile.FlushedTransactionId)
        {
            return null;
        }

        var pages = PageTable.CollectFlushable(upTo);

        // Oldest version first: a newer single page inside an older overflow run must win.
        pages.Sort((a, b) => a.Version.TransactionId.CompareTo(b.Version.TransactionId));
        long end = 0;
        long highWater = long.MaxValue;
        foreach (var (number, version) in pages)
        {
            end = Math.Max(end, number + (version.Data.Length >> Paging.Constants.PageShift));
            if (number == Paging.Constants.StatePage)
            {
                highWater = Paging.StateHeader.Of(version.Data).NextPage;
            }
        }

        // Cheap invariant: nothing beyond the high-water mark of the state being flushed.
        if (end > highWater)
        {
            throw new StorageException($"Flush of transactions up to {upTo} holds pages up to {end} beyond the high-water mark {highWater}.");
        }

        DataFile.EnsureSize(end);
        foreach (var (number, version) in pages)
        {
            DataFile.Write(number, version.Data);
        }

        DataFile.Sync();
        return (upTo, pages);
    }

    /// <summary>
    /// Tests only: a flush cut short by a crash after its pages reached the data file and before its
    /// header was written. The data file then holds page versions newer than its header says, which
    /// recovery must replay the journal over. Follow with <see cref="DisposeWithoutFlush"/>.
    /// </summary>
    internal void FlushPagesWithoutHeader()
    {
        lock (_flushLock)
        {
            WriteFlushablePages();
        }
    }
}
