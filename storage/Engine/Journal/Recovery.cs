using System.Buffers.Binary;
using Jackdaw.Storage.Engine.Paging;

namespace Jackdaw.Storage.Engine.Journal;

/// <summary>
/// Replays journal records after the data file's flushed transaction, in order, straight into the
/// data file, then syncs it and writes both headers. Replay stops at the first record whose magic,
/// header hash, size, transaction id (must be the previous + 1) or payload hash does not hold: a
/// torn tail. That record and everything after it are discarded, never replayed.
/// </summary>
internal static class Recovery
{
    public readonly record struct Result(long LastTransactionId, long NextJournalSequence, int ReplayedTransactions, bool StoppedAtTornRecord, List<RetainedJournal> Retained);

    /// <summary>
    /// Replays into the data file. With <paramref name="keepAfter"/> set (journal retention, or null),
    /// a journal file holding a transaction after it is not deleted but truncated to its last valid
    /// record and renamed to <c>retained.N</c>: recovery never replays a retained file, so a torn tail
    /// in one can never hide newer journal files from a later recovery.
    /// </summary>
    public static Result Run(DataFile dataFile, string folder, long? keepAfter, StorageIo io) => Run(dataFile, folder, keepAfter, io, overlay: null);

    /// <summary>
    /// Replays without writing anything: each record's pages go into <paramref name="overlay"/>
    /// (first page number → the run as of the last replayed transaction, built on the data file's
    /// content), the journal files stay, the headers stay. For opening read-only when recovery
    /// cannot write (a full disk); the same torn-tail rules apply.
    /// </summary>
    public static Result RunInMemory(DataFile dataFile, string folder, Dictionary<long, byte[]> overlay) => Run(dataFile, folder, keepAfter: null, StorageIo.Default, overlay);

    private static Result Run(DataFile dataFile, string folder, long? keepAfter, StorageIo io, Dictionary<long, byte[]>? overlay)
    {
        var files = JournalWriter.ListFiles(folder);
        var flushed = dataFile.FlushedTransactionId;
        var last = flushed;
        var replayed = 0;
        var torn = false;
        byte[] stored = [];
        byte[] raw = [];

        // Per journal file: its first and last accepted transaction and where its accepted records end.
        var accepted = new List<(long First, long Last, long End)>();
        foreach (var (_, path) in files)
        {
            if (torn)
            {
                break;
            }

            using var scanner = new JournalScanner(path);
            var (first, lastInFile, end) = (-1L, -1L, 0L);
            while (scanner.Next())
            {
                var h = scanner.Header;
                if (h.TransactionId <= flushed)
                {
                    // Already in the data file (kept until both headers are past it).
                    last = Math.Max(last, h.TransactionId);
                }
                else
                {
                    if (h.TransactionId != last + 1)
                    {
                        if (replayed == 0 && h.TransactionId > last + 1)
                        {
                            throw new StorageCorruptedException(path, $"The journal continues at transaction {h.TransactionId} but the data file holds transactions up to {flushed} only: transactions in between are missing.");
                        }

                        scanner.StopHere();
                        break;
                    }

                    if (!scanner.ReadPayload(ref stored) || !JournalScanner.TryDecode(h, stored.AsSpan(0, h.PayloadSize), ref raw, out var payload))
                    {
                        scanner.StopHere();
                        break;
                    }

                    if (!Apply(dataFile, overlay, payload, h))
                    {
                        throw new StorageCorruptedException(path, $"Journal record of transaction {h.TransactionId} passed its checksum but its page list is malformed.");
                    }

                    last = h.TransactionId;
                    replayed++;
                }

                first = first < 0 ? h.TransactionId : first;
                lastInFile = h.TransactionId;
                end = scanner.End;
            }

            torn = scanner.Torn;
            accepted.Add((first, lastInFile, end));
        }

        var retained = ScanRetained(folder);
        var nextSequence = Math.Max(files.Count == 0 ? 0 : files[^1].Sequence, retained.Count == 0 ? 0 : retained[^1].Sequence) + 1;
        if (overlay is not null)
        {
            return new Result(last, nextSequence, replayed, torn, retained);
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

        var renamed = false;
        for (var i = 0; i < files.Count; i++)
        {
            var (sequence, path) = files[i];
            if (keepAfter is { } keep && i < accepted.Count && accepted[i].Last > keep)
            {
                // Every accepted record is at or below `last`, now in both headers: never replayed again.
                var (first, lastInFile, end) = accepted[i];
                var target = Path.Combine(folder, JournalWriter.RetainedFileNameFor(sequence));
                using (var stream = new FileStream(path, FileMode.Open, FileAccess.ReadWrite, FileShare.Read, 1, FileOptions.None))
                {
                    io.SetLength(stream, end);
                    io.DataSync(stream);
                }

                File.Move(path, target, overwrite: true);
                retained.Add(new RetainedJournal(sequence, target, first, lastInFile));
                renamed = true;
            }
            else
            {
                File.Delete(path);
            }
        }

        if (renamed)
        {
            retained.Sort((a, b) => a.Sequence.CompareTo(b.Sequence));
            io.SyncFolder(folder);
        }

        return new Result(last, nextSequence, replayed, torn, retained);
    }

    /// <summary>
    /// The retained journal files in the folder, oldest first, each with the first and last transaction
    /// of its valid records (a walk over the headers; payloads are checked when a backup reads them).
    /// </summary>
    private static List<RetainedJournal> ScanRetained(string folder)
    {
        var result = new List<RetainedJournal>();
        foreach (var (sequence, path) in JournalWriter.ListFiles(folder, JournalWriter.RetainedPrefix))
        {
            using var scanner = new JournalScanner(path);
            var (first, last) = (-1L, -1L);
            while (scanner.Next())
            {
                if (last >= 0 && scanner.Header.TransactionId != last + 1)
                {
                    break;
                }

                first = first < 0 ? scanner.Header.TransactionId : first;
                last = scanner.Header.TransactionId;
            }

            result.Add(new RetainedJournal(sequence, path, first, last));
        }

        return result;
    }

    /// <summary>
    /// Checks a record's page list, then writes its pages into <paramref name="dataFile"/> (or into
    /// <paramref name="overlay"/> when set); false, with nothing written, when the list is malformed.
    /// Backups restore journal records through this too.
    /// </summary>
    public static bool Apply(DataFile dataFile, Dictionary<long, byte[]>? overlay, ReadOnlySpan<byte> payload, in JournalRecordHeader h)
    {
        var diffLayout = (h.Flags & JournalRecordHeader.DiffFlag) != 0;
        return Apply(dataFile: null, null, payload, h.PageCount, diffLayout) && Apply(dataFile, overlay, payload, h.PageCount, diffLayout);
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

    /// <summary>
    /// Adds every page entry of a record's payload to <paramref name="touched"/> (first page → the longest
    /// length seen); false when the page list is malformed.
    /// </summary>
    public static bool AddTouchedPages(ReadOnlySpan<byte> payload, in JournalRecordHeader h, Dictionary<long, int> touched)
    {
        var diffLayout = (h.Flags & JournalRecordHeader.DiffFlag) != 0;
        if (!Apply(dataFile: null, null, payload, h.PageCount, diffLayout))
        {
            return false;
        }

        var entryHeader = diffLayout ? JournalRecord.EntryHeader : JournalRecord.WholePageEntryHeader;
        for (var pos = 0; pos < payload.Length;)
        {
            var number = BinaryPrimitives.ReadInt64LittleEndian(payload.Slice(pos));
            var length = BinaryPrimitives.ReadInt32LittleEndian(payload.Slice(pos + 8));
            var stored = diffLayout ? BinaryPrimitives.ReadInt32LittleEndian(payload.Slice(pos + 12)) : length;
            touched[number] = Math.Max(length, touched.GetValueOrDefault(number));
            pos += entryHeader + stored;
        }

        return true;
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

}
