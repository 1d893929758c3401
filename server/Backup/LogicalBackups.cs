using System.Diagnostics;
using Jackdaw.Server.Backup.Smuggler;
using Jackdaw.Server.Databases;
using Jackdaw.Server.Documents;
using Jackdaw.Server.Errors;
using Jackdaw.Storage.Engine;

namespace Jackdaw.Server.Backup;

/// <summary>
/// Logical backups (RavenDB's <c>BackupType</c> <c>Backup</c>): files of a <see cref="LogicalChain"/>
/// written by the smuggler. A full backup holds the documents, revisions, index definitions,
/// identities and subscriptions; an incremental one the documents and tombstones changed since the
/// previous file (from its last etag plus one), the revisions and revision tombstones written since
/// (from its last revision etag plus one), and again the index definitions, identities and
/// subscriptions (a restore takes those from the last file, as RavenDB's does).
/// </summary>
/// <remarks>
/// The export reads the database in many short snapshots (<see cref="SmugglerExporter"/>), so a file
/// is not one snapshot: each document is as it was at some moment during the export, at or after
/// the file's last etag. Its tombstones are written before its documents
/// (<see cref="SmugglerExportOptions.DeletionsFirst"/>): a restore applies a file's deletions before
/// its documents, which are all newer. A full backup needs no tombstones: what was deleted before
/// it started is not in it, and what was deleted after is in the next incremental. An incremental
/// needs every tombstone after the previous file's last etag, which the tombstone cleaner would
/// remove: only a periodic task holds them between its runs
/// (<see cref="BackupRequest.TombstonesKeptAfter"/>), so a one-time backup is always full. Revisions
/// go the same way by revision etag: the revision tombstones up to the revision etag read with the
/// last etag are written with the tombstones, the revisions after the previous file's to the end of
/// their feed (a removed revision is never read again, so none a file's tombstones remove comes
/// back from it), and the task holds the revision tombstones too
/// (<see cref="BackupRequest.RevisionTombstonesKeptAfter"/>).
/// </remarks>
public static class LogicalBackups
{
    // Attachments travel with their documents; revisions from the previous file's last revision
    // etag (they have their own etags), their removals as revision tombstones.
    private const DatabaseItemType FullTypes = DatabaseItemType.Documents | DatabaseItemType.Attachments | DatabaseItemType.RevisionDocuments
        | DatabaseItemType.Indexes | DatabaseItemType.Identities | DatabaseItemType.Subscriptions;

    /// <summary>Writes one file of the logical chain in <see cref="BackupRequest.Folder"/>.</summary>
    /// <exception cref="BackupException">The folder cannot be made or written (the path is named).</exception>
    public static async Task<BackupResult> RunAsync(DocumentDatabase database, BackupRequest request, BackupRun progress, CancellationToken cancel)
    {
        var clock = Stopwatch.StartNew();
        var folder = BackupChain.PrepareFolder(request.Folder);

        var files = LogicalChain.Files(folder);
        var (previous, note) = Decide(database, files, request);
        var full = previous is null;
        var startEtag = full ? 1 : previous!.LastEtag + 1;
        var startRevisionEtag = full ? 1 : previous!.LastRevisionEtag!.Value + 1;
        var name = BackupChain.NextName(files.Count == 0 ? null : Path.GetFileName(files[^1]), full ? LogicalChain.FullExtension : LogicalChain.IncrementalExtension, DateTime.UtcNow);
        var path = Path.Combine(folder, name);
        var temporary = path + BackupChain.InProgressExtension;
        // The tombstones this file exports stay until it is written (a task's own hold keeps them after).
        using var hold = full ? null : database.Tombstones.Register(new RunHold(startEtag - 1, startRevisionEtag - 1));
        var options = new SmugglerExportOptions
        {
            OperateOnTypes = full ? FullTypes : FullTypes | DatabaseItemType.Tombstones,
            StartDocumentsEtag = startEtag,
            StartRevisionsEtag = startRevisionEtag,
            DeletionsFirst = true,
        };
        options.WriteHeader = (json, lastEtag, lastRevisionEtag) =>
            LogicalChain.WriteHeader(json, new LogicalBackupHeader(full, database.Name, database.DatabaseId, startEtag, lastEtag, startRevisionEtag, lastRevisionEtag));
        progress.Stage = full ? "exporting a full backup" : $"exporting the changes since etag {startEtag - 1}";
        SmugglerResult exported;
        try
        {
            try
            {
                var file = request.CreateFile?.Invoke(temporary) ?? new FileStream(temporary, FileMode.CreateNew, FileAccess.Write, FileShare.None, 1 << 16, FileOptions.Asynchronous);
                await using (file.ConfigureAwait(false))
                {
                    var counted = new CountingStream(file, progress);
                    exported = await DatabaseSmuggler.ExportAsync(database, counted, options, null, cancel).ConfigureAwait(false);
                    progress.Stage = "syncing";
                    if (file is FileStream durable)
                    {
                        durable.Flush(flushToDisk: true);
                    }
                    else
                    {
                        await file.FlushAsync(cancel).ConfigureAwait(false);
                    }
                }
            }
            catch
            {
                TryDelete(temporary);
                throw;
            }
            File.Move(temporary, path);
            FileDurability.SyncFolder(folder);
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException)
        {
            throw new BackupException($"Writing the backup file '{temporary}' failed: {e.Message}", e);
        }
        progress.AddEntries(exported.Documents.ReadCount + exported.RevisionDocuments.ReadCount + exported.Tombstones.ReadCount + exported.Indexes.ReadCount + exported.Identities.ReadCount + exported.Subscriptions.ReadCount);
        progress.Stage = "done";
        return new BackupResult
        {
            FileName = name,
            FilePath = path,
            Kind = full ? BackupKind.Full : BackupKind.Incremental,
            Logical = true,
            SizeInBytes = new FileInfo(path).Length,
            Etag = exported.LastEtag,
            RevisionEtag = exported.LastRevisionEtag,
            ChangeVector = exported.LastEtag == 0 ? "" : ChangeVectors.Format(database.NodeTag, exported.LastEtag, database.DatabaseId),
            Duration = clock.Elapsed,
            Entries = progress.Entries,
            Note = note,
        };
    }

    /// <summary>The header of the file the new one continues (null: a full backup), and why the kind differs from the request's.</summary>
    private static (LogicalBackupHeader? Previous, string? Note) Decide(DocumentDatabase database, List<string> files, BackupRequest request)
    {
        if (request.Full)
        {
            return (null, null);
        }
        if (request.TombstonesKeptAfter is not { } kept)
        {
            return (null, "a full backup: an incremental logical backup needs the tombstones since the previous file, and only a periodic backup task keeps them");
        }
        var start = files.FindLastIndex(f => LogicalChain.IsFull(Path.GetFileName(f)) == true);
        if (start < 0)
        {
            return (null, "a full backup: the folder holds none yet for an incremental backup to continue");
        }
        var last = Path.GetFileName(files[^1]);
        var header = LogicalChain.ReadHeader(files[^1]);
        if (header is null)
        {
            return (null, $"a full backup: '{last}' has no Jackdaw header, so where it ends is not known");
        }
        if (header.DatabaseId != database.DatabaseId)
        {
            return (null, $"a full backup: '{last}' is a backup of another database ('{header.Database}', id {header.DatabaseId})");
        }
        if (header.LastEtag < kept)
        {
            return (null, $"a full backup: '{last}' ends at etag {header.LastEtag}, and the tombstones were kept only after etag {kept}");
        }
        if (header.LastRevisionEtag is not { } lastRevision || request.RevisionTombstonesKeptAfter is not { } keptRevisions)
        {
            return (null, $"a full backup: '{last}' was written before the chain's revision etag was recorded, so the revisions removed since are not known");
        }
        if (lastRevision < keptRevisions)
        {
            return (null, $"a full backup: '{last}' ends at revision etag {lastRevision}, and the revision tombstones were kept only after revision etag {keptRevisions}");
        }
        return (header, null);
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

    /// <summary>Keeps the tombstones after <paramref name="after"/>, and the revision tombstones after <paramref name="afterRevision"/>, while a file is written.</summary>
    private sealed class RunHold(long after, long afterRevision) : ITombstoneConsumer, IRevisionTombstoneConsumer
    {
        public string Name => "Logical backup";

        public bool Consumes(string lowerCollection) => true;

        public long GetLastProcessedTombstoneEtag(string lowerCollection) => after;

        public string? HoldReason => "a logical backup is running";

        public long GetLastProcessedRevisionTombstoneEtag() => afterRevision;
    }

    /// <summary>Counts the bytes written (the operation's progress).</summary>
    private sealed class CountingStream(Stream inner, BackupRun progress) : Stream
    {
        public override bool CanRead => false;
        public override bool CanSeek => false;
        public override bool CanWrite => true;
        public override long Length => throw new NotSupportedException();
        public override long Position { get => throw new NotSupportedException(); set => throw new NotSupportedException(); }

        public override void Write(byte[] buffer, int offset, int count)
        {
            inner.Write(buffer, offset, count);
            progress.AddBytes(count);
        }

        public override async ValueTask WriteAsync(ReadOnlyMemory<byte> buffer, CancellationToken cancellationToken = default)
        {
            await inner.WriteAsync(buffer, cancellationToken).ConfigureAwait(false);
            progress.AddBytes(buffer.Length);
        }

        public override Task WriteAsync(byte[] buffer, int offset, int count, CancellationToken cancellationToken) =>
            WriteAsync(buffer.AsMemory(offset, count), cancellationToken).AsTask();

        public override void Flush() => inner.Flush();

        public override Task FlushAsync(CancellationToken cancellationToken) => inner.FlushAsync(cancellationToken);

        public override int Read(byte[] buffer, int offset, int count) => throw new NotSupportedException();

        public override long Seek(long offset, SeekOrigin origin) => throw new NotSupportedException();

        public override void SetLength(long value) => throw new NotSupportedException();
    }
}
