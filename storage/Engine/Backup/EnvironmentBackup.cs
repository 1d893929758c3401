using Jackdaw.Storage.Engine.Backup;
using Jackdaw.Storage.Engine.Journal;
using Jackdaw.Storage.Engine.Paging;

namespace Jackdaw.Storage.Engine;

/// <summary>
/// One backup of a <see cref="StorageEnvironment"/> (<see cref="StorageEnvironment.BeginBackup"/>):
/// exactly one Write* call, which writes one self-describing stream (formats in
/// docs/architecture.md §3, "Backups") and leaves <see cref="Transaction"/> open at the last
/// transaction the stream covers, until <see cref="Dispose"/>. Writers are never blocked.
/// <para>
/// A full backup copies the data file's pages as they are, with no reader open (so scratch memory
/// does not grow however long the copy takes), while the journal records after the data file's
/// flushed transaction F are kept; then it opens the read transaction at the last durable D and
/// appends the records (F, D]. A page may change while it is copied, but only to a version at or
/// before D (the flusher writes nothing newer than the last durable, and D is taken after the copy):
/// so every byte holds its value as of some transaction in [F, D], and replaying the records
/// (F, D] over it gives the state at D, by the argument recovery relies on (<c>Recovery.Apply</c>).
/// </para>
/// </summary>
public sealed class EnvironmentBackup : IDisposable
{
    /// <summary>Default cap on one merged record of a minimal incremental backup.</summary>
    public const long DefaultMaxMergedBytes = 512L * 1024 * 1024;

    private const int PagesPerRun = BackupChunkHeader.MaxRunBytes / Constants.PageSize;

    private readonly StorageEnvironment _environment;
    private ReadTransaction? _transaction;
    private long _maxMergedBytes = DefaultMaxMergedBytes;
    private bool _started;

    internal EnvironmentBackup(StorageEnvironment environment)
    {
        _environment = environment;
    }

    /// <summary>Cap on the payload of one merged record of a minimal incremental (at least 1 MiB + 12 bytes).</summary>
    public long MaxMergedBytes
    {
        get => _maxMergedBytes;
        set
        {
            ArgumentOutOfRangeException.ThrowIfLessThan(value, BackupChunkHeader.MaxRunBytes + 12L);
            _maxMergedBytes = value;
        }
    }

    /// <summary>
    /// After a Write*: a read transaction at the last transaction the stream covers (read your own trees
    /// there). It pins that snapshot (the flusher cannot pass it) until the backup is disposed.
    /// </summary>
    public ReadTransaction Transaction => _transaction ?? throw new InvalidOperationException("Nothing was written yet: call WriteFull, WriteIncremental or WriteMinimalIncremental first.");

    /// <summary>The last transaction the stream covers.</summary>
    public long TransactionId => Transaction.Id;

    /// <summary>The data file's pages, then the journal records after the transaction they were copied at.</summary>
    public void WriteFull(Stream destination, BackupProgress progress, CancellationToken cancel)
    {
        Start(destination, progress);
        var flushed = _environment.PinJournalsAfterFlushed();
        try
        {
            var writer = new BackupStreamWriter(destination, progress, cancel);
            writer.WriteHeader(BackupKind.Full, flushed, 0);
            var pages = CopyDataFile(writer);
            OpenTransaction();
            var records = WriteRecords(writer, flushed);
            writer.WriteEnd(TransactionId, pages, records);
        }
        catch
        {
            CloseTransaction();
            throw;
        }
        finally
        {
            _environment.UnpinJournals(flushed);
        }
    }

    /// <summary>The journal records (<paramref name="afterTransactionId"/>, last durable], as the journal stored them.</summary>
    public void WriteIncremental(long afterTransactionId, Stream destination, BackupProgress progress, CancellationToken cancel) =>
        WriteIncremental(afterTransactionId, destination, progress, cancel, minimal: false);

    /// <summary>
    /// The newest version, as of the last durable transaction, of every page the journal records after
    /// <paramref name="afterTransactionId"/> touched, merged into records of at most <see cref="MaxMergedBytes"/>.
    /// A restore reaches the last transaction only at the end of the stream (it cannot stop inside it).
    /// </summary>
    public void WriteMinimalIncremental(long afterTransactionId, Stream destination, BackupProgress progress, CancellationToken cancel) =>
        WriteIncremental(afterTransactionId, destination, progress, cancel, minimal: true);

    /// <summary>
    /// While this backup is open: sets <see cref="StorageEnvironment.JournalRetention"/> to
    /// min(<see cref="TransactionId"/>, <paramref name="otherChainsNeedAfter"/>). Safe for the records after
    /// <see cref="TransactionId"/>: the open transaction keeps the flusher (which deletes journals) from
    /// passing it. An earlier <paramref name="otherChainsNeedAfter"/> whose records are gone already is
    /// left out: that chain's next file is a snapshot anyway, and this chain must not fail for it.
    /// </summary>
    public void RetainJournals(long? otherChainsNeedAfter = null)
    {
        if (otherChainsNeedAfter is { } other && other < TransactionId)
        {
            try
            {
                _environment.RetainJournalsAfter(other);
                return;
            }
            catch (JournalsUnavailableException)
            {
                // Gone: keep what this chain needs.
            }
        }

        _environment.RetainJournalsAfter(TransactionId);
    }

    public void Dispose() => CloseTransaction();

    private void WriteIncremental(long after, Stream destination, BackupProgress progress, CancellationToken cancel, bool minimal)
    {
        ArgumentOutOfRangeException.ThrowIfNegative(after);
        Start(destination, progress);
        _environment.PinJournals(after);
        try
        {
            OpenTransaction();
            if (after > TransactionId)
            {
                throw new ArgumentOutOfRangeException(nameof(after), after, $"The last durable transaction is {TransactionId}: an incremental backup cannot start after it.");
            }

            var writer = new BackupStreamWriter(destination, progress, cancel);
            writer.WriteHeader(minimal ? BackupKind.MinimalIncremental : BackupKind.Incremental, after, TransactionId);
            if (minimal)
            {
                var (pages, records) = WriteMergedPages(writer, after);
                writer.WriteEnd(TransactionId, pages, records);
            }
            else
            {
                writer.WriteEnd(TransactionId, 0, WriteRecords(writer, after));
            }
        }
        catch
        {
            CloseTransaction();
            throw;
        }
        finally
        {
            _environment.UnpinJournals(after);
        }
    }

    private void Start(Stream destination, BackupProgress progress)
    {
        ArgumentNullException.ThrowIfNull(destination);
        ArgumentNullException.ThrowIfNull(progress);
        if (_started)
        {
            throw new InvalidOperationException("An EnvironmentBackup writes one stream; begin another backup for the next one.");
        }

        if (_environment.ReadOnlyReason is { } readOnly)
        {
            // Its journal records since the flushed transaction are only in memory and in journal files
            // the journal writer does not own.
            throw new StorageException("The environment opened read-only (recovery could not write) and cannot be backed up until it is reopened with space to write.", readOnly);
        }

        _started = true;
    }

    private void OpenTransaction() => _transaction = _environment.BeginRead();

    private void CloseTransaction()
    {
        _transaction?.Dispose();
        _transaction = null;
    }

    /// <summary>
    /// Copies the data file's pages from the state page up to the high-water mark, through a handle of
    /// its own (no reader is open and the environment may close meanwhile: a short read gives zeros and
    /// the read transaction after it fails). All-zero pages are left out: a restore starts from zeros.
    /// </summary>
    private long CopyDataFile(BackupStreamWriter writer)
    {
        long highWater;
        using (var snapshot = _environment.BeginRead())
        {
            // At or after the flushed transaction, and the high-water mark never goes down.
            highWater = snapshot.ReadState().NextPage;
        }

        using var file = new FileStream(_environment.DataFile.FilePath, FileMode.Open, FileAccess.Read, FileShare.ReadWrite | FileShare.Delete, 1, FileOptions.None);
        var buffer = new byte[BackupChunkHeader.MaxRunBytes];
        long copied = 0;
        for (var start = Constants.StatePage; start < highWater; start += PagesPerRun)
        {
            var count = (int)Math.Min(PagesPerRun, highWater - start);
            var bytes = buffer.AsSpan(0, count * Constants.PageSize);
            var read = RandomAccess.Read(file.SafeFileHandle, bytes, start * Constants.PageSize);
            bytes[read..].Clear();
            var runStart = -1;
            for (var i = 0; i <= count; i++)
            {
                var zero = i == count || !bytes.Slice(i * Constants.PageSize, Constants.PageSize).ContainsAnyExcept((byte)0);
                if (!zero && runStart < 0)
                {
                    runStart = i;
                }
                else if (zero && runStart >= 0)
                {
                    writer.WritePages(start + runStart, bytes[(runStart * Constants.PageSize)..(i * Constants.PageSize)]);
                    copied += i - runStart;
                    runStart = -1;
                }
            }
        }

        return copied;
    }

    /// <summary>
    /// The journal records (<paramref name="after"/>, <see cref="TransactionId"/>] from the retained and
    /// live journal files, oldest first; each file is read up to its first invalid record, and the
    /// transactions must follow each other without a gap. Returns how many were written.
    /// </summary>
    private long WriteRecords(BackupStreamWriter writer, long after)
    {
        byte[] buffer = [];
        return ForEachRecord(after, scanner =>
        {
            var length = scanner.ReadRecord(ref buffer);
            if (length >= 0)
            {
                writer.WriteRecord(scanner.Header.TransactionId, buffer.AsSpan(0, length));
            }

            return length >= 0;
        });
    }

    /// <summary>
    /// Calls <paramref name="take"/> for each record (<paramref name="after"/>, <see cref="TransactionId"/>]
    /// in order (false: the record is invalid, the file ends there); throws <see cref="JournalsUnavailableException"/> on a gap.
    /// </summary>
    private long ForEachRecord(long after, Func<JournalScanner, bool> take)
    {
        var last = TransactionId;
        var expected = after + 1;
        foreach (var paths in _environment.Journal.FilesAfter(after))
        {
            if (expected > last)
            {
                break;
            }

            using var scanner = JournalScanner.OpenFirstExisting(paths);
            while (scanner is not null && expected <= last && scanner.Next())
            {
                var id = scanner.Header.TransactionId;
                if (id < expected)
                {
                    continue;
                }

                if (id != expected || !take(scanner))
                {
                    break;
                }

                expected++;
            }
        }

        if (expected <= last)
        {
            throw new JournalsUnavailableException(after, $"The journal records after transaction {after} are not all kept: transaction {expected} is missing from the journal files (up to {last} was asked for). Take a full backup.");
        }

        return last - after;
    }

    /// <summary>
    /// The minimal incremental's body. Which pages: every entry of the records (after, D]. Their content
    /// as of D is what a flush up to D would leave, and D is the open transaction, which the flusher
    /// cannot pass: the data file's bytes for a page with no version at or before D in the page table,
    /// then the table's versions in transaction order (a newer single page inside an older overflow
    /// run wins, as in a flush). A page only the data file holds was flushed at or after its touch
    /// (> after), so every table version then is newer than after and touched too, and is written later.
    /// </summary>
    private (long Pages, long Records) WriteMergedPages(BackupStreamWriter writer, long after)
    {
        var touched = new Dictionary<long, int>();
        byte[] stored = [];
        byte[] raw = [];
        ForEachRecord(after, scanner =>
        {
            var h = scanner.Header;
            if (!scanner.ReadPayload(ref stored))
            {
                return false;
            }

            if (!JournalScanner.TryDecode(h, stored.AsSpan(0, h.PayloadSize), ref raw, out var payload) || !Recovery.AddTouchedPages(payload, h, touched))
            {
                throw new StorageCorruptedException(scanner.Path, $"Journal record of transaction {h.TransactionId} passed its checksum but its page list is malformed.");
            }

            return true;
        });

        var snapshot = TransactionId;
        var fromFile = new List<(long Page, int Length)>();
        var fromTable = new List<(long TransactionId, long Page, byte[] Data)>();
        foreach (var (page, length) in touched)
        {
            if (_environment.PageTable.TryGetVersion(page, snapshot) is { } version)
            {
                fromTable.Add((version.TransactionId, page, version.Data));
            }
            else
            {
                fromFile.Add((page, length));
            }
        }

        fromFile.Sort();
        fromTable.Sort((a, b) => a.TransactionId != b.TransactionId ? a.TransactionId.CompareTo(b.TransactionId) : a.Page.CompareTo(b.Page));

        // Entries of at most 1 MiB (a long overflow run is cut into pieces), in write order.
        var entries = new List<(long Page, int Length, byte[]? Data, int Offset)>();
        foreach (var (page, length) in fromFile)
        {
            AddPieces(entries, page, length, null);
        }

        foreach (var (_, page, data) in fromTable)
        {
            AddPieces(entries, page, data.Length, data);
        }

        using var file = new FileStream(_environment.DataFile.FilePath, FileMode.Open, FileAccess.Read, FileShare.ReadWrite | FileShare.Delete, 1, FileOptions.None);
        var buffer = new byte[BackupChunkHeader.MaxRunBytes];
        long pages = 0;
        long records = 0;
        for (var first = 0; first < entries.Count;)
        {
            var end = first;
            long size = 0;
            while (end < entries.Count && size + 12 + entries[end].Length <= MaxMergedBytes)
            {
                size += 12 + entries[end].Length;
                end++;
            }

            writer.BeginMerged(end - first, size);
            for (var i = first; i < end; i++)
            {
                var (page, length, data, offset) = entries[i];
                ReadOnlySpan<byte> bytes;
                if (data is not null)
                {
                    bytes = data.AsSpan(offset, length);
                }
                else
                {
                    var read = RandomAccess.Read(file.SafeFileHandle, buffer.AsSpan(0, length), page * Constants.PageSize);
                    buffer.AsSpan(read, length - read).Clear();
                    bytes = buffer.AsSpan(0, length);
                }

                writer.WriteMergedEntry(page, bytes);
                pages += length / Constants.PageSize;
            }

            writer.EndMerged();
            records++;
            first = end;
        }

        return (pages, records);
    }

    private static void AddPieces(List<(long Page, int Length, byte[]? Data, int Offset)> entries, long page, int length, byte[]? data)
    {
        for (var offset = 0; offset < length; offset += BackupChunkHeader.MaxRunBytes)
        {
            entries.Add((page + (offset / Constants.PageSize), Math.Min(BackupChunkHeader.MaxRunBytes, length - offset), data, offset));
        }
    }
}
