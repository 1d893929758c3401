using System.Diagnostics;
using Jackdaw.Server.Databases;
using Jackdaw.Server.Documents;
using Jackdaw.Server.Errors;
using Jackdaw.Server.Indexing;
using Jackdaw.Server.Indexing.Lucene;
using Jackdaw.Storage.Engine;

namespace Jackdaw.Server.Backup;

/// <summary>
/// Backups of a database into a chain folder (<see cref="BackupChain"/>): a snapshot (the storage's
/// pages and what its journals hold past them, every index's files as of its last commit), an
/// incremental file (the journal records since the chain's last file, and the index files that
/// changed), or a minimal incremental one (the newest version of each page those records touched).
/// Writers are never stopped: the storage copy pins nothing for long (the engine's
/// <see cref="EnvironmentBackup"/>), and the index files are held by their deletion policy.
/// </summary>
/// <remarks>
/// The order matters. Tombstones are held first, then each index's last commit, then the storage is
/// copied: a restored index goes on from its commit's positions, which are at or below the copy's
/// last etag, and every tombstone past them is in the copy.
/// </remarks>
public static class DatabaseBackups
{
    /// <summary>The entry holding the storage's stream.</summary>
    public const string StorageEntry = "storage";

    /// <summary>The file of an index folder that ties its files to their definition; copied with them.</summary>
    internal const string DefinitionStamp = "definition.sha256";

    public static string IndexEntry(string folder, string file) => $"indexes/{folder}/{file}";

    /// <summary>Writes one file of the chain in <see cref="BackupRequest.Folder"/>.</summary>
    /// <exception cref="BackupException">The folder cannot be made or written (the path is named).</exception>
    /// <remarks>A <see cref="BackupRequest.Logical"/> request writes a file of a logical chain instead (<see cref="LogicalBackups"/>).</remarks>
    public static Task<BackupResult> RunAsync(DocumentDatabase database, BackupRequest request, BackupRun progress, CancellationToken cancel) =>
        request.Logical
            ? LogicalBackups.RunAsync(database, request, progress, cancel)
            : Task.Factory.StartNew(() => Run(database, request, progress, cancel), cancel, TaskCreationOptions.LongRunning, TaskScheduler.Default);

    /// <summary>Lets the database delete its journals once flushed again (no periodic task keeps them).</summary>
    public static void StopRetainingJournals(DocumentDatabase database) => database.Storage.StopRetainingJournals();

    private static BackupResult Run(DocumentDatabase database, BackupRequest request, BackupRun progress, CancellationToken cancel)
    {
        var clock = Stopwatch.StartNew();
        using var priority = BackgroundPriority.Lower();
        var folder = BackupChain.PrepareFolder(request.Folder);

        // One run at a time per folder: two incrementals at once would both continue the same
        // last file, and the chain would break at the second.
        var gate = FolderGates.GetOrAdd(folder, _ => new SemaphoreSlim(1, 1));
        if (!gate.Wait(0, cancel))
        {
            progress.Stage = "waiting for another backup into the folder";
            gate.Wait(cancel);
        }
        BackupArchiveReader? previous = null;
        try
        {
            (var kind, previous, var note) = Decide(database, folder, request);
            try
            {
                return WriteFile(database, request, folder, kind, previous, note, progress, clock, cancel);
            }
            catch (JournalsUnavailableException e) when (kind != BackupKind.Full)
            {
                // The journals looked kept but one could not be read through: a snapshot instead.
                previous?.Dispose();
                previous = null;
                return WriteFile(database, request, folder, BackupKind.Full, null, $"a snapshot: {e.Message}", progress, clock, cancel);
            }
        }
        finally
        {
            previous?.Dispose();
            gate.Release();
        }
    }

    /// <summary>A gate per chain folder (full path) this process backs up into; few, so never removed.</summary>
    private static readonly System.Collections.Concurrent.ConcurrentDictionary<string, SemaphoreSlim> FolderGates = new(StringComparer.Ordinal);

    private static BackupResult WriteFile(DocumentDatabase database, BackupRequest request, string folder, BackupKind kind, BackupArchiveReader? previous, string? note, BackupRun progress, Stopwatch clock, CancellationToken cancel)
    {
        var name = BackupChain.NextName(previous?.FileName ?? BackupChain.Files(folder).Select(Path.GetFileName).LastOrDefault(), kind, DateTime.UtcNow);
        var path = Path.Combine(folder, name);
        var temporary = path + BackupChain.InProgressExtension;
        using var claim = BackupChain.Claim(temporary);
        using var hold = database.Tombstones.Register(new BackupTombstoneHold());
        var captures = CaptureIndexes(database);
        var engine = new BackupProgress();
        progress.Engine = engine;
        try
        {
            BackupManifest manifest;
            try
            {
                using var file = request.CreateFile?.Invoke(temporary) ?? new FileStream(temporary, FileMode.CreateNew, FileAccess.Write, FileShare.None, 1 << 16, FileOptions.None);
                var writer = new BackupArchiveWriter(file, progress);
                manifest = new BackupManifest
                {
                    Database = database.Name,
                    DatabaseId = database.DatabaseId,
                    Kind = kind,
                    PreviousTransactionId = kind == BackupKind.Full ? null : previous!.Manifest.TransactionId,
                    PreviousFile = kind == BackupKind.Full ? null : previous!.FileName,
                };

                // The index files first, while the storage pins nothing: held by their commits.
                foreach (var capture in captures)
                {
                    manifest.Indexes.Add(CopyIndex(writer, capture, name, kind == BackupKind.Full ? null : previous!.Manifest, progress, cancel));
                }

                progress.Stage = "copying the storage";
                using (var backup = database.Storage.BeginBackup())
                {
                    using (var storage = writer.BeginEntry(StorageEntry))
                    {
                        switch (kind)
                        {
                            case BackupKind.Full:
                                backup.WriteFull(storage, engine, cancel);
                                break;
                            case BackupKind.Incremental:
                                backup.WriteIncremental(previous!.Manifest.TransactionId, storage, engine, cancel);
                                break;
                            default:
                                backup.WriteMinimalIncremental(previous!.Manifest.TransactionId, storage, engine, cancel);
                                break;
                        }
                    }
                    progress.AddEntries(1);
                    manifest.Etag = DocumentsStorage.ReadLastEtag(backup.Transaction.OpenTree(DocumentsStorage.MetaTree));
                    manifest.ChangeVector = manifest.Etag == 0 ? "" : ChangeVectors.Format(database.NodeTag, manifest.Etag, database.DatabaseId);
                    manifest.TransactionId = backup.TransactionId;

                    // Now, while the backup's read transaction keeps every journal after it: a file
                    // that then fails to complete only costs the next incremental, which becomes a
                    // snapshot (the chain's last file is older than the journals kept).
                    if (request.RetainJournals)
                    {
                        backup.RetainJournals(request.OtherChainsNeedAfter);
                    }
                }

                // Disposed: the read transaction does not pin the flusher while the file is synced.
                manifest.CreatedUtc = DateTime.UtcNow;
                writer.Finish(manifest);
                progress.Stage = "syncing";
                if (file is FileStream durable)
                {
                    durable.Flush(flushToDisk: true);
                }
                else
                {
                    file.Flush();
                }
            }
            catch
            {
                TryDelete(temporary);
                throw;
            }

            File.Move(temporary, path);
            FileDurability.SyncFolder(folder);
            progress.Stage = "done";
            return new BackupResult
            {
                FileName = name,
                FilePath = path,
                Kind = kind,
                SizeInBytes = new FileInfo(path).Length,
                Etag = manifest.Etag,
                ChangeVector = manifest.ChangeVector,
                TransactionId = manifest.TransactionId,
                Duration = clock.Elapsed,
                Pages = engine.Pages,
                Entries = progress.Entries,
                Note = note,
            };
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException)
        {
            throw new BackupException($"Writing the backup file '{temporary}' failed: {e.Message}", e);
        }
        finally
        {
            foreach (var capture in captures)
            {
                capture.Dispose();
            }
        }
    }

    /// <summary>The kind of file to write, the chain's last file it continues (open), and why the kind differs from the request's.</summary>
    private static (BackupKind Kind, BackupArchiveReader? Previous, string? Note) Decide(DocumentDatabase database, string folder, BackupRequest request)
    {
        if (request.Full)
        {
            return (BackupKind.Full, null, null);
        }
        var files = BackupChain.Files(folder);
        if (!files.Any(f => BackupChain.KindOf(Path.GetFileName(f)) == BackupKind.Full))
        {
            return (BackupKind.Full, null, "a snapshot: the folder holds none yet for an incremental backup to continue");
        }
        var previous = BackupArchiveReader.Open(files[^1]);
        try
        {
            string? why = null;
            if (previous.Manifest.DatabaseId != database.DatabaseId)
            {
                why = $"a snapshot: the folder's last file '{previous.FileName}' is a backup of another database ('{previous.Manifest.Database}', id {previous.Manifest.DatabaseId})";
            }
            else
            {
                using var read = database.Storage.BeginRead();
                if (previous.Manifest.TransactionId > read.Id)
                {
                    why = $"a snapshot: the folder's last file '{previous.FileName}' ends at transaction {previous.Manifest.TransactionId}, past this database's {read.Id}";
                }
                else if (!database.Storage.JournalsAvailableAfter(previous.Manifest.TransactionId))
                {
                    why = $"a snapshot: the journals since '{previous.FileName}' (transaction {previous.Manifest.TransactionId}) were not kept";
                }
            }
            if (why is not null)
            {
                previous.Dispose();
                return (BackupKind.Full, null, why);
            }
            return (request.Minimal ? BackupKind.MinimalIncremental : BackupKind.Incremental, previous, null);
        }
        catch
        {
            previous.Dispose();
            throw;
        }
    }

    private static List<HeldIndex> CaptureIndexes(DocumentDatabase database)
    {
        var held = new List<HeldIndex>();
        if (database.GetComponent<IndexStore>() is not { } store)
        {
            return held;
        }
        try
        {
            foreach (var index in store.Indexes)
            {
                if (index.CaptureCommit() is { } capture)
                {
                    held.Add(HeldIndex.Open(capture));
                }
            }
        }
        catch
        {
            foreach (var index in held)
            {
                index.Dispose();
            }
            throw;
        }
        return held;
    }

    /// <summary>
    /// Copies the files of an index's commit that the chain does not hold yet, and lists them all.
    /// Lucene never changes a file once written, but a rebuilt index writes the same names again
    /// (<c>segments_1</c>, <c>_0.cfs</c>): a file counts as held already only with the same name,
    /// length and last 16 bytes (Lucene's footer: its magic and the file's CRC32).
    /// </summary>
    private static BackupIndex CopyIndex(BackupArchiveWriter writer, HeldIndex held, string fileName, BackupManifest? previous, BackupRun progress, CancellationToken cancel)
    {
        var folderName = Path.GetFileName(held.Capture.Folder);
        var index = new BackupIndex { Folder = folderName };
        var known = previous?.Indexes.Find(i => i.Folder == folderName);
        foreach (var (name, stream) in held.Files)
        {
            cancel.ThrowIfCancellationRequested();
            var length = stream.Length;
            var tail = Tail(stream);
            var same = known?.Files.Find(f => f.Name == name && f.Length == length && f.Tail == tail);
            if (same is not null && name != DefinitionStamp)
            {
                index.Files.Add(new BackupIndexFile { Name = name, Length = length, Tail = tail, In = same.In });
                continue;
            }
            progress.Stage = $"copying index folder '{folderName}'";
            stream.Position = 0;
            writer.WriteEntry(IndexEntry(folderName, name), stream, cancel);
            progress.AddEntries(1);
            index.Files.Add(new BackupIndexFile { Name = name, Length = length, Tail = tail, In = fileName });
        }
        return index;
    }

    private static string Tail(FileStream stream)
    {
        Span<byte> tail = stackalloc byte[16];
        var length = (int)Math.Min(stream.Length, tail.Length);
        var read = RandomAccess.Read(stream.SafeFileHandle, tail[..length], stream.Length - length);
        return Convert.ToHexString(tail[..read]);
    }

    /// <summary>
    /// An index's commit held for a backup, with its files open from the moment it was taken: a
    /// reset that deletes the folder and writes the same names again cannot swap other files in.
    /// </summary>
    private sealed class HeldIndex : IDisposable
    {
        private HeldIndex(IndexCommitCapture capture, List<(string Name, FileStream Stream)> files)
        {
            Capture = capture;
            Files = files;
        }

        public IndexCommitCapture Capture { get; }

        public List<(string Name, FileStream Stream)> Files { get; }

        public static HeldIndex Open(IndexCommitCapture capture)
        {
            var files = new List<(string, FileStream)>();
            try
            {
                var names = capture.Files.ToList();
                if (File.Exists(Path.Combine(capture.Folder, DefinitionStamp)))
                {
                    names.Add(DefinitionStamp);
                }
                foreach (var name in names)
                {
                    try
                    {
                        files.Add((name, new FileStream(Path.Combine(capture.Folder, name), FileMode.Open, FileAccess.Read, FileShare.ReadWrite | FileShare.Delete, 1 << 16, FileOptions.SequentialScan)));
                    }
                    catch (FileNotFoundException e)
                    {
                        throw new BackupException($"The files of index folder '{Path.GetFileName(capture.Folder)}' changed as the backup began ('{name}' is gone: the index was reset, rolled back or deleted); run the backup again.", e);
                    }
                }
                return new HeldIndex(capture, files);
            }
            catch
            {
                foreach (var (_, stream) in files)
                {
                    stream.Dispose();
                }
                capture.Dispose();
                throw;
            }
        }

        public void Dispose()
        {
            foreach (var (_, stream) in Files)
            {
                stream.Dispose();
            }
            Capture.Dispose();
        }
    }

    private static void TryDelete(string path)
    {
        try
        {
            File.Delete(path);
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException)
        {
            // The next run deletes it (BackupChain.DeleteLeftovers).
        }
    }
}
