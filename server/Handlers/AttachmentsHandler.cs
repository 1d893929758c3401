using System.Buffers;
using System.Text.Json;
using Jackdaw.Server.Databases;
using Jackdaw.Server.Documents;
using Jackdaw.Server.Documents.Commands;
using Jackdaw.Server.Errors;
using Jackdaw.Server.Hosting;
using Jackdaw.Server.Routing;
using Jackdaw.Server.Security;
using Jackdaw.Server.Wire;
using Microsoft.AspNetCore.Http.Features;

namespace Jackdaw.Server.Handlers;

/// <summary>
/// <c>/databases/*/attachments</c>: store (streamed in, never held whole), read (streamed out,
/// ranges), check and delete one attachment of a document, read one a revision kept
/// (<c>type=Revision</c>), and read several at once (<c>/attachments/bulk</c>), in the shapes
/// RavenDB's clients send and read.
/// </summary>
/// <remarks>
/// A download never holds a snapshot while it waits for the client: the engine's flusher cannot
/// pass the oldest reader, so scratch memory would grow with every write meanwhile. The metadata
/// comes from one snapshot; the bytes are read <see cref="DownloadStep"/> at a time, each step in
/// its own read transaction, which first checks that the content (immutable, addressed by its
/// hash) is still stored under the same stream. When it is not (deleted and cleaned up since),
/// the response is aborted: cut short, never other bytes.
/// </remarks>
public sealed class AttachmentsHandler(ServerContext server) : HandlerBase(server)
{
    private const int CopyBufferSize = 64 * 1024;

    /// <summary>Bytes of a download read per read transaction, buffered before the wait on the client.</summary>
    private const int DownloadStep = 1024 * 1024;

    [Route("/databases/*/attachments", "PUT")]
    [Access(RouteAccess.DatabaseReadWrite)]
    public async ValueTask Put(RequestContext context)
    {
        var database = Server.Databases.GetDatabase(context.GetCaptureMemory(0));
        var (id, name) = IdAndName(context);
        var contentType = new UrlQuery(context.Request.QueryString.Value).GetString("contentType");
        AttachmentContentTypes.ThrowIfInvalid(contentType);
        var expected = IfMatch(context);
        var maxSize = Server.Options.Attachments.MaxSize;
        // The route enforces Attachments:MaxSize itself, as it reads; Kestrel's body limit is for bodies read whole.
        if (context.HttpContext.Features.Get<IHttpMaxRequestBodySizeFeature>() is { IsReadOnly: false } limit)
        {
            limit.MaxRequestBodySize = null;
        }
        if (context.Request.ContentLength > maxSize)
        {
            throw new PayloadTooLargeException(string.Create(System.Globalization.CultureInfo.InvariantCulture,
                $"The attachment is {context.Request.ContentLength:N0} bytes, over {maxSize:N0}, the largest allowed ({AttachmentOptions.Section}:MaxSize); nothing was stored."));
        }
        // A missing document fails before the body is read (the link checks again).
        using (var reader = database.BeginRead())
        {
            if (!reader.TryGet(id, out _))
            {
                throw new DocumentDoesNotExistException(id, $"Cannot put attachment '{name}' on document '{id}': the document does not exist.");
            }
        }

        var source = await AttachmentUpload.ReadAsync(database, context.Request.Body, maxSize, $"{AttachmentOptions.Section}:MaxSize", context.RequestAborted).ConfigureAwait(false);
        var command = new PutAttachmentCommand(id, name, contentType, source, expected, context.Documents);
        try
        {
            await database.EnqueueAsync(command).ConfigureAwait(false);
        }
        catch
        {
            await AttachmentUpload.AbandonAsync(database, source).ConfigureAwait(false);
            throw;
        }

        var result = command.Result;
        var json = context.StartJson(StatusCodes.Status201Created);
        WriteDetails(json, result.ChangeVector, result.Name, result.DocumentId, result.ContentType, result.Hash, result.Size);
        await context.CompleteJsonAsync().ConfigureAwait(false);
    }

    [Route("/databases/*/attachments", "GET")]
    [Access(RouteAccess.DatabaseRead)]
    public ValueTask Get(RequestContext context)
    {
        var database = Server.Databases.GetDatabase(context.GetCaptureMemory(0));
        var (id, name) = IdAndName(context);
        var query = new UrlQuery(context.Request.QueryString.Value);
        if (RevisionChangeVector(query.GetString("type"), query.GetString("changeVector")) is { } changeVector)
        {
            return SendRevisionAsync(context, database, id, name, changeVector);
        }
        return SendAsync(context, database, id, name);
    }

    /// <summary>
    /// RavenDB's clients ask for an attachment of a document or of a revision with a POST of
    /// <c>{"Type":"Document"|"Revision","ChangeVector":…}</c>; a document's is the same as GET, a
    /// revision's as GET with <c>type=Revision&amp;changeVector=</c>.
    /// </summary>
    [Route("/databases/*/attachments", "POST")]
    [Access(RouteAccess.DatabaseRead)]
    public async ValueTask Post(RequestContext context)
    {
        var database = Server.Databases.GetDatabase(context.GetCaptureMemory(0));
        var (id, name) = IdAndName(context);
        string? changeVector;
        using (var body = await DocumentBodies.ReadJsonAsync(context.Request.BodyReader, context.RequestAborted).ConfigureAwait(false))
        {
            var root = body?.RootElement;
            changeVector = RevisionChangeVector(StringProperty(root, "Type"), StringProperty(root, "ChangeVector"));
        }
        if (changeVector is not null)
        {
            await SendRevisionAsync(context, database, id, name, changeVector).ConfigureAwait(false);
        }
        else
        {
            await SendAsync(context, database, id, name).ConfigureAwait(false);
        }
    }

    private static string? StringProperty(JsonElement? root, string name) =>
        root is { ValueKind: JsonValueKind.Object } value && value.TryGetProperty(name, out var property) && property.ValueKind == JsonValueKind.String ? property.GetString() : null;

    /// <summary>
    /// The revision's change vector (unquoted) when <paramref name="type"/> asks for a revision's
    /// attachment; null for a document's (no type, or <c>Document</c>).
    /// </summary>
    /// <exception cref="BadRequestException">A revision's attachment without a change vector.</exception>
    /// <exception cref="FeatureNotSupportedException">Another type (RavenDB's <c>Conflict</c>: Jackdaw has no conflicts).</exception>
    private static string? RevisionChangeVector(string? type, string? changeVector)
    {
        if (type is null || type.Equals("Document", StringComparison.OrdinalIgnoreCase))
        {
            return null;
        }
        if (!type.Equals("Revision", StringComparison.OrdinalIgnoreCase))
        {
            throw new FeatureNotSupportedException($"Attachments of type '{type}' are not served: this route reads the attachments of documents (\"Document\") and of revisions (\"Revision\", with the revision's change vector).");
        }
        var trimmed = changeVector?.Trim().Trim('"');
        if (string.IsNullOrEmpty(trimmed))
        {
            throw new BadRequestException("An attachment of type 'Revision' is named by the revision's change vector: send \"ChangeVector\" (POST) or changeVector= (GET), e.g. the @change-vector of a revision listed by GET /databases/{db}/revisions?id=.");
        }
        return trimmed;
    }

    [Route("/databases/*/attachments", "HEAD")]
    [Access(RouteAccess.DatabaseRead)]
    public ValueTask Head(RequestContext context)
    {
        var database = Server.Databases.GetDatabase(context.GetCaptureMemory(0));
        var (id, name) = IdAndName(context);
        using var reader = database.BeginRead();
        if (reader.GetAttachment(id, name) is not { } info)
        {
            context.Response.StatusCode = StatusCodes.Status404NotFound;
            return ValueTask.CompletedTask;
        }
        var etag = ChangeVectors.Quote(ChangeVectors.Format(database.NodeTag, info.Etag, database.DatabaseId));
        context.Response.Headers.ETag = etag;
        context.Response.StatusCode = NotModified(context, etag) ? StatusCodes.Status304NotModified : StatusCodes.Status200OK;
        return ValueTask.CompletedTask;
    }

    [Route("/databases/*/attachments", "DELETE")]
    [Access(RouteAccess.DatabaseReadWrite)]
    public async ValueTask Delete(RequestContext context)
    {
        var database = Server.Databases.GetDatabase(context.GetCaptureMemory(0));
        var (id, name) = IdAndName(context);
        await database.EnqueueAsync(new DeleteAttachmentCommand(id, name, IfMatch(context), context.Documents)).ConfigureAwait(false);
        context.Response.StatusCode = StatusCodes.Status204NoContent;
    }

    /// <summary>
    /// RavenDB's <c>GetAttachmentsOperation</c>: <c>{"AttachmentType":"Document","Attachments":[{"DocumentId","Name"}]}</c>
    /// answered with <c>{"AttachmentsMetadata":[{"Name","DocumentId","ContentType","Hash","ChangeVector","Size"}]}</c>
    /// followed directly by the bytes of each listed attachment, in order: the list from one snapshot,
    /// the bytes as <see cref="CopyAsync"/> reads them. An attachment that does not exist is left out
    /// of the list.
    /// </summary>
    [Route("/databases/*/attachments/bulk", "POST")]
    [Access(RouteAccess.DatabaseRead)]
    public async ValueTask Bulk(RequestContext context)
    {
        var database = Server.Databases.GetDatabase(context.GetCaptureMemory(0));
        var requests = await ReadBulkRequestAsync(context).ConfigureAwait(false);
        var found = new List<(string DocumentId, AttachmentInfo Info, long StreamId)>(requests.Count);
        using (var reader = database.BeginRead())
        {
            foreach (var (documentId, name) in requests)
            {
                if (reader.GetAttachment(documentId, name) is { } info && reader.TryGet(documentId, out var record))
                {
                    found.Add((record.Id, info, StreamOf(reader, info)));
                }
            }
        }

        context.Response.StatusCode = StatusCodes.Status200OK;
        context.Response.ContentType = "application/octet-stream";
        var output = context.Response.BodyWriter;
        using (var json = new Utf8JsonWriter(output, JsonDefaults.WriterOptions))
        {
            json.WriteStartObject();
            json.WriteStartArray("AttachmentsMetadata");
            foreach (var (documentId, info, _) in found)
            {
                WriteDetails(json, ChangeVectors.Format(database.NodeTag, info.Etag, database.DatabaseId), info.Name, documentId, info.ContentType, info.Hash, info.Size);
            }
            json.WriteEndArray();
            json.WriteEndObject();
            json.Flush();
            context.ResponseBytes.Add(json.BytesCommitted);
        }
        foreach (var (_, info, streamId) in found)
        {
            if (!await CopyAsync(context, database, info.Hash, streamId, 0, info.Size).ConfigureAwait(false))
            {
                return;
            }
        }
        await output.FlushAsync(context.RequestAborted).ConfigureAwait(false);
    }

    private static async ValueTask<List<(string DocumentId, string Name)>> ReadBulkRequestAsync(RequestContext context)
    {
        using var body = await DocumentBodies.ReadJsonAsync(context.Request.BodyReader, context.RequestAborted).ConfigureAwait(false);
        const string shape = "The body must be {\"AttachmentType\":\"Document\",\"Attachments\":[{\"DocumentId\":\"users/1\",\"Name\":\"photo.png\"}]}.";
        if (body?.RootElement is not { ValueKind: JsonValueKind.Object } root || !root.TryGetProperty("Attachments", out var list) || list.ValueKind != JsonValueKind.Array)
        {
            throw new BadRequestException(shape);
        }
        if (root.TryGetProperty("AttachmentType", out var type) && type.ValueKind == JsonValueKind.String && type.GetString() != "Document")
        {
            throw new FeatureNotSupportedException($"Attachments of type '{type.GetString()}' are not served: this route reads the attachments of documents (\"AttachmentType\":\"Document\").");
        }
        var requests = new List<(string, string)>(list.GetArrayLength());
        foreach (var item in list.EnumerateArray())
        {
            if (item.ValueKind != JsonValueKind.Object
                || !item.TryGetProperty("DocumentId", out var documentId) || documentId.ValueKind != JsonValueKind.String
                || !item.TryGetProperty("Name", out var name) || name.ValueKind != JsonValueKind.String)
            {
                throw new BadRequestException(shape);
            }
            var nameText = name.GetString()!;
            AttachmentNames.ThrowIfInvalid(nameText);
            requests.Add((DocumentBodies.ValidateId(documentId.GetString(), "DocumentId"), nameText));
        }
        return requests;
    }

    /// <summary>Answers with one attachment's bytes (or the range asked for).</summary>
    private static async ValueTask SendAsync(RequestContext context, DocumentDatabase database, string id, string name)
    {
        AttachmentInfo info;
        long streamId;
        using (var reader = database.BeginRead())
        {
            if (reader.GetAttachment(id, name) is not { } found)
            {
                if (!reader.TryGet(id, out _))
                {
                    throw new DocumentDoesNotExistException(id, $"Document '{id}' does not exist, so it has no attachment '{name}'.");
                }
                throw new AttachmentDoesNotExistException(id, name);
            }
            info = found;
            streamId = StreamOf(reader, info);
        }
        await SendContentAsync(context, database, info, streamId, ChangeVectors.Quote(ChangeVectors.Format(database.NodeTag, info.Etag, database.DatabaseId))).ConfigureAwait(false);
    }

    /// <summary>
    /// Answers with the bytes of an attachment as the revision of <paramref name="changeVector"/>
    /// lists it (its content is held by the revision, so it outlives the document's own attachment);
    /// the <c>ETag</c> is the revision's change vector.
    /// </summary>
    private static async ValueTask SendRevisionAsync(RequestContext context, DocumentDatabase database, string id, string name, string changeVector)
    {
        AttachmentInfo info;
        long streamId;
        using (var reader = database.BeginRead())
        {
            if (reader.GetRevisionAttachment(id, name, changeVector) is not { } found)
            {
                throw new AttachmentDoesNotExistException(id, name,
                    $"Document '{id}' has no revision of change vector '{changeVector}' with an attachment named '{name}' (list its revisions with GET /databases/{{db}}/revisions?id={id}).");
            }
            info = found;
            streamId = StreamOf(reader, info);
        }
        await SendContentAsync(context, database, info, streamId, $"\"{changeVector}\"").ConfigureAwait(false);
    }

    /// <summary>Writes an attachment's headers and its bytes (or the range asked for), read from stream <paramref name="streamId"/> a step per snapshot.</summary>
    private static async ValueTask SendContentAsync(RequestContext context, DocumentDatabase database, AttachmentInfo info, long streamId, string etag)
    {
        var response = context.Response;
        response.Headers.ETag = etag;
        response.Headers["Attachment-Hash"] = info.Hash;
        response.Headers["Attachment-Size"] = info.Size.ToString(System.Globalization.CultureInfo.InvariantCulture);
        response.Headers.AcceptRanges = "bytes";
        if (info.ContentType.Length > 0)
        {
            response.ContentType = info.ContentType;
        }
        if (NotModified(context, etag))
        {
            response.StatusCode = StatusCodes.Status304NotModified;
            return;
        }

        var (start, length) = (0L, info.Size);
        switch (AttachmentRange.Parse(context.Request.Headers.Range.ToString(), info.Size, out var from, out var to))
        {
            case AttachmentRange.Outcome.Satisfiable:
                (start, length) = (from, to - from + 1);
                response.StatusCode = StatusCodes.Status206PartialContent;
                response.Headers.ContentRange = $"bytes {from}-{to}/{info.Size}";
                break;
            case AttachmentRange.Outcome.Unsatisfiable:
                response.StatusCode = StatusCodes.Status416RangeNotSatisfiable;
                response.Headers.ContentRange = $"bytes */{info.Size}";
                return;
            default:
                response.StatusCode = StatusCodes.Status200OK;
                break;
        }
        response.ContentLength = length;
        await CopyAsync(context, database, info.Hash, streamId, start, length).ConfigureAwait(false);
    }

    /// <summary>The stream an attachment's content is stored as.</summary>
    private static long StreamOf(DocumentsReader reader, AttachmentInfo info) =>
        reader.GetAttachmentContent(info.Hash)?.StreamId
            ?? throw new InvalidDataException($"Attachment '{info.Name}' names content {info.Hash}, which is not stored: the attachment trees are inconsistent.");

    /// <summary>
    /// Copies bytes <paramref name="start"/> to <paramref name="start"/> + <paramref name="length"/>
    /// of content <paramref name="hash"/> to the response, <see cref="DownloadStep"/> per read
    /// transaction, and waits for the client with no snapshot open. Returns false when the response
    /// ends early: the client is gone, or the content is no longer stream <paramref name="streamId"/>
    /// (then the response is aborted, so that the client sees it cut short).
    /// </summary>
    private static async ValueTask<bool> CopyAsync(RequestContext context, DocumentDatabase database, string hash, long streamId, long start, long length)
    {
        var output = context.Response.BodyWriter;
        var position = start;
        var end = start + length;
        while (position < end)
        {
            var stepEnd = Math.Min(end, position + DownloadStep);
            using (var reader = database.BeginRead())
            {
                if (reader.GetAttachmentContent(hash) is not { } stored || stored.StreamId != streamId)
                {
                    context.HttpContext.Abort();
                    return false;
                }
                using var content = reader.OpenAttachmentContent(hash)!;
                content.Position = position;
                while (position < stepEnd)
                {
                    var memory = output.GetMemory(CopyBufferSize);
                    var read = content.Read(memory.Span[..(int)Math.Min(memory.Length, stepEnd - position)]);
                    if (read == 0)
                    {
                        throw new InvalidDataException($"Attachment content {hash} ended at byte {position}, before its size.");
                    }
                    output.Advance(read);
                    position += read;
                    // The response-size metrics (counted here: the pipe's unflushed bytes would
                    // include the chunked encoding's framing of a bulk answer).
                    context.ResponseBytes.Add(read);
                }
            }
            var flush = await output.FlushAsync(context.RequestAborted).ConfigureAwait(false);
            if (flush.IsCanceled || flush.IsCompleted)
            {
                return false;
            }
        }
        return true;
    }

    private static void WriteDetails(Utf8JsonWriter json, string changeVector, string name, string documentId, string contentType, string hash, long size)
    {
        json.WriteStartObject();
        json.WriteString("ChangeVector", changeVector);
        json.WriteString("Name", name);
        json.WriteString("DocumentId", documentId);
        json.WriteString("ContentType", contentType);
        json.WriteString("Hash", hash);
        json.WriteNumber("Size", size);
        json.WriteEndObject();
    }

    private static (string Id, string Name) IdAndName(RequestContext context)
    {
        var query = new UrlQuery(context.Request.QueryString.Value);
        var id = DocumentBodies.ValidateId(query.GetString("id"));
        var name = query.GetString("name") ?? throw new BadRequestException("Query parameter 'name' is required: the attachment's name, e.g. name=photo.png.");
        AttachmentNames.ThrowIfInvalid(name);
        return (id, name);
    }


}
