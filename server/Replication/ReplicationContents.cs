using System.Buffers;
using System.Net.WebSockets;
using Jackdaw.Server.Databases;
using Jackdaw.Server.Documents;
using Jackdaw.Server.WebSockets;

namespace Jackdaw.Server.Replication;

/// <summary>
/// The attachment contents a batch carries (<see cref="ReplicationBatch.Contents"/>), after its
/// message: each as one binary WebSocket message. The sender reads a content 1 MiB per read
/// transaction (a snapshot is never held while the network waits: it would hold the flusher back)
/// and sends it in frames of that size; the receiver stages it as an upload is staged
/// (<see cref="AttachmentUpload"/>: at most two 1 MiB steps in memory, whatever its size), and
/// checks its SHA-256 and size against the batch's.
/// </summary>
public static class ReplicationContents
{
    /// <summary>The largest frame the sender writes and the most of a content it reads per read transaction.</summary>
    public const int FrameBytes = 1024 * 1024;

    public static async Task SendAsync(WebSocket socket, DocumentDatabase database, IReadOnlyList<ReplicatedContent> contents, CancellationToken cancellationToken)
    {
        if (contents.Count == 0)
        {
            return;
        }
        var buffer = ArrayPool<byte>.Shared.Rent(FrameBytes);
        try
        {
            foreach (var content in contents)
            {
                long offset = 0;
                do
                {
                    var read = ReadFrame(database, content, offset, buffer.AsSpan(0, (int)Math.Min(FrameBytes, content.Size - offset)));
                    offset += read;
                    await socket.SendAsync(buffer.AsMemory(0, read), WebSocketMessageType.Binary, endOfMessage: offset >= content.Size, cancellationToken).ConfigureAwait(false);
                }
                while (offset < content.Size);
            }
        }
        finally
        {
            ArrayPool<byte>.Shared.Return(buffer);
        }
    }

    private static int ReadFrame(DocumentDatabase database, ReplicatedContent content, long offset, Span<byte> frame)
    {
        using var reader = database.BeginRead();
        // Contents are immutable and addressed by hash: the bytes are the same in every snapshot that holds them.
        using var stream = reader.OpenAttachmentContent(content.Base64Hash)
            ?? throw new InvalidOperationException($"Attachment content {content.Base64Hash} was deleted while a replication batch was sending it.");
        stream.Position = offset;
        var filled = 0;
        while (filled < frame.Length)
        {
            var read = stream.Read(frame[filled..]);
            if (read == 0)
            {
                throw new InvalidDataException($"Attachment content {content.Base64Hash} ends at {offset + filled} bytes, not {content.Size}.");
            }
            filled += read;
        }
        return filled;
    }

    /// <summary>
    /// Reads the contents following a batch: each one this node stores already is read and dropped,
    /// each other one staged. Returns them by base64 hash, ready to link; on failure, what was
    /// staged is given up (the caller gives up the rest with <see cref="AbandonAsync"/> when the
    /// apply fails).
    /// </summary>
    public static async Task<Dictionary<string, AttachmentSource>> ReceiveAsync(WebSocket socket, DocumentDatabase database, IReadOnlyList<ReplicatedContent> contents, TimeSpan idleTimeout, CancellationToken cancellationToken)
    {
        var sources = new Dictionary<string, AttachmentSource>(StringComparer.Ordinal);
        try
        {
            foreach (var content in contents)
            {
                bool stored;
                using (var reader = database.BeginRead())
                {
                    stored = reader.GetAttachmentContent(content.Base64Hash) is not null;
                }
                await using var message = new WebSocketMessageStream(socket, idleTimeout);
                if (stored || sources.ContainsKey(content.Base64Hash))
                {
                    await message.CopyToAsync(Stream.Null, cancellationToken).ConfigureAwait(false);
                    sources.TryAdd(content.Base64Hash, AttachmentSource.FromStored(content.Hash, content.Size));
                    continue;
                }
                var source = await AttachmentUpload.ReadAsync(database, message, content.Size, "the replication batch's content size", cancellationToken).ConfigureAwait(false);
                sources[content.Base64Hash] = source;
                if (source.Size != content.Size || !source.Hash.AsSpan().SequenceEqual(content.Hash))
                {
                    throw new InvalidDataException($"Attachment content {content.Base64Hash} of a replication batch came as {source.Size} bytes of hash {Convert.ToBase64String(source.Hash)}, not {content.Size} bytes of its own hash.");
                }
            }
        }
        catch
        {
            await AbandonAsync(database, sources).ConfigureAwait(false);
            throw;
        }
        return sources;
    }

    /// <summary>Gives up the staged contents of a batch that was not applied (the next open does it when even that fails).</summary>
    public static async Task AbandonAsync(DocumentDatabase database, Dictionary<string, AttachmentSource> sources)
    {
        foreach (var source in sources.Values)
        {
            await AttachmentUpload.AbandonAsync(database, source).ConfigureAwait(false);
        }
    }
}
