using System.Globalization;
using Jackdaw.Storage.Engine.Native;

namespace Jackdaw.Storage.Engine.Journal;

/// <summary>
/// Appends records to the current journal file on a dedicated thread. Records queued while a
/// write is in flight are written together with one gather write and one fdatasync (group
/// commit), always in transaction order. A record is acknowledged (its handle completed) only
/// after the fdatasync that covers it has returned.
/// </summary>
internal sealed partial class JournalWriter : IDisposable
{
    public const string FilePrefix = "journal.";

    /// <summary>
    /// A journal file is preallocated (so a later write never runs out of space), but the blocks of a
    /// preallocated file are "unwritten": the first write to each turns it into a written extent, a
    /// metadata change that makes every fdatasync write metadata too (the inode here, where ext4 runs
    /// without a journal; a journal commit where it has one). So the writer zeroes the file ahead of
    /// its records, a chunk at a time, in the same gather write: only one sync per chunk changes
    /// metadata. Here that cut the CPU of a 6 KB write + fdatasync from 115-149 to 80-84 µs
    /// (perf/load/fsync-ab.py, perf/RESULTS.md issue 5). A quarter MiB keeps the one commit in ~40
    /// that carries the zeros from writing much more than the others.
    /// </summary>
    private const int ZeroChunk = 256 * 1024;

    private static readonly byte[] Zeros = new byte[ZeroChunk];

    private readonly string _folder;
    private readonly long _maxFileSize;
    private readonly Action<long> _onDurable;
    private readonly object _queueLock = new();
    private readonly List<(JournalRecord Record, TaskCompletionSource Done)> _queue = [];
    private readonly List<JournalFile> _files = [];
    private readonly Thread _thread;
    private JournalFile? _current;
    private bool _stopping;
    private Exception? _failure;
    private readonly StorageIo _io;

    // Set when a failed write could not be undone: its records may or may not be replayed.
    private bool _outcomeUnknown;

    private sealed class JournalFile(string path, long sequence, FileStream stream, long capacity)
    {
        public string Path { get; } = path;

        public long Sequence { get; } = sequence;

        public FileStream Stream { get; } = stream;

        public long Capacity { get; } = capacity;

        public long Position { get; set; }

        /// <summary>Bytes from the start that have been written (records or zeros): see <see cref="ZeroChunk"/>.</summary>
        public long Written { get; set; }

        public long FirstTransactionId { get; set; } = -1;

        public long LastTransactionId { get; set; } = -1;

        public bool Closed { get; set; }
    }

    public JournalWriter(string folder, long maxFileSize, long nextSequence, Action<long> onDurable, StorageIo io, List<RetainedJournal> retained)
    {
        _io = io;
        _retained = retained;
        _folder = folder;
        _maxFileSize = Math.Max(maxFileSize, 64 * 1024);
        _onDurable = onDurable;
        NextSequence = nextSequence;
        _thread = new Thread(Run) { IsBackground = true, Name = "Jackdaw journal writer" };
        _thread.Start();
    }

    public long NextSequence { get; private set; }

    public static string FileNameFor(long sequence) => FilePrefix + sequence.ToString("D10", CultureInfo.InvariantCulture);

    /// <summary>Journal files in the folder (or, with <see cref="RetainedPrefix"/>, retained ones), oldest first.</summary>
    public static List<(long Sequence, string Path)> ListFiles(string folder, string prefix = FilePrefix)
    {
        var result = new List<(long, string)>();
        foreach (var path in Directory.EnumerateFiles(folder, prefix + "*"))
        {
            var suffix = System.IO.Path.GetFileName(path).Substring(prefix.Length);
            if (long.TryParse(suffix, NumberStyles.None, CultureInfo.InvariantCulture, out var seq))
            {
                result.Add((seq, path));
            }
        }

        result.Sort((a, b) => a.Item1.CompareTo(b.Item1));
        return result;
    }

    public Exception? Failure => Volatile.Read(ref _failure);

    /// <summary>The error for a commit after the journal failed: a full disk stays a <see cref="DiskFullException"/>.</summary>
    internal static StorageException FailedEarlier(Exception failure) => failure is DiskFullException full
        ? new DiskFullException(full.Path, failure)
        : new StorageException("The journal failed earlier; the environment must be reopened.", failure);

    public long TotalSize
    {
        get
        {
            lock (_files)
            {
                long total = 0;
                foreach (var f in _files)
                {
                    total += f.Capacity;
                }

                return total;
            }
        }
    }

    public Task Enqueue(JournalRecord record)
    {
        var done = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        lock (_queueLock)
        {
            if (_failure is not null)
            {
                record.Release();
                done.SetException(FailedEarlier(_failure));
                return done.Task;
            }

            _queue.Add((record, done));
            Monitor.Pulse(_queueLock);
        }

        return done.Task;
    }

    private void Run()
    {
        var batch = new List<(JournalRecord Record, TaskCompletionSource Done)>();
        var buffers = new List<ReadOnlyMemory<byte>>();
        while (true)
        {
            lock (_queueLock)
            {
                while (_queue.Count == 0 && !_stopping)
                {
                    Monitor.Wait(_queueLock);
                }

                if (_queue.Count == 0)
                {
                    return;
                }

                batch.AddRange(_queue);
                _queue.Clear();
            }

            var durable = 0;
            Exception? failure = null;
            try
            {
                WriteBatch(batch, buffers, ref durable);
            }
            catch (Exception e)
            {
                failure = e;
            }

            // Records synced before a failure (in an earlier file of this batch) are durable:
            // they are acknowledged, not reported failed.
            CompleteDurable(batch, durable);
            if (failure is not null)
            {
                lock (_queueLock)
                {
                    _failure = failure;
                    batch.AddRange(_queue);
                    _queue.Clear();
                }

                foreach (var (record, done) in batch.Skip(durable))
                {
                    record.Release();
                    done.TrySetException(Failed(failure));
                }
            }

            batch.Clear();
        }
    }

    /// <summary>The error a commit of a failed write gets: whether it was applied is said only when known.</summary>
    private StorageException Failed(Exception failure)
    {
        const string Unknown = " Its journal record could not be invalidated either: after the environment is reopened, the transaction may or may not be there.";
        return failure is DiskFullException full
            ? new DiskFullException(full.Path, _outcomeUnknown ? $"The disk holding '{full.Path}' is full.{Unknown}" : null, failure)
            : new StorageException("Writing the journal failed; the transaction is not durable and the environment must be reopened." + (_outcomeUnknown ? Unknown : string.Empty), failure);
    }

    /// <summary>Publishes the first <paramref name="count"/> records of the batch as durable and completes them.</summary>
    private void CompleteDurable(List<(JournalRecord Record, TaskCompletionSource Done)> batch, int count)
    {
        if (count == 0)
        {
            return;
        }

        _onDurable(batch[count - 1].Record.TransactionId);
        for (var i = 0; i < count; i++)
        {
            var (record, done) = batch[i];
            record.Release();
            done.TrySetResult();
        }
    }

    /// <summary>
    /// Writes the batch, file by file, syncing each; <paramref name="durable"/> counts the records
    /// synced so far, so a failure in a later file leaves the earlier ones acknowledged.
    /// </summary>
    private void WriteBatch(List<(JournalRecord Record, TaskCompletionSource Done)> batch, List<ReadOnlyMemory<byte>> buffers, ref int durable)
    {
        var i = 0;
        while (i < batch.Count)
        {
            var file = EnsureFile(batch[i].Record.Length);
            buffers.Clear();
            long size = 0;
            while (i < batch.Count && file.Position + size + batch[i].Record.Length <= file.Capacity)
            {
                var r = batch[i].Record;
                buffers.Add(r.Buffer.AsMemory(0, r.Length));
                size += r.Length;
                if (file.FirstTransactionId < 0)
                {
                    file.FirstTransactionId = r.TransactionId;
                }

                file.LastTransactionId = r.TransactionId;
                i++;
            }

            var end = file.Position + size;
            if (end > file.Written)
            {
                var zeroed = Math.Min(file.Capacity, (end + ZeroChunk - 1) & ~(long)(ZeroChunk - 1));
                if (zeroed > end)
                {
                    buffers.Add(Zeros.AsMemory(0, (int)(zeroed - end)));
                }

                file.Written = Math.Max(zeroed, end);
            }

            var start = file.Position;
            try
            {
                _io.Write(file.Stream.SafeFileHandle, buffers, start, file.Path);
                _io.DataSync(file.Stream);
            }
            catch
            {
                // Some of the chunk may be on disk already (a short write, or a write whose sync
                // failed): recovery would replay a whole record of it, and a commit reported failed
                // would come back. Zero the chunk's first header (space already allocated) so
                // recovery stops before it; if even that fails, nobody can say what survives.
                _outcomeUnknown = !TryInvalidate(file, start);
                throw;
            }

            file.Position = end;
            durable = i;
        }
    }

    /// <summary>Zeroes the record header at <paramref name="position"/> and syncs; false when that fails too.</summary>
    private bool TryInvalidate(JournalFile file, long position)
    {
        try
        {
            _io.Write(file.Stream.SafeFileHandle, Zeros.AsSpan(0, JournalRecordHeader.Size), position, file.Path);
            _io.DataSync(file.Stream);
            return true;
        }
        catch (Exception e) when (e is IOException or StorageException)
        {
            return false;
        }
    }

    private JournalFile EnsureFile(int recordLength)
    {
        if (_current is not null && _current.Position + recordLength <= _current.Capacity)
        {
            return _current;
        }

        if (_current is not null)
        {
            lock (_files)
            {
                _current.Closed = true;
            }
        }

        var sequence = NextSequence++;
        var path = System.IO.Path.Combine(_folder, FileNameFor(sequence));
        var capacity = Math.Max(_maxFileSize, (recordLength + 4095L) & ~4095L);
        var stream = new FileStream(path, FileMode.CreateNew, FileAccess.ReadWrite, FileShare.Read, 1, FileOptions.None);
        try
        {
            _io.Preallocate(stream, capacity);
            _io.DataSync(stream);
            // The new file's directory entry must be durable before any record in it is acknowledged.
            _io.SyncFolder(_folder);
        }
        catch
        {
            // A journal file that could not be made ready holds no record: remove it, so a full
            // disk is not made fuller and the next attempt can use the same sequence number.
            stream.Dispose();
            File.Delete(path);
            NextSequence--;
            throw;
        }
        var file = new JournalFile(path, sequence, stream, capacity);
        lock (_files)
        {
            _files.Add(file);
        }

        _current = file;
        return file;
    }

    public void Dispose()
    {
        lock (_queueLock)
        {
            _stopping = true;
            Monitor.PulseAll(_queueLock);
        }

        _thread.Join();
        lock (_files)
        {
            foreach (var f in _files)
            {
                f.Stream.Dispose();
            }

            _files.Clear();
        }
    }
}
