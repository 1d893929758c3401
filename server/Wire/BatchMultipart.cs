using System.Buffers;
using Jackdaw.Server.Databases;
using Jackdaw.Server.Documents;
using Jackdaw.Server.Documents.Commands;
using Jackdaw.Server.Errors;
using Jackdaw.Storage.Blittable;
using Microsoft.AspNetCore.WebUtilities;
using Microsoft.Net.Http.Headers;

namespace Jackdaw.Server.Wire;

/// <summary>
/// A <c>bulk_docs</c> body with attachments, as RavenDB's clients send a session's <c>SaveChanges</c>:
/// multipart (<c>multipart/mixed</c> from the .NET client, <c>multipart/form-data</c> from the Node.js
/// one), its first part the commands' JSON, then one part per <c>AttachmentPUT</c> command, in the
/// order of those commands. Parts are read one after the other straight from the request: each
/// attachment is streamed into storage (<see cref="AttachmentUpload"/>) before the next part is read,
/// so no part is ever held whole; the batch then links them all in its one transaction.
/// </summary>
public static class BatchMultipart
{
    public static bool IsMultipart(string? contentType) =>
        contentType is not null && contentType.StartsWith("multipart/", StringComparison.OrdinalIgnoreCase);

    /// <summary>
    /// Reads the commands and every attachment part. On failure, what was staged is given up; on
    /// success the caller gives up <paramref name="staged"/>'s sources if the batch then fails.
    /// </summary>
    public static async Task<List<BatchOperation>> ReadAsync(string contentType, Stream body, DocumentDatabase database, JsonOperationContext context, long maxCommandsBytes, long maxAttachmentSize, string attachmentSetting, List<AttachmentSource> staged, CancellationToken cancellationToken)
    {
        if (!MediaTypeHeaderValue.TryParse(contentType, out var mediaType) || HeaderUtilities.RemoveQuotes(mediaType.Boundary).Value is not { Length: > 0 } boundary)
            throw new BadRequestException($"The multipart batch's Content-Type '{contentType}' has no boundary.");
        var reader = new MultipartReader(boundary, body) { BodyLengthLimit = null };
        var first = await reader.ReadNextSectionAsync(cancellationToken).ConfigureAwait(false)
            ?? throw new BadRequestException("The multipart batch has no parts: its first part is the commands' JSON, {\"Commands\":[...]}.");
        var json = await ReadAllAsync(first.Body, maxCommandsBytes, cancellationToken).ConfigureAwait(false);
        var operations = BatchParser.ParseCommands(new ReadOnlySequence<byte>(json), context);

        try
        {
            var parts = 0;
            foreach (var operation in operations)
            {
                if (operation.Attachment is not { Kind: BatchAttachmentKind.Put } attachment)
                    continue;
                var section = await reader.ReadNextSectionAsync(cancellationToken).ConfigureAwait(false)
                    ?? throw new BadRequestException($"The batch has more AttachmentPUT commands than attachment parts ({parts}): each AttachmentPUT's bytes are the part after the commands of the same rank.");
                parts++;
                var source = await AttachmentUpload.ReadAsync(database, section.Body, maxAttachmentSize, attachmentSetting, cancellationToken).ConfigureAwait(false);
                staged.Add(source);
                attachment.Source = source;
            }
            // Read to the end: a body cut off after the last part is still a failed request.
            while (await reader.ReadNextSectionAsync(cancellationToken).ConfigureAwait(false) is { } extra)
                await extra.Body.CopyToAsync(Stream.Null, cancellationToken).ConfigureAwait(false);
        }
        catch
        {
            foreach (var source in staged)
                await AttachmentUpload.AbandonAsync(database, source).ConfigureAwait(false);
            staged.Clear();
            throw;
        }
        return operations;
    }

    private static async Task<byte[]> ReadAllAsync(Stream part, long max, CancellationToken cancellationToken)
    {
        var buffer = new ArrayBufferWriter<byte>(16 * 1024);
        while (true)
        {
            var memory = buffer.GetMemory(16 * 1024);
            var read = await part.ReadAsync(memory, cancellationToken).ConfigureAwait(false);
            if (read == 0)
                return buffer.WrittenSpan.ToArray();
            buffer.Advance(read);
            if (buffer.WrittenCount > max)
                throw new PayloadTooLargeException($"The commands part of the multipart batch is over {max} bytes, the largest batch allowed (Limits:MaxBatchBodySize).");
        }
    }
}
