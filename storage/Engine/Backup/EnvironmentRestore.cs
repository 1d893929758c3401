using System.Buffers.Binary;
using System.Runtime.InteropServices;
using Jackdaw.Storage.Engine.Backup;
using Jackdaw.Storage.Engine.Journal;
using Jackdaw.Storage.Engine.Paging;

namespace Jackdaw.Storage.Engine;

/// <summary>
/// Restores a chain of backup streams into a new environment folder: <see cref="Create"/>, one
/// <see cref="ApplyFull"/>, any number of <see cref="ApplyIncremental"/> (each continuing exactly where
/// the last one ended), then <see cref="Complete"/>. The data file is built under
/// <c>data.jdb.restoring</c> and becomes <c>data.jdb</c> only in <see cref="Complete"/>, after it is
/// synced and its headers name the last transaction; until then (or when an apply fails, after which
/// the restore cannot go on) the folder holds nothing <see cref="StorageEnvironment.Open"/> would use,
/// and <see cref="Dispose"/> removes what it wrote. Memory stays bounded: pages are written as they
/// are read, a chunk at a time (1 MiB, or one journal record).
/// </summary>
public sealed class EnvironmentRestore : IDisposable
{
    private const string TempFileName = "data.jdb.restoring";

    private readonly string _folder;
    private readonly bool _createdFolder;
    private readonly FileStream _lockFile;
    private readonly StorageIo _io;
    private DataFile? _dataFile;
    private byte[] _raw = [];
    private bool _hasFull;
    private bool _failed;
    private bool _completed;

    private EnvironmentRestore(string folder, bool createdFolder, FileStream lockFile, DataFile dataFile, StorageIo io)
    {
        _folder = folder;
        _createdFolder = createdFolder;
        _lockFile = lockFile;
        _dataFile = dataFile;
        _io = io;
    }

    /// <summary>The last transaction restored so far (-1 before <see cref="ApplyFull"/>).</summary>
    public long TransactionId { get; private set; } = -1;

    /// <summary>Starts a restore into <paramref name="folder"/>, which must be absent or empty.</summary>
    public static EnvironmentRestore Create(string folder, StorageIo? io = null)
    {
        ArgumentException.ThrowIfNullOrEmpty(folder);
        io ??= StorageIo.Default;
        var created = !Directory.Exists(folder);
        if (!created && Directory.EnumerateFileSystemEntries(folder).Any())
        {
            throw new StorageException($"Cannot restore into '{folder}': the folder is not empty. Restore into a new or empty folder.");
        }

        Directory.CreateDirectory(folder);
        FileStream? lockFile = null;
        try
        {
            lockFile = new FileStream(Path.Combine(folder, "jackdaw.lock"), FileMode.OpenOrCreate, FileAccess.ReadWrite, FileShare.None, 1, FileOptions.None);
            var dataFile = DataFile.CreateEmpty(Path.Combine(folder, TempFileName), io);
            return new EnvironmentRestore(folder, created, lockFile, dataFile, io);
        }
        catch
        {
            lockFile?.Dispose();
            RemoveWritten(folder, created);
            throw;
        }
    }

    /// <summary>Applies a full backup stream: its pages, then its journal records. Must come first.</summary>
    public void ApplyFull(Stream source, CancellationToken cancel)
    {
        ArgumentNullException.ThrowIfNull(source);
        ThrowIfUnusable();
        if (_hasFull)
        {
            throw new InvalidOperationException("A full backup was applied already; only incremental ones can follow it.");
        }

        Apply(source, full: true, cancel);
        _hasFull = true;
    }

    /// <summary>
    /// Applies an incremental stream of either kind. It must continue exactly at <see cref="TransactionId"/>
    /// (else a <see cref="BackupStreamException"/> says the chain is broken, and where).
    /// </summary>
    public void ApplyIncremental(Stream source, CancellationToken cancel)
    {
        ArgumentNullException.ThrowIfNull(source);
        ThrowIfUnusable();
        if (!_hasFull)
        {
            throw new InvalidOperationException("Apply a full backup first: a restore starts from one.");
        }

        Apply(source, full: false, cancel);
    }

    /// <summary>
    /// Finishes the data file (its length covers the high-water mark; synced; both headers at
    /// <see cref="TransactionId"/>), renames it to <c>data.jdb</c> and syncs the folder: the folder then
    /// opens with <see cref="StorageEnvironment.Open"/>.
    /// </summary>
    public unsafe void Complete()
    {
        ThrowIfUnusable();
        if (!_hasFull)
        {
            throw new InvalidOperationException("Nothing to complete: no full backup was applied.");
        }

        var dataFile = _dataFile!;
        dataFile.EnsureSize(Constants.StatePage + 1);
        var state = new ReadOnlySpan<byte>(dataFile.PagePointer(Constants.StatePage, out _), Constants.PageSize);
        var magic = BinaryPrimitives.ReadUInt64LittleEndian(state[32..]);
        var stateTransaction = BinaryPrimitives.ReadInt64LittleEndian(state[40..]);
        var highWater = BinaryPrimitives.ReadInt64LittleEndian(state[48..]);
        if (magic != StateHeader.MagicValue || stateTransaction != TransactionId || highWater < Constants.FirstFreePage)
        {
            _failed = true;
            throw new StorageCorruptedException(dataFile.FilePath, $"The restored state page says transaction {stateTransaction} and high-water mark {highWater}, but the backups end at transaction {TransactionId}: the streams do not belong together.");
        }

        dataFile.EnsureSize(highWater);
        dataFile.Sync();
        dataFile.WriteHeader(TransactionId);
        dataFile.WriteHeader(TransactionId);
        dataFile.Dispose(unmap: true, trimToPages: highWater);
        _dataFile = null;
        File.Move(Path.Combine(_folder, TempFileName), Path.Combine(_folder, DataFile.FileName), overwrite: false);
        _io.SyncFolder(_folder);
        _completed = true;
        _lockFile.Dispose();
    }

    public void Dispose()
    {
        if (_completed)
        {
            return;
        }

        _completed = true;
        _dataFile?.Dispose();
        _dataFile = null;
        _lockFile.Dispose();
        RemoveWritten(_folder, _createdFolder);
    }

    private static void RemoveWritten(string folder, bool createdFolder)
    {
        File.Delete(Path.Combine(folder, TempFileName));
        File.Delete(Path.Combine(folder, "jackdaw.lock"));
        if (createdFolder && !Directory.EnumerateFileSystemEntries(folder).Any())
        {
            Directory.Delete(folder);
        }
    }

    private void ThrowIfUnusable()
    {
        ObjectDisposedException.ThrowIf(_completed, this);
        if (_failed)
        {
            throw new InvalidOperationException("An earlier apply failed part-way: this restore cannot go on. Dispose it and restore again.");
        }
    }

    private void Apply(Stream source, bool full, CancellationToken cancel)
    {
        var reader = new BackupStreamReader(source);
        try
        {
            var header = reader.ReadHeader();
            if (full != (header.Kind == BackupKind.Full))
            {
                throw reader.Damaged(full
                    ? $"This is an incremental backup (after transaction {header.AfterTransactionId}); a restore starts with a full one."
                    : "This is a full backup; a restore takes one full backup, then only incremental ones.");
            }

            if (!full && header.AfterTransactionId != TransactionId)
            {
                throw reader.Damaged($"The chain is broken: this incremental backup continues after transaction {header.AfterTransactionId} (up to {header.LastTransactionId}), but the restore is at transaction {TransactionId}. A backup in between is missing, or this one belongs to another chain.");
            }

            TransactionId = ApplyChunks(reader, header, cancel);
        }
        catch
        {
            _failed = true;
            throw;
        }
    }

    /// <summary>Applies every chunk up to the end chunk, checking each against the header and the totals; returns the last transaction.</summary>
    private long ApplyChunks(BackupStreamReader reader, BackupStreamHeader header, CancellationToken cancel)
    {
        var dataFile = _dataFile!;
        var next = header.AfterTransactionId + 1;
        long pages = 0;
        long records = 0;
        byte[] buffer = [];
        while (true)
        {
            cancel.ThrowIfCancellationRequested();
            var chunk = reader.NextChunk();
            var part = BackupStreamReader.Describe(chunk);
            switch (chunk.Type)
            {
                case BackupChunkType.Pages when header.Kind == BackupKind.Full && records == 0:
                {
                    var bytes = reader.ReadPayload(chunk, ref buffer);
                    if (chunk.Number < Constants.StatePage || bytes.Length == 0 || bytes.Length % Constants.PageSize != 0)
                    {
                        throw reader.Damaged($"{BackupStreamReader.Capital(part)} is malformed: {bytes.Length} bytes from page {chunk.Number}.");
                    }

                    dataFile.EnsureSize(chunk.Number + (bytes.Length / Constants.PageSize));
                    dataFile.Write(chunk.Number, bytes);
                    pages += bytes.Length / Constants.PageSize;
                    break;
                }

                case BackupChunkType.JournalRecord when header.Kind != BackupKind.MinimalIncremental:
                {
                    var bytes = reader.ReadPayload(chunk, ref buffer);
                    ApplyRecord(reader, part, bytes, chunk.Number, next);
                    next++;
                    records++;
                    break;
                }

                case BackupChunkType.MergedPages when header.Kind == BackupKind.MinimalIncremental:
                    reader.BeginMerged(chunk);
                    while (reader.NextMergedEntry(ref buffer, out var page, out var bytes))
                    {
                        dataFile.EnsureSize(page + (bytes.Length / Constants.PageSize));
                        dataFile.Write(page, bytes);
                        pages += bytes.Length / Constants.PageSize;
                    }

                    reader.EndMerged();
                    records++;
                    break;

                case BackupChunkType.End:
                    return CheckEnd(reader, header, reader.ReadPayload(chunk, ref buffer), part, pages, records, next - 1);

                default:
                    throw reader.Damaged($"{BackupStreamReader.Capital(part)} does not belong in a {header.Kind} backup stream at this place.");
            }
        }
    }

    private void ApplyRecord(BackupStreamReader reader, string part, ReadOnlySpan<byte> record, long chunkTransaction, long expected)
    {
        if (record.Length < JournalRecordHeader.Size)
        {
            throw reader.Damaged($"{BackupStreamReader.Capital(part)} is malformed: {record.Length} bytes.");
        }

        var h = MemoryMarshal.Read<JournalRecordHeader>(record);
        if (h.Magic != JournalRecordHeader.MagicValue || h.HeaderHash != JournalRecordHeader.ComputeHeaderHash(record) ||
            h.PayloadSize != record.Length - JournalRecordHeader.Size || h.TransactionId != chunkTransaction ||
            System.IO.Hashing.XxHash64.HashToUInt64(record[JournalRecordHeader.Size..]) != h.PayloadHash)
        {
            throw reader.Damaged($"{BackupStreamReader.Capital(part)} holds a journal record that fails its own checks.");
        }

        if (h.TransactionId != expected)
        {
            throw reader.Damaged($"{BackupStreamReader.Capital(part)} comes where transaction {expected} should: a record is missing.");
        }

        if ((h.Flags & ~(JournalRecordHeader.Lz4Flag | JournalRecordHeader.DiffFlag)) != 0)
        {
            throw reader.Damaged($"{BackupStreamReader.Capital(part)} has record flags {h.Flags:X}, which this build does not know: restore it with the newer build that wrote it.");
        }

        if (!JournalScanner.TryDecode(h, record[JournalRecordHeader.Size..], ref _raw, out var payload) || !Recovery.Apply(_dataFile!, overlay: null, payload, h))
        {
            throw reader.Damaged($"{BackupStreamReader.Capital(part)} passed its checksums but its page list is malformed.");
        }
    }

    private static long CheckEnd(BackupStreamReader reader, in BackupStreamHeader header, ReadOnlySpan<byte> payload, string part, long pages, long records, long lastRecord)
    {
        if (payload.Length != 24)
        {
            throw reader.Damaged($"{BackupStreamReader.Capital(part)} is malformed: {payload.Length} bytes.");
        }

        var last = BinaryPrimitives.ReadInt64LittleEndian(payload);
        var expectedPages = BinaryPrimitives.ReadInt64LittleEndian(payload[8..]);
        var expectedRecords = BinaryPrimitives.ReadInt64LittleEndian(payload[16..]);
        var recordsEnd = header.Kind == BackupKind.MinimalIncremental ? last : lastRecord;
        if (expectedPages != pages || expectedRecords != records || last != recordsEnd || last < header.AfterTransactionId ||
            (header.Kind != BackupKind.Full && last != header.LastTransactionId))
        {
            throw reader.Damaged($"{BackupStreamReader.Capital(part)} does not match the stream: it says transaction {last}, {expectedPages} pages and {expectedRecords} records; the stream held {pages} pages and {records} records up to transaction {recordsEnd}.");
        }

        return last;
    }
}
