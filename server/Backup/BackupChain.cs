using System.Globalization;
using Jackdaw.Server.Errors;

namespace Jackdaw.Server.Backup;

/// <summary>
/// The files of one chain folder. A file's name is the time it was started, to the millisecond
/// (<c>yyyy-MM-dd-HH-mm-ss-fff</c>), and its kind as the extension, so names sort in chain order:
/// a snapshot, then the incremental files that continue it (a later snapshot starts over). A file
/// is written as <c>{name}.in-progress</c> and renamed only when complete and synced: anything else
/// in the folder is not the chain's, and leftovers of a run that died are deleted by the next one.
/// </summary>
public static class BackupChain
{
    public const string SnapshotExtension = ".jackdaw-snapshot";
    public const string IncrementalExtension = ".jackdaw-incremental";
    public const string MinimalIncrementalExtension = ".jackdaw-minimal-incremental";
    public const string InProgressExtension = ".in-progress";

    private const string StampFormat = "yyyy-MM-dd-HH-mm-ss-fff";

    public static string ExtensionOf(BackupKind kind) => kind switch
    {
        BackupKind.Full => SnapshotExtension,
        BackupKind.Incremental => IncrementalExtension,
        _ => MinimalIncrementalExtension,
    };

    /// <summary>The kind a file's name says, or null when it is not a backup file of a chain.</summary>
    public static BackupKind? KindOf(string fileName)
    {
        if (fileName.EndsWith(SnapshotExtension, StringComparison.Ordinal))
        {
            return BackupKind.Full;
        }
        if (fileName.EndsWith(MinimalIncrementalExtension, StringComparison.Ordinal))
        {
            return BackupKind.MinimalIncremental;
        }
        if (fileName.EndsWith(IncrementalExtension, StringComparison.Ordinal))
        {
            return BackupKind.Incremental;
        }
        return null;
    }

    /// <summary>The chain's backup files in the folder, in chain order (by name); empty when the folder does not exist.</summary>
    public static List<string> Files(string folder)
    {
        if (!Directory.Exists(folder))
        {
            return [];
        }
        var files = Directory.EnumerateFiles(folder)
            .Where(f => KindOf(Path.GetFileName(f)) is not null)
            .ToList();
        files.Sort(StringComparer.Ordinal);
        return files;
    }

    /// <summary>
    /// The indexes in <paramref name="files"/> (a chain folder's, in order) a restore applies: the last
    /// file <paramref name="isFull"/> says starts a chain at or before <paramref name="lastFileName"/>
    /// (or the last file), to that file.
    /// </summary>
    /// <exception cref="BackupException">No such file, or no full file to start from (<paramref name="fullKind"/> names its kind).</exception>
    internal static (int Start, int End) RangeToRestore(string folder, List<string> files, string? lastFileName, Func<string, bool> isFull, string fullKind)
    {
        var end = files.Count - 1;
        if (lastFileName is not null)
        {
            end = files.FindIndex(f => string.Equals(Path.GetFileName(f), lastFileName, StringComparison.Ordinal));
            if (end < 0)
            {
                throw new BackupException($"LastFileNameToRestore '{lastFileName}' is not a backup file of '{folder}'.");
            }
        }
        var start = end;
        while (start >= 0 && !isFull(Path.GetFileName(files[start])))
        {
            start--;
        }
        if (start < 0)
        {
            throw new BackupException($"The backup folder '{folder}' holds no {fullKind} at or before '{Path.GetFileName(files[end])}': incremental files alone cannot be restored.");
        }
        return (start, end);
    }

    /// <summary>Makes the chain's folder when missing and deletes what runs that died left in it; returns its full path.</summary>
    /// <exception cref="BackupException">The folder cannot be made or written (named).</exception>
    internal static string PrepareFolder(string folder)
    {
        folder = Path.GetFullPath(folder);
        try
        {
            Directory.CreateDirectory(folder);
            DeleteLeftovers(folder);
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException)
        {
            throw new BackupException($"The backup folder '{folder}' cannot be written: {e.Message}", e);
        }
        return folder;
    }

    /// <summary>The temporary files the backups of this process are writing now (full paths): no leftovers.</summary>
    private static readonly System.Collections.Concurrent.ConcurrentDictionary<string, byte> Writing = new(StringComparer.Ordinal);

    /// <summary>
    /// Marks a temporary file (<c>{name}.in-progress</c>, a full path) as being written until the
    /// result is disposed, so that <see cref="DeleteLeftovers"/> (another backup into the same
    /// folder) leaves it alone. Call it before the file is created.
    /// </summary>
    public static IDisposable Claim(string temporaryPath)
    {
        temporaryPath = Path.GetFullPath(temporaryPath);
        if (!Writing.TryAdd(temporaryPath, 0))
        {
            throw new BackupException($"Another backup is writing '{temporaryPath}' already.");
        }
        return new Release(temporaryPath);
    }

    /// <summary>Deletes what runs that died left (<c>*.in-progress</c> no backup of this process is writing); returns how many.</summary>
    public static int DeleteLeftovers(string folder)
    {
        var deleted = 0;
        foreach (var leftover in Directory.EnumerateFiles(folder, "*" + InProgressExtension))
        {
            if (Writing.ContainsKey(Path.GetFullPath(leftover)))
            {
                continue;
            }
            File.Delete(leftover);
            deleted++;
        }
        return deleted;
    }

    /// <summary>A name for a new file of <paramref name="kind"/> that sorts after every file of the chain.</summary>
    public static string NextName(string? lastFileName, BackupKind kind, DateTime utcNow) => NextName(lastFileName, ExtensionOf(kind), utcNow);

    /// <summary>A name ending in <paramref name="extension"/> that sorts after <paramref name="lastFileName"/> (a logical chain's files too).</summary>
    public static string NextName(string? lastFileName, string extension, DateTime utcNow)
    {
        var stamp = utcNow;
        if (lastFileName is not null && lastFileName.Length >= StampFormat.Length &&
            DateTime.TryParseExact(lastFileName.AsSpan(0, StampFormat.Length), StampFormat, CultureInfo.InvariantCulture, DateTimeStyles.AdjustToUniversal | DateTimeStyles.AssumeUniversal, out var last) &&
            stamp <= last)
        {
            stamp = last.AddMilliseconds(1);
        }
        return stamp.ToString(StampFormat, CultureInfo.InvariantCulture) + extension;
    }

    /// <summary>
    /// The files a restore applies, opened and checked for order: the last snapshot at or before
    /// <paramref name="lastFileName"/> (or the folder's last file), then every incremental after it,
    /// each continuing exactly where the previous one ended.
    /// </summary>
    public static List<BackupArchiveReader> OpenForRestore(string folder, string? lastFileName)
    {
        if (!Directory.Exists(folder))
        {
            throw new BackupException($"The backup folder '{folder}' does not exist.");
        }
        var files = Files(folder);
        if (files.Count == 0)
        {
            throw new BackupException($"The backup folder '{folder}' holds no backup file (*{SnapshotExtension}, *{IncrementalExtension}, *{MinimalIncrementalExtension}).");
        }
        var (start, end) = RangeToRestore(folder, files, lastFileName, f => KindOf(f) == BackupKind.Full, $"snapshot (*{SnapshotExtension})");

        var opened = new List<BackupArchiveReader>();
        try
        {
            for (var i = start; i <= end; i++)
            {
                var reader = BackupArchiveReader.Open(files[i]);
                opened.Add(reader);
                var manifest = reader.Manifest;
                if (manifest.Kind != KindOf(reader.FileName))
                {
                    throw new BackupException($"The backup file '{reader.FileName}' holds a {manifest.Kind} backup but is named as another kind.");
                }
                if (i == start)
                {
                    continue;
                }
                var previous = opened[^2];
                if (manifest.DatabaseId != previous.Manifest.DatabaseId)
                {
                    throw new BackupException($"The backup chain in '{folder}' is broken: '{reader.FileName}' is a backup of another database (id {manifest.DatabaseId}, '{manifest.Database}') than '{previous.FileName}' (id {previous.Manifest.DatabaseId}, '{previous.Manifest.Database}').");
                }
                if (manifest.PreviousTransactionId != previous.Manifest.TransactionId)
                {
                    throw new BackupException($"The backup chain in '{folder}' is broken: '{reader.FileName}' continues from transaction {manifest.PreviousTransactionId} ('{manifest.PreviousFile}'), but '{previous.FileName}' ends at transaction {previous.Manifest.TransactionId}.");
                }
            }
            return opened;
        }
        catch
        {
            foreach (var reader in opened)
            {
                reader.Dispose();
            }
            throw;
        }
    }

    private sealed class Release(string path) : IDisposable
    {
        public void Dispose() => Writing.TryRemove(path, out _);
    }
}
