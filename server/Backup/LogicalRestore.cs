using System.Diagnostics;
using System.IO.Compression;
using System.IO.Pipelines;
using System.Text.Json;
using Jackdaw.Server.Backup.Smuggler;
using Jackdaw.Server.Databases;
using Jackdaw.Server.Errors;

namespace Jackdaw.Server.Backup;

/// <summary>
/// Restores a logical chain (<see cref="LogicalChain"/>) into a new database, or verifies one. The
/// database is built in a folder of its own (<see cref="DatabaseRestore"/>'s work folder), opened
/// there unnamed to the server, and adopted under its name only once every file is imported: a
/// restore that fails leaves no database. Each file is imported in chain order, its deletions
/// before its documents; the index definitions, identities and subscriptions come from the last
/// file only (they are whole in every file), as RavenDB's restore does.
/// </summary>
/// <remarks>
/// Every file is gzip: the decompression checks each member's CRC-32 and length at its end, so a
/// damaged byte anywhere fails the import of that file, which is named. A document or tombstone the
/// import refuses fails the restore too (a backup that loses data is not restored); an index that
/// does not compile here (a RavenDB C# index) is left out, and the result's messages say so.
/// </remarks>
public static class LogicalRestore
{
    private const DatabaseItemType ChangeTypes = DatabaseItemType.Documents | DatabaseItemType.Attachments | DatabaseItemType.RevisionDocuments | DatabaseItemType.Tombstones;
    private const DatabaseItemType LastFileTypes = DatabaseItemType.Indexes | DatabaseItemType.Identities | DatabaseItemType.Subscriptions;

    /// <summary>Whether the folder holds a logical chain (and no binary one).</summary>
    /// <exception cref="BackupException">It holds files of both kinds.</exception>
    public static bool Holds(string folder)
    {
        if (LogicalChain.Files(folder).Count == 0)
        {
            return false;
        }
        if (BackupChain.Files(folder).Count > 0)
        {
            throw new BackupException($"The backup folder '{folder}' holds both logical backup files (*{LogicalChain.FullExtension}) and binary ones (*{BackupChain.SnapshotExtension}): restore a chain from a folder of its own.");
        }
        return true;
    }

    /// <summary>Imports the chain into a new database named <see cref="RestoreRequest.DatabaseName"/> (the caller checked the name is free).</summary>
    public static Task<RestoreResult> RestoreAsync(DatabasesLandlord landlord, RestoreRequest request, BackupRun progress, CancellationToken cancel)
    {
        var files = LogicalChain.FilesToRestore(request.BackupLocation, request.LastFileNameToRestore);
        var headers = CheckChain(request.BackupLocation, files);
        return Task.Run(async () =>
        {
            var clock = Stopwatch.StartNew();
            var work = DatabaseRestore.NewWorkFolder(landlord);
            try
            {
                Directory.CreateDirectory(work);
                RestoreResult result;
                var database = landlord.OpenDetached(request.DatabaseName, work);
                try
                {
                    result = await ImportAsync(database, files, headers, progress, cancel).ConfigureAwait(false);
                }
                finally
                {
                    await database.DisposeAsync().ConfigureAwait(false);
                }
                progress.Stage = "opening the database";
                if (!landlord.TryAdopt(request.DatabaseName, work))
                {
                    throw new DatabaseAlreadyExistsException(request.DatabaseName);
                }
                progress.Stage = "done";
                return DatabaseRestore.Finished(result, clock);
            }
            catch
            {
                DatabasesLandlord.TryDeleteFolder(work);
                throw;
            }
            finally
            {
                DatabaseRestore.EndWork(work);
            }
        }, cancel);
    }

    /// <summary>
    /// Reads every file of the chain through: gzip (each member's CRC-32 and length), the JSON of the
    /// whole dump, and the chain's continuity from the files' headers. Cheaper than an import, and
    /// it finds what damage a backup can suffer on disk; it does not try each document against the
    /// server's rules (a restore does, and refuses the chain if one fails).
    /// </summary>
    public static Task<RestoreResult> VerifyAsync(string backupLocation, string? lastFileNameToRestore, BackupRun progress, CancellationToken cancel)
    {
        var files = LogicalChain.FilesToRestore(backupLocation, lastFileNameToRestore);
        var headers = CheckChain(backupLocation, files);
        return Task.Run(async () =>
        {
            var clock = Stopwatch.StartNew();
            foreach (var file in files)
            {
                cancel.ThrowIfCancellationRequested();
                progress.Stage = $"reading '{Path.GetFileName(file)}'";
                await ReadThroughAsync(file, progress, cancel).ConfigureAwait(false);
                progress.AddEntries(1);
            }
            progress.Stage = "done";
            return DatabaseRestore.Finished(Describe(headers[^1]?.Database ?? "", files, headers, indexes: 0), clock);
        }, cancel);
    }

    /// <summary>The files' headers; refuses a chain with a gap (a file missing) or files of two databases.</summary>
    private static List<LogicalBackupHeader?> CheckChain(string folder, List<string> files)
    {
        var headers = new List<LogicalBackupHeader?>(files.Count);
        foreach (var file in files)
        {
            var header = LogicalChain.ReadHeader(file);
            var name = Path.GetFileName(file);
            if (header is not null && header.Full != (LogicalChain.IsFull(name) == true))
            {
                throw new BackupException($"The backup file '{name}' holds {(header.Full ? "a full" : "an incremental")} backup but is named as another kind.");
            }
            if (headers.Count > 0 && headers[^1] is { } previous && header is not null)
            {
                var previousName = Path.GetFileName(files[headers.Count - 1]);
                if (header.DatabaseId != previous.DatabaseId)
                {
                    throw new BackupException($"The backup chain in '{folder}' is broken: '{name}' is a backup of database id {header.DatabaseId}, '{previousName}' of {previous.DatabaseId}.");
                }
                if (header.StartEtag > previous.LastEtag + 1)
                {
                    throw new BackupException($"The backup chain in '{folder}' is broken: '{name}' starts at etag {header.StartEtag}, but '{previousName}' ends at etag {previous.LastEtag}: the changes between are in no file.");
                }
                if (header.StartRevisionEtag > previous.LastRevisionEtag + 1)
                {
                    throw new BackupException($"The backup chain in '{folder}' is broken: '{name}' starts at revision etag {header.StartRevisionEtag}, but '{previousName}' ends at revision etag {previous.LastRevisionEtag}: the revisions between are in no file.");
                }
            }
            headers.Add(header);
        }
        return headers;
    }

    private static async Task<RestoreResult> ImportAsync(DocumentDatabase database, List<string> files, List<LogicalBackupHeader?> headers, BackupRun progress, CancellationToken cancel)
    {
        var indexes = 0L;
        for (var i = 0; i < files.Count; i++)
        {
            cancel.ThrowIfCancellationRequested();
            var name = Path.GetFileName(files[i]);
            var last = i == files.Count - 1;
            progress.Stage = $"importing '{name}' ({i + 1} of {files.Count})";
            var options = new SmugglerImportOptions { OperateOnTypes = last ? ChangeTypes | LastFileTypes : ChangeTypes };
            SmugglerResult imported;
            var file = new FileStream(files[i], FileMode.Open, FileAccess.Read, FileShare.Read, 1 << 16, FileOptions.Asynchronous | FileOptions.SequentialScan);
            await using (file.ConfigureAwait(false))
            {
                try
                {
                    imported = await DatabaseSmuggler.ImportAsync(database, file, options, null, cancel).ConfigureAwait(false);
                }
                catch (BadRequestException e)
                {
                    throw new BackupException($"The backup file '{name}' is damaged: {e.Message}", e);
                }
                progress.AddBytes(file.Length);
            }
            var refused = imported.Refused.Where(r => r.Section is "Docs" or "Tombstones").ToList();
            if (refused.Count > 0)
            {
                var first = refused[0];
                throw new BackupException($"The backup file '{name}' holds {refused.Count} document(s) or tombstone(s) that cannot be imported; the first, {first.Section} #{first.Position}{(first.Id is null ? "" : $" '{first.Id}'")}: {first.Reason}");
            }
            if (last)
            {
                indexes = imported.Indexes.ReadCount - imported.Indexes.ErroredCount - imported.Indexes.SkippedCount;
            }
            progress.AddEntries(1);
        }
        return Describe(database.Name, files, headers, indexes);
    }

    /// <summary>Reads a file as an import would, writing nothing.</summary>
    private static async Task ReadThroughAsync(string path, BackupRun progress, CancellationToken cancel)
    {
        var name = Path.GetFileName(path);
        var file = new FileStream(path, FileMode.Open, FileAccess.Read, FileShare.Read, 1 << 16, FileOptions.Asynchronous | FileOptions.SequentialScan);
        await using (file.ConfigureAwait(false))
        {
            var gzip = new GZipStream(file, CompressionMode.Decompress, leaveOpen: true);
            var pipe = PipeReader.Create(gzip, new StreamPipeReaderOptions(bufferSize: 64 * 1024, leaveOpen: true));
            var dump = new DumpReader(pipe, cancel);
            try
            {
                var (first, _) = await dump.NextTokenAsync().ConfigureAwait(false);
                if (first != JsonTokenType.StartObject)
                {
                    throw new BadRequestException("the dump is not a JSON object.");
                }
                while (true)
                {
                    var (type, _) = await dump.NextTokenAsync().ConfigureAwait(false);
                    if (type == JsonTokenType.EndObject)
                    {
                        break;
                    }
                    await dump.SkipValueAsync().ConfigureAwait(false);
                }
                await dump.ExpectEndAsync().ConfigureAwait(false);
            }
            catch (BadRequestException e)
            {
                throw new BackupException($"The backup file '{name}' is damaged: {e.Message}", e);
            }
            finally
            {
                dump.Release();
                await pipe.CompleteAsync().ConfigureAwait(false);
                await gzip.DisposeAsync().ConfigureAwait(false);
            }
            progress.AddBytes(file.Length);
        }
    }

    private static RestoreResult Describe(string database, List<string> files, List<LogicalBackupHeader?> headers, long indexes) => new()
    {
        DatabaseName = database,
        Files = files.Select(Path.GetFileName).ToList()!,
        Etag = headers[^1]?.LastEtag ?? 0,
        Indexes = (int)indexes,
        SizeInBytes = files.Sum(f => new FileInfo(f).Length),
    };

}
