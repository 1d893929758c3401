using System.Buffers;
using System.Security.Cryptography;
using Jackdaw.Server.Documents;
using Jackdaw.Server.Documents.Commands;
using Jackdaw.Server.Errors;

namespace Jackdaw.Server.Databases;

/// <summary>
/// Reads an attachment's bytes from a request body into storage without ever holding the whole body:
/// a body of at most one staging step (<see cref="DocumentsTransaction.StagingStepBytes"/>, ~1 MiB) is
/// kept in memory and written by the transaction that links it; a larger one is written step by step
/// into a staged stream, each step a merged transaction of its own. The next step is read while the
/// previous one commits, and is queued only once that one is done: at most two steps (two buffers)
/// are in memory, whatever the size, and a client that sends faster than the disk writes waits.
/// The SHA-256 and the size are computed while reading.
/// </summary>
/// <remarks>
/// The staging commits need no durability of their own: the transaction that links the stream comes
/// later in the journal, so when it is durable so are they. A body that fails (cut off, shorter
/// than its Content-Length, over the size limit) leaves its staged stream as an orphan, which the
/// clean-up deletes; if even that cannot be written (the database is closing), the stream stays in
/// state "being written" and the next open makes it an orphan.
/// </remarks>
public static class AttachmentUpload
{
    /// <summary>
    /// Staged bytes after which an upload flushes the storage before it stages more (16 steps, ~16 MiB).
    /// Committed pages wait in scratch memory until a flush writes them to the data file, and the
    /// background flusher runs once a second or once 16 Ki page *versions* wait, where a chunk's
    /// 8-page overflow run is one version: without this, a fast upload kept up to a second of its
    /// chunks (hundreds of MB) in memory, 753 MB above idle for 1 GiB, far over the 64 MB.
    /// </summary>
    public const long FlushEveryBytes = 16L * DocumentsTransaction.StagingStepBytes;

    /// <summary>
    /// Reads <paramref name="body"/> to its end (at most <paramref name="maxSize"/> bytes) and returns
    /// the content, held in memory or staged, ready for a <see cref="PutAttachmentCommand"/>. If the
    /// link then fails, call <see cref="AbandonAsync"/>.
    /// </summary>
    /// <exception cref="PayloadTooLargeException">The body is longer than <paramref name="maxSize"/>; nothing is kept.</exception>
    public static async Task<AttachmentSource> ReadAsync(DocumentDatabase database, Stream body, long maxSize, string setting, CancellationToken cancellationToken)
    {
        const int step = DocumentsTransaction.StagingStepBytes;
        using var hash = IncrementalHash.CreateHash(HashAlgorithmName.SHA256);
        byte[][] buffers = [ArrayPool<byte>.Shared.Rent(step), ArrayPool<byte>.Shared.Rent(step)];
        StageAttachmentChunksCommand? pending = null;
        Task? pendingTask = null;
        long streamId = 0;
        long total = 0;
        long stagedSinceFlush = 0;
        var chunk = 0;
        try
        {
            for (var index = 0; ; index++)
            {
                var buffer = buffers[index & 1];
                var filled = await FillAsync(body, buffer.AsMemory(0, step), cancellationToken).ConfigureAwait(false);
                total += filled;
                if (total > maxSize)
                {
                    throw TooLarge(total, maxSize, setting);
                }
                hash.AppendData(buffer, 0, filled);
                var ended = filled < step;
                if (index == 0 && ended)
                {
                    return AttachmentSource.FromBytes(buffer.AsSpan(0, filled).ToArray(), hash.GetHashAndReset());
                }

                // The previous step must be committed before this one is queued: its stream id is
                // known then, and its buffer (the other one) is free for the next read.
                if (pendingTask is not null)
                {
                    await pendingTask.ConfigureAwait(false);
                    streamId = pending!.StreamId;
                    pendingTask = null;
                    // The step is durable (the merger answers then), so a flush writes it out of memory.
                    stagedSinceFlush += pending.EstimatedBytes;
                    if (stagedSinceFlush >= FlushEveryBytes)
                    {
                        stagedSinceFlush = 0;
                        await Task.Run(() => FlushAndCollect(database), cancellationToken).ConfigureAwait(false);
                    }
                }
                if (filled > 0)
                {
                    pending = new StageAttachmentChunksCommand(streamId == 0 ? null : streamId, chunk, buffer.AsMemory(0, filled));
                    pendingTask = database.EnqueueAsync(pending);
                    chunk += filled / AttachmentStreams.ChunkSize;
                }
                if (ended)
                {
                    if (pendingTask is not null)
                    {
                        await pendingTask.ConfigureAwait(false);
                        streamId = pending!.StreamId;
                        pendingTask = null;
                    }
                    return AttachmentSource.FromStaged(streamId, hash.GetHashAndReset(), total);
                }
            }
        }
        catch
        {
            if (pendingTask is not null)
            {
                try
                {
                    await pendingTask.ConfigureAwait(false);
                    streamId = pending!.StreamId;
                }
                catch (Exception)
                {
                    // That step failed: it wrote nothing, and the earlier ones are abandoned below.
                }
            }
            if (streamId != 0)
            {
                await AbandonAsync(database, streamId).ConfigureAwait(false);
            }
            throw;
        }
        finally
        {
            // Every queued step has completed (awaited above), so no command reads the buffers any more.
            ArrayPool<byte>.Shared.Return(buffers[0]);
            ArrayPool<byte>.Shared.Return(buffers[1]);
        }
    }

    /// <summary>
    /// Writes the staged chunks out of scratch memory, then collects the young generations: once
    /// flushed, the chunks' 64 KiB page arrays are the upload's only garbage, and the server GC's
    /// young-generation budget (tens to hundreds of MB per heap, more on a busy machine) otherwise
    /// lets a 1 GiB upload pile up 150 MB of them before a collection comes (seen in CI: +148 MB
    /// above idle, against +35 to +42 MB on a quiet machine). A gen-1 collection every 16 MiB costs a
    /// few milliseconds.
    /// </summary>
    private static void FlushAndCollect(DocumentDatabase database)
    {
        database.Storage.Flush();
        GC.Collect(1, GCCollectionMode.Forced, blocking: true, compacting: false);
    }

    /// <summary>Gives up a staged content whose link failed (nothing to do for one held in memory).</summary>
    public static Task AbandonAsync(DocumentDatabase database, AttachmentSource source) =>
        source.IsStaged ? AbandonAsync(database, source.StagedStreamId) : Task.CompletedTask;

    private static async Task AbandonAsync(DocumentDatabase database, long streamId)
    {
        try
        {
            await database.EnqueueAsync(new AbandonAttachmentStreamCommand(streamId)).ConfigureAwait(false);
        }
        catch (Exception e) when (e is DatabaseUnavailableException or ObjectDisposedException || database.IsClosing)
        {
            // The next open makes the stream an orphan.
        }
    }

    /// <summary>Reads until <paramref name="buffer"/> is full or the body ends; returns the bytes read.</summary>
    private static async ValueTask<int> FillAsync(Stream body, Memory<byte> buffer, CancellationToken cancellationToken)
    {
        var filled = 0;
        while (filled < buffer.Length)
        {
            var read = await body.ReadAsync(buffer[filled..], cancellationToken).ConfigureAwait(false);
            if (read == 0)
            {
                break;
            }
            filled += read;
        }
        return filled;
    }

    private static PayloadTooLargeException TooLarge(long read, long maxSize, string setting) =>
        new(string.Create(System.Globalization.CultureInfo.InvariantCulture, $"The attachment is over {maxSize:N0} bytes, the largest allowed ({setting}); {read:N0} bytes were read before the upload was refused, and nothing of it is kept."));
}
