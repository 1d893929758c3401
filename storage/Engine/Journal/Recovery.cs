using System.Buffers.Binary;
using System.IO.Hashing;
using System.Runtime.InteropServices;
using Jackdaw.Storage.Engine.Paging;
using K4os.Compression.LZ4;

namespace Jackdaw.Storage.Engine.Journal;

/// <summary>
/// Replays journal records after the data file's flushed transaction, in order, straight into the
/// data file, then syncs it and writes both headers. Replay stops at the first record whose magic,
/// header hash, size, transaction id (must be the previous + 1) or payload hash does not hold: a
/// torn tail. That record and everything after it are discarded, never replayed.
/// </summary>
internal static class Recovery
{
    public readonly record struct Result(long LastTransactionId, long NextJournalSequence, int ReplayedTransactions, bool StoppedAtTornRecord);

    public static Result Run(DataFile dataFile, string folder) => Run(dataFile, folder, overlay: null);

    /// <summary>
    /// Replays without writing anything: each record's pages go into <paramref name="overlay"/>
    /// (first page number → the run as of the last replayed transaction, built on the data file's
    /// content), the journal files stay, the headers stay. For opening read-only when recovery
    /// cannot write (a full disk); the same torn-tail rules apply.
    /// </summary>
    public static Result RunInMemory(DataFile dataFile, string folder, Dictionary<long, byte[]> overlay) => Run(dataFile, folder, overlay);

    private static Result Run(DataFile dataFile, string folder, Dictionary<long, byte[]>? overlay)
    {
        var files = JournalWriter.ListFiles(folder);
        var flushed = dataFile.FlushedTransactionId;
        var last = flushed;
        var replayed = 0;
        var torn = false;
        var headerBuffer = new byte[JournalRecordHeader.Size];
        byte[] stored = [];
        byte[] raw = [];

        foreach (var (_, path) in files)
        {
            if (torn)
            {
                break;
            }

            using var stream = new FileStream(path, FileMode.Open, FileAccess.Read, FileShare.Read, 1, FileOptions.None);
            var length = stream.Length;
            long position = 0;
            while (true)
            {
                if (position + JournalRecordHeader.Size > length)
                {
                    break;
                }

                RandomAccess.Read(stream.SafeFileHandle, headerBuffer, position);
                var h = MemoryMarshal.Read<JournalRecordHeader>(headerBuffer);
                if (h.Magic != JournalRecordHeader.MagicValue)
                {
                    // Zeroed preallocated space (the normal end of a file) or garbage: either way the end.
                    if (!IsAllZero(headerBuffer))
                    {
                        torn = true;
                    }

                    break;
                }

                if (h.HeaderHash != JournalRecordHeader.ComputeHeaderHash(headerBuffer) || h.PayloadSize < 0 ||
                    position + JournalRecordHeader.Size + h.PayloadSize > length || h.UncompressedSize < 0 || h.UncompressedSize > int.MaxValue)
                {
                    torn = true;
                    break;
                }

                if ((h.Flags & ~(JournalRecordHeader.Lz4Flag | JournalRecordHeader.DiffFlag)) != 0)
                {
                    // A valid record of a layout this build does not know: replaying it or calling it a
                    // torn tail would both lose acknowledged transactions.
                    throw new StorageCorruptedException(path, $"The journal record of transaction {h.TransactionId} has flags {h.Flags:X}, which this build does not know: a newer build wrote it. Open the folder with that build.");
                }

                if (h.TransactionId <= flushed)
                {
                    // Already in the data file (kept until both headers are past it).
                    last = Math.Max(last, h.TransactionId);
                    position += JournalRecordHeader.Size + h.PayloadSize;
                    continue;
                }

                if (h.TransactionId != last + 1)
                {
                    if (replayed == 0 && h.TransactionId > last + 1)
                    {
                        throw new StorageCorruptedException(path, $"The journal continues at transaction {h.TransactionId} but the data file holds transactions up to {flushed} only: transactions in between are missing.");
                    }

                    torn = true;
                    break;
                }

                if (stored.Length < h.PayloadSize)
                {
                    stored = new byte[h.PayloadSize];
                }

                RandomAccess.Read(stream.SafeFileHandle, stored.AsSpan(0, h.PayloadSize), position + JournalRecordHeader.Size);
                if (XxHash64.HashToUInt64(stored.AsSpan(0, h.PayloadSize)) != h.PayloadHash)
                {
                    torn = true;
                    break;
                }

                ReadOnlySpan<byte> payload;
                if ((h.Flags & JournalRecordHeader.Lz4Flag) != 0)
                {
                    if (raw.Length < h.UncompressedSize)
                    {
                        raw = new byte[h.UncompressedSize];
                    }

                    var decoded = LZ4Codec.Decode(stored.AsSpan(0, h.PayloadSize), raw.AsSpan(0, (int)h.UncompressedSize));
                    if (decoded != h.UncompressedSize)
                    {
                        torn = true;
                        break;
                    }

                    payload = raw.AsSpan(0, decoded);
                }
                else
                {
                    payload = stored.AsSpan(0, h.PayloadSize);
                }

                var diffLayout = (h.Flags & JournalRecordHeader.DiffFlag) != 0;
                if (!Apply(dataFile: null, null, payload, h.PageCount, diffLayout) || !Apply(dataFile, overlay, payload, h.PageCount, diffLayout))
                {
                    throw new StorageCorruptedException(path, $"Journal record of transaction {h.TransactionId} passed its checksum but its page list is malformed.");
                }

                last = h.TransactionId;
                replayed++;
                position += JournalRecordHeader.Size + h.PayloadSize;
            }
        }

        var nextSequence = files.Count == 0 ? 1 : files[^1].Sequence + 1;
        if (overlay is not null)
        {
            return new Result(last, nextSequence, replayed, torn);
        }

        if (last > flushed)
        {
            dataFile.Sync();
        }

        if (last > flushed || dataFile.HeaderA != dataFile.HeaderB || dataFile.HasOlderFormatHeader)
        {
            // Both slots, so that one corrupt header later still leaves a header that needs no journal,
            // and so that both carry this build's format version before it writes a journal record (a
            // build that reads only version 1 then refuses the folder instead of misreading diffs).
            dataFile.WriteHeader(last);
            dataFile.WriteHeader(last);
        }

        foreach (var (_, path) in files)
        {
            File.Delete(path);
        }

        return new Result(last, nextSequence, replayed, torn);
    }

    /// <summary>
    /// Checks a record's page list (<paramref name="dataFile"/> null: nothing is written, so a malformed
    /// record changes nothing), or writes its pages into the data file. A diff entry writes only its
    /// runs. Why that is enough, replaying every record after the flushed transaction in order, even
    /// over a data file that a flush cut short left holding newer versions of some pages: take any
    /// byte of a live page. If some replayed record has a run over it, the last such run writes its
    /// final value. If none has, no transaction after the flushed one changed it, so every version of
    /// the page the data file can hold has it already. This needs three things, which the writer
    /// keeps: a diff's base is the page as of the previous transaction (the writer's snapshot is the
    /// last commit); every change to a live page is journaled (a freed page is only ever reused whole);
    /// and a sector the disk was writing when the power went holds its old or its new bytes, never
    /// others (whole-page records repaired a torn page; diffs rely on the disk for that).
    /// </summary>
    private static bool Apply(DataFile? dataFile, Dictionary<long, byte[]>? overlay, ReadOnlySpan<byte> payload, int pageCount, bool diffLayout)
    {
        var entryHeader = diffLayout ? JournalRecord.EntryHeader : JournalRecord.WholePageEntryHeader;
        var pos = 0;
        var count = 0;
        while (pos < payload.Length)
        {
            if (pos + entryHeader > payload.Length)
            {
                return false;
            }

            var number = BinaryPrimitives.ReadInt64LittleEndian(payload.Slice(pos));
            var length = BinaryPrimitives.ReadInt32LittleEndian(payload.Slice(pos + 8));
            var stored = diffLayout ? BinaryPrimitives.ReadInt32LittleEndian(payload.Slice(pos + 12)) : length;
            if (number < Constants.StatePage || length <= 0 || length % Constants.PageSize != 0 ||
                stored < 0 || stored > length || stored > payload.Length - pos - entryHeader)
            {
                return false;
            }

            var body = payload.Slice(pos + entryHeader, stored);
            if (dataFile is null)
            {
                if (stored != length && !PageDiff.ForEachRun(body, length, 0, static (_, _, _) => { }))
                {
                    return false;
                }
            }
            else if (overlay is not null)
            {
                byte[] page;
                if (stored == length)
                {
                    page = body.ToArray();
                }
                else
                {
                    page = overlay.TryGetValue(number, out var newest) && newest.Length == length ? newest : ReadBase(dataFile, number, length);
                    PageDiff.ForEachRun(body, length, page, static (target, offset, bytes) => bytes.CopyTo(target.AsSpan(offset)));
                }

                overlay[number] = page;
            }
            else
            {
                dataFile.EnsureSize(number + (length / Constants.PageSize));
                if (stored == length)
                {
                    dataFile.Write(number, body);
                }
                else
                {
                    PageDiff.ForEachRun(body, length, (dataFile, number), static (target, offset, bytes) => target.dataFile.WriteAt(target.number, offset, bytes));
                }
            }

            pos += entryHeader + stored;
            count++;
        }

        return count == pageCount;
    }

    /// <summary>A copy of the run as the data file holds it; zeros past the end of the file.</summary>
    private static unsafe byte[] ReadBase(DataFile dataFile, long number, int length)
    {
        var page = new byte[length];
        var offset = number * Constants.PageSize;
        var inFile = Math.Min(length, dataFile.Length - offset);
        if (inFile > 0)
        {
            new ReadOnlySpan<byte>(dataFile.PagePointer(number, out _), (int)inFile).CopyTo(page);
        }

        return page;
    }

    private static bool IsAllZero(ReadOnlySpan<byte> span) => !span.ContainsAnyExcept((byte)0);
}
