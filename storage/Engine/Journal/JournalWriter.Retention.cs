using System.Globalization;

namespace Jackdaw.Storage.Engine.Journal;

/// <summary>A journal file kept after its transactions were flushed (journal retention), renamed so recovery never replays it.</summary>
internal sealed record RetainedJournal(long Sequence, string Path, long FirstTransactionId, long LastTransactionId);

/// <summary>
/// Which journal files go once flushed, which are kept for backups, and which a backup reads.
/// A flushed file that retention still needs is truncated to its records, synced and renamed
/// <c>retained.N</c> (folder synced): its transactions are in both data-file headers, so no recovery
/// needs it, and recovery lists only <c>journal.*</c>. Retained files and live ones together hold
/// strictly consecutive transactions (each retained file ends where the next file starts).
/// </summary>
internal sealed partial class JournalWriter
{
    public const string RetainedPrefix = "retained.";

    // Guarded by _files' lock, like _files.
    private readonly List<RetainedJournal> _retained;

    public static string RetainedFileNameFor(long sequence) => RetainedPrefix + sequence.ToString("D10", CultureInfo.InvariantCulture);

    /// <summary>
    /// Deletes closed journal files whose every transaction is at or below <paramref name="flushed"/>,
    /// except that files holding a transaction after <paramref name="keepAfter"/> (null: none) become
    /// retained files; and deletes retained files <paramref name="keepAfter"/> no longer needs.
    /// </summary>
    public void DeleteFlushed(long flushed, long? keepAfter)
    {
        List<JournalFile> done = [];
        lock (_files)
        {
            done.AddRange(_files.Where(f => f.Closed && f.LastTransactionId <= flushed));
        }

        var renamed = false;
        try
        {
            foreach (var f in done)
            {
                if (keepAfter is { } keep && f.LastTransactionId > keep)
                {
                    // The preallocated tail goes: a retained file costs what its records take.
                    _io.SetLength(f.Stream, f.Position);
                    _io.DataSync(f.Stream);
                    var target = System.IO.Path.Combine(_folder, RetainedFileNameFor(f.Sequence));
                    File.Move(f.Path, target, overwrite: true);
                    f.Stream.Dispose();
                    renamed = true;
                    lock (_files)
                    {
                        _files.Remove(f);
                        _retained.Add(new RetainedJournal(f.Sequence, target, f.FirstTransactionId, f.LastTransactionId));
                    }
                }
                else
                {
                    lock (_files)
                    {
                        _files.Remove(f);
                    }

                    f.Stream.Dispose();
                    File.Delete(f.Path);
                }
            }
        }
        finally
        {
            if (renamed)
            {
                _io.SyncFolder(_folder);
            }
        }

        DropRetained(keepAfter);
    }

    /// <summary>Deletes the retained files whose every transaction is at or below <paramref name="keepAfter"/> (all of them when null).</summary>
    public void DropRetained(long? keepAfter)
    {
        List<RetainedJournal> doomed;
        lock (_files)
        {
            doomed = _retained.Where(r => keepAfter is not { } keep || r.LastTransactionId <= keep).ToList();
            _retained.RemoveAll(doomed.Contains);
        }

        foreach (var r in doomed)
        {
            File.Delete(r.Path);
        }
    }

    /// <summary>Bytes the retained files take on disk.</summary>
    public long RetainedSize
    {
        get
        {
            lock (_files)
            {
                return _retained.Sum(r => new FileInfo(r.Path) is { Exists: true } info ? info.Length : 0);
            }
        }
    }

    /// <summary>
    /// The first transaction of the unbroken run of journal records (retained files, then live ones)
    /// that ends at the newest record; long.MaxValue when no file holds a record.
    /// </summary>
    public long EarliestAvailable()
    {
        lock (_files)
        {
            var ranges = _retained.Select(r => (First: r.FirstTransactionId, Last: r.LastTransactionId))
                .Concat(_files.Select(f => (First: f.FirstTransactionId, Last: f.LastTransactionId)))
                .Where(r => r.First >= 0)
                .ToList();
            if (ranges.Count == 0)
            {
                return long.MaxValue;
            }

            var earliest = ranges[^1].First;
            for (var i = ranges.Count - 2; i >= 0 && ranges[i].Last + 1 == earliest; i--)
            {
                earliest = ranges[i].First;
            }

            return earliest;
        }
    }

    /// <summary>
    /// The files that may hold records after <paramref name="after"/>, oldest first, each as the paths
    /// to try in order (a live file the flusher retains meanwhile is found under its new name). The
    /// caller must keep them from being deleted (a retention pin at or below <paramref name="after"/>).
    /// </summary>
    public List<string[]> FilesAfter(long after)
    {
        lock (_files)
        {
            var result = _retained.Where(r => r.LastTransactionId > after).Select(r => new[] { r.Path }).ToList();
            result.AddRange(_files.Where(f => f.FirstTransactionId >= 0 && f.LastTransactionId > after)
                .Select(f => new[] { f.Path, System.IO.Path.Combine(_folder, RetainedFileNameFor(f.Sequence)) }));
            return result;
        }
    }
}
