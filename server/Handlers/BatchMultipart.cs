using System.Buffers;
using Jackdaw.Server.Databases;
using Jackdaw.Server.Documents;
using Jackdaw.Server.Documents.Commands;
using Jackdaw.Server.Errors;
using Jackdaw.Server.Wire;
using Jackdaw.Storage.Blittable;
using Microsoft.AspNetCore.WebUtilities;
using Microsoft.Net.Http.Headers;

namespace Jackdaw.Server.Handlers;

/// <summary>
/// A <c>bulk_docs</c> body with attachments, as RavenDB's clients send a session's <c>SaveChanges</c>:
/// multipart (<c>multipart/mixed</c> from the .NET client, <c>multipart/form-data</c> from the Node.js
/// one), its first part the commands' JSON, then one part per <c>AttachmentPUT</c> command, in the
/// order of those commands. Parts are read one after the other straight from the request: each
/// attachment is streamed into storage (<see cref="AttachmentUpload"/>) before the next part is read,
/// so no part is ever held whole; the batch then links them all in its one transaction. It lives
/// with the handlers because it reads HTTP's multipart framing (ASP.NET's <c>MultipartReader</c>).
/// </summary>
/// <remarks>
/// A malformed body is the client's error: a boundary over RFC 2046's 70 characters is refused
/// up front, and what the reader throws on bad framing (a header line or header count over its
/// limits, a body that ends without the closing boundary) becomes a <see cref="BadRequestException"/>.
/// Only the reader's calls are translated: the same exception types from storage stay errors of
/// the server.
/// </remarks>
public static class BatchMultipart
{
    /// <summary>RFC 2046's longest boundary; ASP.NET's reader throws an <see cref="ArgumentException"/> past it.</summary>
    public const int MaxBoundaryLength = 70;

    public static bool IsMultipart(string? contentType) =>
        contentType is not null && contentType.StartsWith("multipart/", StringComparison.OrdinalIgnoreCase);

    /// <summary>
    /// Reads the commands and every attachment part. On failure, what was staged is given up; on
    /// success the caller gives up <paramref name="staged"/>'s sources if the batch then fails.
    /// </summary>
    public static async Task<List<BatchOperation>> ReadAsync(string contentType, Stream body, DocumentDatabase database, JsonOperationContext context, long maxCommandsBytes, long maxAttachmentSize, string attachmentSetting, List<AttachmentSource> staged, CancellationToken cancellationToken)
    {
        if (!MediaTypeHeaderValue.TryParse(contentType, out var mediaType) || HeaderUtilities.RemoveQuotes(mediaType.Boundary).Value is not { Length: > 0 } boundary)
        {
            throw new BadRequestException($"The multipart batch's Content-Type '{contentType}' has no boundary.");
        }
        if (boundary.Length > MaxBoundaryLength)
        {
            throw new BadRequestException($"The multipart batch's boundary is {boundary.Length} characters long, over {MaxBoundaryLength}, the most RFC 2046 allows.");
        }
        var reader = new MultipartReader(boundary, body) { BodyLengthLimit = null };
        var first = await NextSectionAsync(reader, cancellationToken).ConfigureAwait(false)
            ?? throw new BadRequestException("The multipart batch has no parts: its first part is the commands' JSON, {\"Commands\":[...]}.");
        var json = await ReadAllAsync(new PartBody(first.Body), maxCommandsBytes, cancellationToken).ConfigureAwait(false);
        var operations = BatchParser.ParseCommands(new ReadOnlySequence<byte>(json), context);

        try
        {
            var parts = 0;
            foreach (var operation in operations)
            {
                if (operation.Attachment is not { Kind: BatchAttachmentKind.Put } attachment)
                {
                    continue;
                }
                var section = await NextSectionAsync(reader, cancellationToken).ConfigureAwait(false)
                    ?? throw new BadRequestException($"The batch has more AttachmentPUT commands than attachment parts ({parts}): each AttachmentPUT's bytes are the part after the commands of the same rank.");
                parts++;
                var source = await AttachmentUpload.ReadAsync(database, new PartBody(section.Body), maxAttachmentSize, attachmentSetting, cancellationToken).ConfigureAwait(false);
                staged.Add(source);
                attachment.Source = source;
            }
            // Read to the end: a body cut off after the last part is still a failed request.
            while (await NextSectionAsync(reader, cancellationToken).ConfigureAwait(false) is { } extra)
            {
                await new PartBody(extra.Body).CopyToAsync(Stream.Null, cancellationToken).ConfigureAwait(false);
            }
        }
        catch
        {
            foreach (var source in staged)
            {
                await AttachmentUpload.AbandonAsync(database, source).ConfigureAwait(false);
            }
            staged.Clear();
            throw;
        }
        return operations;
    }

    private static async Task<MultipartSection?> NextSectionAsync(MultipartReader reader, CancellationToken cancellationToken)
    {
        try
        {
            return await reader.ReadNextSectionAsync(cancellationToken).ConfigureAwait(false);
        }
        catch (Exception e) when (IsFramingError(e))
        {
            throw Malformed(e);
        }
    }

    /// <summary>
    /// What the multipart reader throws on a malformed body: <see cref="InvalidDataException"/> for a
    /// limit, a plain <see cref="IOException"/> for a body that ends too early. Kestrel's own
    /// (a body too large or too slow) and a reset connection keep their meaning.
    /// </summary>
    private static bool IsFramingError(Exception e) =>
        e is InvalidDataException
        || (e is IOException && e is not BadHttpRequestException and not Microsoft.AspNetCore.Connections.ConnectionResetException);

    private static BadRequestException Malformed(Exception e) =>
        new($"The multipart batch is malformed: {e.Message}", e);

    private static async Task<byte[]> ReadAllAsync(Stream part, long max, CancellationToken cancellationToken)
    {
        var buffer = new ArrayBufferWriter<byte>(16 * 1024);
        while (true)
        {
            var memory = buffer.GetMemory(16 * 1024);
            var read = await part.ReadAsync(memory, cancellationToken).ConfigureAwait(false);
            if (read == 0)
            {
                return buffer.WrittenSpan.ToArray();
            }
            buffer.Advance(read);
            if (buffer.WrittenCount > max)
            {
                throw new PayloadTooLargeException($"The commands part of the multipart batch is over {max} bytes, the largest batch allowed (Limits:MaxBatchBodySize).");
            }
        }
    }

    /// <summary>A part's body whose framing errors (see <see cref="IsFramingError"/>) are the client's.</summary>
    private sealed class PartBody(Stream part) : Stream
    {
        public override bool CanRead => true;

        public override bool CanSeek => false;

        public override bool CanWrite => false;

        public override long Length => throw new NotSupportedException();

        public override long Position
        {
            get => throw new NotSupportedException();
            set => throw new NotSupportedException();
        }

        public override int Read(byte[] buffer, int offset, int count)
        {
            try
            {
                return part.Read(buffer, offset, count);
            }
            catch (Exception e) when (IsFramingError(e))
            {
                throw Malformed(e);
            }
        }

        public override async ValueTask<int> ReadAsync(Memory<byte> buffer, CancellationToken cancellationToken = default)
        {
            try
            {
                return await part.ReadAsync(buffer, cancellationToken).ConfigureAwait(false);
            }
            catch (Exception e) when (IsFramingError(e))
            {
                throw Malformed(e);
            }
        }

        public override Task<int> ReadAsync(byte[] buffer, int offset, int count, CancellationToken cancellationToken) =>
            ReadAsync(buffer.AsMemory(offset, count), cancellationToken).AsTask();

        public override void Flush()
        {
        }

        public override long Seek(long offset, SeekOrigin origin) => throw new NotSupportedException();

        public override void SetLength(long value) => throw new NotSupportedException();

        public override void Write(byte[] buffer, int offset, int count) => throw new NotSupportedException();
    }
}
