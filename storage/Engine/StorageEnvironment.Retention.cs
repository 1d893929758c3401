using Jackdaw.Storage.Engine.Backup;

namespace Jackdaw.Storage.Engine;

/// <summary>
/// Journal retention: which journal records are kept after they are flushed, for incremental backups.
/// What is kept is everything after min(<see cref="JournalRetention"/>, every pin a running backup
/// holds). Changes to it and the flusher's deletions are serialized by <see cref="_retentionLock"/>,
/// so a journal file can be deleted only while nothing the lock's holder promised needs it.
/// </summary>
public sealed partial class StorageEnvironment
{
    private readonly Lock _retentionLock = new();
    private readonly Dictionary<long, int> _pins = [];
    private long? _retention;

    /// <summary>
    /// Null: journal files are deleted once flushed (the default). Otherwise the journal records of
    /// every transaction after this id are kept (in this folder, across restarts and recovery) until the
    /// retention moves past them. Kept files are truncated to their records and renamed
    /// <c>retained.N</c>: on disk they cost the journal written since this id.
    /// </summary>
    public long? JournalRetention
    {
        get
        {
            lock (_retentionLock)
            {
                return _retention;
            }
        }
    }

    /// <summary>Opens a backup of this environment. Nothing is pinned until a Write* call.</summary>
    public EnvironmentBackup BeginBackup()
    {
        ThrowIfDisposed();
        return new EnvironmentBackup(this);
    }

    /// <summary>
    /// Keeps the journal records of every transaction after <paramref name="transactionId"/>, persisted
    /// in the folder before this returns. A forward move is always allowed; a move back (or the first
    /// call) only while those records are still there, else <see cref="JournalsUnavailableException"/>.
    /// </summary>
    public void RetainJournalsAfter(long transactionId)
    {
        ArgumentOutOfRangeException.ThrowIfNegative(transactionId);
        ThrowIfDisposed();
        ThrowIfReadOnly();
        lock (_retentionLock)
        {
            var forward = _retention is { } current && transactionId >= current;
            if (!forward && !JournalsAvailableAfter(transactionId))
            {
                throw Unavailable(transactionId);
            }

            JournalRetentionFile.Write(Options.Path, transactionId, Options.Io);
            _retention = transactionId;
            Journal.DropRetained(KeepJournalsAfterLocked());
        }
    }

    /// <summary>Stops retention (persisted) and deletes the journal files only retention kept.</summary>
    public void StopRetainingJournals()
    {
        ThrowIfDisposed();
        ThrowIfReadOnly();
        lock (_retentionLock)
        {
            JournalRetentionFile.Write(Options.Path, null, Options.Io);
            _retention = null;
            Journal.DropRetained(KeepJournalsAfterLocked());
        }
    }

    /// <summary>
    /// Whether the journal records of every durable transaction after <paramref name="transactionId"/>
    /// are on disk now (whether an incremental backup after it can work). Without retention they go
    /// once flushed, so this is usually true only for recent transactions.
    /// </summary>
    public bool JournalsAvailableAfter(long transactionId)
    {
        ThrowIfDisposed();
        return transactionId >= LastDurable || (transactionId >= 0 && Journal.EarliestAvailable() <= transactionId + 1);
    }

    /// <summary>Keeps the records after <paramref name="after"/> until <see cref="UnpinJournals"/>; throws when they are gone already.</summary>
    internal void PinJournals(long after)
    {
        lock (_retentionLock)
        {
            if (!JournalsAvailableAfter(after))
            {
                throw Unavailable(after);
            }

            Increment(_pins, after);
        }
    }

    /// <summary>Keeps the records after the data file's flushed transaction, which it returns, until <see cref="UnpinJournals"/>.</summary>
    internal long PinJournalsAfterFlushed()
    {
        lock (_retentionLock)
        {
            // Nothing after it can have been deleted: a flush deletes files up to the older header only.
            var flushed = DataFile.FlushedTransactionId;
            Increment(_pins, flushed);
            return flushed;
        }
    }

    internal void UnpinJournals(long after)
    {
        lock (_retentionLock)
        {
            Decrement(_pins, after);
            if (!_disposed && ReadOnlyReason is null)
            {
                Journal.DropRetained(KeepJournalsAfterLocked());
            }
        }
    }

    /// <summary>The flusher's half: deletes (or retains) the journal files the data file no longer needs.</summary>
    private void DeleteFlushedJournals()
    {
        lock (_retentionLock)
        {
            Journal.DeleteFlushed(Math.Min(DataFile.HeaderA, DataFile.HeaderB), KeepJournalsAfterLocked());
        }
    }

    private long? KeepJournalsAfterLocked()
    {
        var keep = _retention;
        foreach (var (after, _) in _pins)
        {
            keep = keep is { } k ? Math.Min(k, after) : after;
        }

        return keep;
    }

    private JournalsUnavailableException Unavailable(long after)
    {
        var earliest = Journal.EarliestAvailable();
        var kept = earliest == long.MaxValue ? "no journal records are kept" : $"the earliest kept is transaction {earliest}";
        return new JournalsUnavailableException(after, $"The journal records after transaction {after} were not kept ({kept}; the last durable transaction is {LastDurable}): take a full backup.");
    }

    private void ThrowIfReadOnly()
    {
        if (ReadOnlyReason is { } readOnly)
        {
            throw new DiskFullException(readOnly.Path, readOnly);
        }
    }
}
