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
    public static Task<BackupResult> RunAsync(DocumentDatabase database, BackupRequest request, BackupRun progress, CancellationToken cancel) =>
        Task.Factory.StartNew(() => Run(database, request, progress, cancel), cancel, TaskCreationOptions.LongRunning, TaskScheduler.Default);

    /// <summary>Lets the database delete its journals once flushed again (no periodic task keeps them).</summary>
    public static void StopRetainingJournals(DocumentDatabase database) => database.Storage.StopRetainingJournals();

    private static BackupResult Run(DocumentDatabase database, BackupRequest request, BackupRun progress, CancellationToken cancel)
    {
        var clock = Stopwatch.StartNew();
        var folder = Path.GetFullPath(request.Folder);
        try
        {
            Directory.CreateDirectory(folder);
            BackupChain.DeleteLeftovers(folder);
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException)
        {
            throw new BackupException($"The backup folder '{folder}' cannot be written: {e.Message}", e);
        }

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
                    manifest.Indexes.Add(CopyIndex(writer, capture, name, kind == BackupKind.Full ? null : previous!.Manifest, progress, cancel));

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
                    manifest.ChangeVector = manifest.Etag == 0 ? "" : ChangeVectors.Format(manifest.Etag, database.DatabaseId);
                    manifest.TransactionId = backup.TransactionId;

                    // Now, while the backup's read transaction keeps every journal after it: a file
                    // that then fails to complete only costs the next incremental, which becomes a
                    // snapshot (the chain's last file is older than the journals kept).
                    if (request.RetainJournals)
                        backup.RetainJournals(request.OtherChainsNeedAfter);
                }

                // Disposed: the read transaction does not pin the flusher while the file is synced.
                manifest.CreatedUtc = DateTime.UtcNow;
                writer.Finish(manifest);
                progress.Stage = "syncing";
                if (file is FileStream durable)
                    durable.Flush(flushToDisk: true);
                else
                    file.Flush();
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
                capture.Dispose();
        }
    }

    /// <summary>The kind of file to write, the chain's last file it continues (open), and why the kind differs from the request's.</summary>
    private static (BackupKind Kind, BackupArchiveReader? Previous, string? Note) Decide(DocumentDatabase database, string folder, BackupRequest request)
    {
        if (request.Full)
            return (BackupKind.Full, null, null);
        var files = BackupChain.Files(folder);
        if (!files.Any(f => BackupChain.KindOf(Path.GetFileName(f)) == BackupKind.Full))
            return (BackupKind.Full, null, "a snapshot: the folder holds none yet for an incremental backup to continue");
        var previous = BackupArchiveReader.Open(files[^1]);
        if (!database.Storage.JournalsAvailableAfter(previous.Manifest.TransactionId))
        {
            var why = $"a snapshot: the journals since '{previous.FileName}' (transaction {previous.Manifest.TransactionId}) were not kept";
            previous.Dispose();
            return (BackupKind.Full, null, why);
        }
        return (request.Minimal ? BackupKind.MinimalIncremental : BackupKind.Incremental, previous, null);
    }

    private static List<IndexCommitCapture> CaptureIndexes(DocumentDatabase database)
    {
        var captures = new List<IndexCommitCapture>();
        if (database.GetComponent<IndexStore>() is not { } store)
            return captures;
        try
        {
            foreach (var index in store.Indexes)
            {
                if (index.CaptureCommit() is { } capture)
                    captures.Add(capture);
            }
        }
        catch
        {
            foreach (var capture in captures)
                capture.Dispose();
            throw;
        }
        return captures;
    }

    /// <summary>
    /// Copies the files of an index's commit that the chain does not hold yet (Lucene never changes
    /// a file once written: a name and length seen before are the same file), and lists them all.
    /// </summary>
    private static BackupIndex CopyIndex(BackupArchiveWriter writer, IndexCommitCapture capture, string fileName, BackupManifest? previous, BackupRun progress, CancellationToken cancel)
    {
        var folderName = Path.GetFileName(capture.Folder);
        var index = new BackupIndex { Folder = folderName };
        var known = previous?.Indexes.Find(i => i.Folder == folderName);
        var names = capture.Files.ToList();
        if (File.Exists(Path.Combine(capture.Folder, DefinitionStamp)))
            names.Add(DefinitionStamp);
        foreach (var name in names)
        {
            cancel.ThrowIfCancellationRequested();
            var source = Path.Combine(capture.Folder, name);
            FileStream stream;
            try
            {
                stream = new FileStream(source, FileMode.Open, FileAccess.Read, FileShare.ReadWrite | FileShare.Delete, 1 << 16, FileOptions.SequentialScan);
            }
            catch (FileNotFoundException e)
            {
                throw new BackupException($"The files of index folder '{folderName}' changed during the backup ('{name}' is gone: the index was rolled back or deleted); run the backup again.", e);
            }
            using (stream)
            {
                var length = stream.Length;
                var same = known?.Files.Find(f => f.Name == name && f.Length == length);
                if (same is not null && name != DefinitionStamp)
                {
                    index.Files.Add(new BackupIndexFile { Name = name, Length = length, In = same.In });
                    continue;
                }
                progress.Stage = $"copying index folder '{folderName}'";
                writer.WriteEntry(IndexEntry(folderName, name), stream, cancel);
                progress.AddEntries(1);
                index.Files.Add(new BackupIndexFile { Name = name, Length = length, In = fileName });
            }
        }
        return index;
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
