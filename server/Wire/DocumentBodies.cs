using System.Buffers;
using System.IO.Pipelines;
using System.Text;
using Jackdaw.Server.Documents;
using Jackdaw.Storage.Blittable;
using Jackdaw.Server.Errors;

namespace Jackdaw.Server.Wire;

/// <summary>Reading documents out of request bodies, and the checks every write shares.</summary>
public static class DocumentBodies
{
    /// <summary>
    /// Parses the request body into a disk-mode blittable document as it arrives: the body is never
    /// held as one string or array, so a large document costs about its blittable size.
    /// </summary>
    public static async ValueTask<BlittableDocument> ParseAsync(PipeReader body, JsonOperationContext context, CancellationToken cancellationToken)
    {
        var builder = context.StartParse(BlittableMode.Disk);
        var sawBytes = false;
        while (true)
        {
            var result = await body.ReadAsync(cancellationToken).ConfigureAwait(false);
            var buffer = result.Buffer;
            sawBytes |= !buffer.IsEmpty;
            if (!sawBytes && result.IsCompleted)
            {
                body.AdvanceTo(buffer.End);
                throw new BadRequestException("The request body is empty; send a JSON object.");
            }

            SequencePosition consumed;
            try
            {
                consumed = builder.Feed(buffer, result.IsCompleted);
            }
            catch
            {
                body.AdvanceTo(buffer.End);
                throw;
            }
            body.AdvanceTo(consumed, buffer.End);
            if (result.IsCompleted)
            {
                return builder.Complete();
            }
        }
    }

    /// <summary>Reads the whole body (bounded by the server's maximum body size); release it with <c>AdvanceTo(result.Buffer.End)</c>.</summary>
    public static async ValueTask<ReadResult> BufferAsync(PipeReader body, CancellationToken cancellationToken)
    {
        while (true)
        {
            var result = await body.ReadAsync(cancellationToken).ConfigureAwait(false);
            if (result.IsCompleted || result.IsCanceled)
            {
                return result;
            }
            body.AdvanceTo(result.Buffer.Start, result.Buffer.End);
        }
    }

    /// <summary>The whole body (bounded by the server's maximum body size) as bytes: to check it and pass it on unchanged.</summary>
    public static async ValueTask<byte[]> ReadAllAsync(PipeReader body, CancellationToken cancellationToken)
    {
        var read = await BufferAsync(body, cancellationToken).ConfigureAwait(false);
        try
        {
            return read.Buffer.ToArray();
        }
        finally
        {
            body.AdvanceTo(read.Buffer.End);
        }
    }

    /// <summary>
    /// A small JSON body (an envelope, not a document: bounded by the server's body limit) read whole
    /// and parsed; an empty body is null when <paramref name="allowEmpty"/>, else invalid JSON.
    /// </summary>
    public static async ValueTask<System.Text.Json.JsonDocument?> ReadJsonAsync(PipeReader body, CancellationToken cancellationToken, bool allowEmpty = false)
    {
        var read = await BufferAsync(body, cancellationToken).ConfigureAwait(false);
        try
        {
            // Parse a copy: JsonDocument keeps reading the memory it was given for its lifetime, and
            // Kestrel reuses the pipe's buffers once they are advanced past (other requests' bytes
            // then showed up in queries under concurrent POSTs).
            return allowEmpty && read.Buffer.IsEmpty ? null : System.Text.Json.JsonDocument.Parse(read.Buffer.ToArray());
        }
        finally
        {
            body.AdvanceTo(read.Buffer.End);
        }
    }

    /// <summary>
    /// The document's collection from <c>@metadata.@collection</c>, or null; a 400 error when
    /// <c>@metadata</c> is not an object or the collection is not a usable name.
    /// </summary>
    /// <summary>The document's <c>@metadata.@id</c>, or null when it has none.</summary>
    public static string? GetMetadataId(BlittableDocument document)
    {
        if (!document.Root.TryGet("@metadata"u8, out var metadata) || metadata.Type != BlittableToken.Object)
        {
            return null;
        }
        if (!metadata.GetObject().TryGet("@id"u8, out var id) || id.Type == BlittableToken.Null)
        {
            return null;
        }
        if (id.Type != BlittableToken.String)
        {
            throw new BadRequestException("'@metadata.@id' must be a string.");
        }
        return id.GetString();
    }

    public static string? GetCollection(BlittableDocument document)
    {
        var root = document.Root;
        if (!root.TryGet("@metadata"u8, out var metadata) || metadata.Type == BlittableToken.Null)
        {
            return null;
        }
        if (metadata.Type != BlittableToken.Object)
        {
            throw new BadRequestException("'@metadata' must be a JSON object.");
        }
        if (!metadata.GetObject().TryGet("@collection"u8, out var collection) || collection.Type == BlittableToken.Null)
        {
            return null;
        }
        if (collection.Type != BlittableToken.String)
        {
            throw new BadRequestException("'@metadata.@collection' must be a string.");
        }
        var name = collection.GetString();
        if (string.IsNullOrWhiteSpace(name))
        {
            throw new BadRequestException("'@metadata.@collection' must not be empty.");
        }
        if (Encoding.UTF8.GetByteCount(name.ToLowerInvariant()) > StorageKeys.MaxCollectionBytes)
        {
            throw new BadRequestException($"The collection name '{name}' is longer than {StorageKeys.MaxCollectionBytes} bytes in UTF-8.");
        }
        return name;
    }

    /// <summary>A 400 error naming the problem when <paramref name="id"/> is not a valid document id.</summary>
    public static string ValidateId(string? id, string parameter = "id")
    {
        if (id is null)
        {
            throw new BadRequestException($"Query parameter '{parameter}' is required.");
        }
        if (DocumentIds.Validate(id) is { } problem)
        {
            throw new BadRequestException(problem);
        }
        return id;
    }

    /// <summary>Writes a UTF-8 literal into a buffer writer.</summary>
    public static void WriteRaw(IBufferWriter<byte> output, ReadOnlySpan<byte> bytes) => output.Write(bytes);
}
