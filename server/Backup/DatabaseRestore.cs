using System.Diagnostics;
using Jackdaw.Server.Databases;
using Jackdaw.Server.Documents;
using Jackdaw.Server.Errors;
using Jackdaw.Storage.Engine;

namespace Jackdaw.Server.Backup;

/// <summary>
/// Restores a chain (<see cref="BackupChain.OpenForRestore"/>) into a new database, or into a
/// throw-away folder to verify it. The database is built in a folder of its own beside the others
/// (<c>~restore-{id}</c>: not a valid database name, so never opened as one), and moved into place
/// only when complete: a restore that fails or dies leaves no database, and the next restore
/// deletes what it left. A folder of logical backup files is imported instead (<see cref="LogicalRestore"/>).
/// The storage is rebuilt by the engine (<see cref="EnvironmentRestore"/>:
/// the snapshot's pages, then each incremental file in order); each index folder gets the files of
/// its commit as of the last file applied, so the index goes on from there instead of rebuilding.
/// </summary>
public static class DatabaseRestore
{
    private const string WorkFolderPrefix = "~restore-";

    // The work folders restores of this process are building now: not leftovers of one that died.
    private static readonly System.Collections.Concurrent.ConcurrentDictionary<string, byte> Building = new(StringComparer.Ordinal);

    /// <exception cref="DatabaseAlreadyExistsException">A database of that name exists.</exception>
    /// <exception cref="BackupException">The folder, the chain or a file is not right (named).</exception>
    public static Task<RestoreResult> RestoreAsync(DatabasesLandlord landlord, RestoreRequest request, BackupRun progress, CancellationToken cancel)
    {
        if (DatabaseNames.Validate(request.DatabaseName) is { } invalid)
        {
            throw new BadRequestException(invalid);
        }
        if (landlord.Names.Contains(request.DatabaseName, StringComparer.OrdinalIgnoreCase))
        {
            throw new DatabaseAlreadyExistsException(request.DatabaseName);
        }
        if (LogicalRestore.Holds(request.BackupLocation))
        {
            return LogicalRestore.RestoreAsync(landlord, request, progress, cancel);
        }
        var readers = BackupChain.OpenForRestore(request.BackupLocation, request.LastFileNameToRestore);
        return Task.Factory.StartNew(() =>
        {
            var clock = Stopwatch.StartNew();
            var work = NewWorkFolder(landlord);
            try
            {
                var result = Build(readers, work, request.DatabaseName, progress, cancel);
                progress.Stage = "opening the database";
                if (!landlord.TryAdopt(request.DatabaseName, work))
                {
                    throw new DatabaseAlreadyExistsException(request.DatabaseName);
                }
                progress.Stage = "done";
                return Finished(result, clock);
            }
            catch
            {
                DatabasesLandlord.TryDeleteFolder(work);
                throw;
            }
            finally
            {
                EndWork(work);
                foreach (var reader in readers)
                {
                    reader.Dispose();
                }
            }
        }, CancellationToken.None, TaskCreationOptions.LongRunning, TaskScheduler.Default);
    }

    /// <summary>
    /// Reads a chain through, checking every checksum, and restores it into a throw-away folder
    /// (opened and read, then deleted): no database is made.
    /// </summary>
    public static Task<RestoreResult> VerifyAsync(string backupLocation, string? lastFileNameToRestore, BackupRun progress, CancellationToken cancel)
    {
        if (LogicalRestore.Holds(backupLocation))
        {
            return LogicalRestore.VerifyAsync(backupLocation, lastFileNameToRestore, progress, cancel);
        }
        var readers = BackupChain.OpenForRestore(backupLocation, lastFileNameToRestore);
        return Task.Factory.StartNew(() =>
        {
            var clock = Stopwatch.StartNew();
            var work = Path.Combine(Path.GetTempPath(), "jackdaw-verify-" + Guid.NewGuid().ToString("N"));
            try
            {
                var result = Build(readers, work, readers[0].Manifest.Database, progress, cancel);
                progress.Stage = "reading the restored storage";
                ReadEverything(Path.Combine(work, "Storage"), cancel);
                // The restore read only the index files of the last file's commits: the others
                // (files of earlier commits, kept for earlier restore points) are checked too.
                var used = readers[^1].Manifest.Indexes
                    .SelectMany(i => i.Files.Select(f => (f.In, DatabaseBackups.IndexEntry(i.Folder, f.Name))))
                    .ToHashSet();
                foreach (var reader in readers)
                {
                    progress.Stage = $"checking the other entries of '{reader.FileName}'";
                    reader.VerifyAll(progress, cancel, entry => entry != DatabaseBackups.StorageEntry && !used.Contains((reader.FileName, entry)));
                }
                progress.Stage = "done";
                return Finished(result, clock);
            }
            finally
            {
                foreach (var reader in readers)
                {
                    reader.Dispose();
                }
                DatabasesLandlord.TryDeleteFolder(work);
            }
        }, CancellationToken.None, TaskCreationOptions.LongRunning, TaskScheduler.Default);
    }

    /// <summary>The result with the time the whole run took.</summary>
    internal static RestoreResult Finished(RestoreResult result, Stopwatch clock) => result with { Duration = clock.Elapsed };

    /// <summary>Builds a database folder (Storage/, Indexes/) in <paramref name="work"/> from the chain.</summary>
    private static RestoreResult Build(List<BackupArchiveReader> readers, string work, string name, BackupRun progress, CancellationToken cancel)
    {
        Directory.CreateDirectory(work);
        progress.Stage = "restoring the storage";
        using (var storage = EnvironmentRestore.Create(Path.Combine(work, "Storage")))
        {
            foreach (var reader in readers)
            {
                cancel.ThrowIfCancellationRequested();
                progress.Stage = $"restoring the storage from '{reader.FileName}'";
                using var entry = reader.OpenEntry(DatabaseBackups.StorageEntry, progress);
                try
                {
                    if (reader.Manifest.Kind == BackupKind.Full)
                    {
                        storage.ApplyFull(entry, cancel);
                    }
                    else
                    {
                        storage.ApplyIncremental(entry, cancel);
                    }
                }
                catch (StorageCorruptedException e)
                {
                    throw new BackupException($"The backup file '{reader.FileName}' cannot be restored: {e.Message}", e);
                }
                // The engine stops at its stream's end chunk: read the entry's end block too, which
                // checks the whole content against the manifest's hash.
                if (entry.ReadByte() >= 0)
                {
                    throw new BackupException($"The backup file '{reader.FileName}' is damaged: its storage entry goes on past the end of the storage stream.");
                }
                if (storage.TransactionId != reader.Manifest.TransactionId)
                {
                    throw new BackupException($"The backup file '{reader.FileName}' is damaged: its storage ends at transaction {storage.TransactionId}, its manifest says {reader.Manifest.TransactionId}.");
                }
                progress.AddEntries(1);
            }
            storage.Complete();
        }

        // Another database from here on: its own id, so no backup chain of the source (whose
        // history goes on elsewhere) takes this one's files, nor this one the source's.
        using (var environment = StorageEnvironment.Open(new StorageEnvironmentOptions { Path = Path.Combine(work, "Storage") }))
        using (var transaction = environment.BeginWrite())
        {
            DocumentsStorage.ReplaceDatabaseId(transaction, ChangeVectors.NewDatabaseId());
            transaction.Commit();
        }

        var last = readers[^1].Manifest;
        var byName = readers.ToDictionary(r => r.FileName, StringComparer.Ordinal);
        var indexes = Path.Combine(work, "Indexes");
        Directory.CreateDirectory(indexes);
        foreach (var index in last.Indexes)
        {
            progress.Stage = $"restoring index folder '{index.Folder}'";
            if (index.Folder.Length == 0 || index.Folder != Path.GetFileName(index.Folder) || index.Folder is "." or "..")
            {
                throw new BackupException($"The backup file '{readers[^1].FileName}' names an index folder '{index.Folder}' that is not a folder name.");
            }
            var folder = Path.Combine(indexes, index.Folder);
            Directory.CreateDirectory(folder);
            foreach (var file in index.Files)
            {
                cancel.ThrowIfCancellationRequested();
                if (file.Name != Path.GetFileName(file.Name) || file.Name is "." or "..")
                {
                    throw new BackupException($"The backup file '{readers[^1].FileName}' names an index file '{file.Name}' that is not a file name.");
                }
                if (!byName.TryGetValue(file.In, out var holder))
                {
                    throw new BackupException($"The backup chain is broken: index file '{index.Folder}/{file.Name}' is in '{file.In}', which is not a file of the chain being restored.");
                }
                var target = Path.Combine(folder, file.Name);
                using (var source = holder.OpenEntry(DatabaseBackups.IndexEntry(index.Folder, file.Name), progress))
                using (var destination = new FileStream(target, FileMode.CreateNew, FileAccess.Write, FileShare.None, 1 << 16))
                {
                    source.CopyTo(destination, 1 << 20);
                    destination.Flush(flushToDisk: true);
                    if (destination.Length != file.Length)
                    {
                        throw new BackupException($"The backup file '{holder.FileName}' is damaged: index file '{index.Folder}/{file.Name}' has {destination.Length} bytes, the manifest says {file.Length}.");
                    }
                }
                progress.AddEntries(1);
            }
            FileDurability.SyncFolder(folder);
        }
        FileDurability.SyncFolder(indexes);
        FileDurability.SyncFolder(work);
        return new RestoreResult
        {
            DatabaseName = name,
            Files = readers.Select(r => r.FileName).ToList(),
            Etag = last.Etag,
            TransactionId = last.TransactionId,
            Indexes = last.Indexes.Count,
            SizeInBytes = readers.Sum(r => r.Length),
        };
    }

    /// <summary>Opens a restored storage and reads every entry of every documents tree.</summary>
    private static void ReadEverything(string folder, CancellationToken cancel)
    {
        using var environment = StorageEnvironment.Open(new StorageEnvironmentOptions { Path = folder });
        using var read = environment.BeginRead();
        foreach (var name in DocumentsStorage.TreeNames)
        {
            if (read.OpenTree(name) is not { } tree)
            {
                continue;
            }
            using var iterator = tree.Iterate();
            var seen = 0L;
            if (iterator.SeekFirst())
            {
                do
                {
                    if ((++seen & 0xFFF) == 0)
                    {
                        cancel.ThrowIfCancellationRequested();
                    }
                }
                while (iterator.MoveNext());
            }
        }
    }

    /// <summary>A new work folder's path beside the databases (not made yet); deletes the ones restores that died left.</summary>
    /// <summary>
    /// A new work folder's path (registered as being built until <see cref="EndWork"/>), after
    /// deleting the leftovers of restores that died: those no restore of this process is building.
    /// </summary>
    internal static string NewWorkFolder(DatabasesLandlord landlord)
    {
        var work = Path.Combine(landlord.Root, WorkFolderPrefix + Guid.NewGuid().ToString("N"));
        Building[work] = 0;
        foreach (var leftover in Directory.EnumerateDirectories(landlord.Root, WorkFolderPrefix + "*"))
        {
            if (!Building.ContainsKey(leftover))
            {
                DatabasesLandlord.TryDeleteFolder(leftover);
            }
        }
        return work;
    }

    /// <summary>The restore building <paramref name="work"/> has ended (moved it into place or given up).</summary>
    internal static void EndWork(string work) => Building.TryRemove(work, out _);
}
