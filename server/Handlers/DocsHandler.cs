using System.Buffers;
using System.IO.Pipelines;
using Jackdaw.Server.Documents;
using Jackdaw.Server.Documents.Commands;
using Jackdaw.Server.Hosting;
using Jackdaw.Server.Http;
using Jackdaw.Server.Routing;
using Jackdaw.Storage.Blittable;

namespace Jackdaw.Server.Handlers;

/// <summary><c>/databases/*/docs</c>: load, page, check, store and delete documents.</summary>
public sealed class DocsHandler(ServerContext server) : HandlerBase(server)
{
    /// <summary>Flush the response once this much is buffered, so large results stream out.</summary>
    private const int FlushThreshold = 64 * 1024;
    private const int DefaultPageSize = 25;
    private const int MaxPageSize = 1024;

    [Route("/databases/*/docs", "GET")]
    public ValueTask Get(RequestContext context)
    {
        var database = Server.Databases.GetDatabase(context.GetCapture(0));
        var query = new QueryParameters(context.Request.QueryString.Value);

        // One id is the common case: no list for it.
        string? single = null;
        List<string>? ids = null;
        foreach (var parameter in query)
        {
            if (!parameter.NameEquals("id"))
                continue;
            var id = DocumentBodies.ValidateId(QueryParameters.Decode(parameter.RawValue, parameter.RawName));
            if (single is null)
            {
                single = id;
            }
            else
            {
                ids ??= [single];
                ids.Add(id);
            }
        }

        if (ids is not null)
            return GetManyAsync(context, database, ids);
        if (single is not null)
            return GetOneAsync(context, database, single);

        var start = query.GetInt32("start", 0);
        var pageSize = query.GetInt32("pageSize", DefaultPageSize, 0, MaxPageSize);
        var startsWith = query.GetString("startsWith");
        return WritePageAsync(
            context,
            database,
            reader => startsWith is null ? reader.KeysByEtagDescending(start, pageSize) : reader.KeysStartingWith(startsWith, start, pageSize),
            "],\"Includes\":{}}"u8.ToArray());
    }

    [Route("/databases/*/docs", "HEAD")]
    public ValueTask Head(RequestContext context)
    {
        var database = Server.Databases.GetDatabase(context.GetCapture(0));
        var id = DocumentBodies.ValidateId(new QueryParameters(context.Request.QueryString.Value).GetString("id"));
        using var reader = database.BeginRead();
        if (!reader.TryGet(id, out var record))
        {
            context.Response.StatusCode = StatusCodes.Status404NotFound;
            return ValueTask.CompletedTask;
        }
        var etag = ChangeVectors.FormatQuoted(record.Etag, database.DatabaseId);
        context.Response.Headers.ETag = etag;
        context.Response.StatusCode = NotModified(context, etag) ? StatusCodes.Status304NotModified : StatusCodes.Status200OK;
        return ValueTask.CompletedTask;
    }

    [Route("/databases/*/docs", "PUT")]
    public async ValueTask Put(RequestContext context)
    {
        var database = Server.Databases.GetDatabase(context.GetCapture(0));
        var id = DocumentBodies.ValidateId(new QueryParameters(context.Request.QueryString.Value).GetString("id"));
        var expected = IfMatch(context);
        var document = await DocumentBodies.ParseAsync(context.Request.BodyReader, context.Documents, context.RequestAborted).ConfigureAwait(false);
        var put = new DocumentToPut(id, document, DocumentBodies.GetCollection(document), expected);

        var command = new PutDocumentCommand(put, context.Documents);
        await database.Merger.EnqueueAsync(command).ConfigureAwait(false);

        var result = command.Result;
        context.Response.Headers.ETag = string.Concat("\"", result.ChangeVector, "\"");
        var json = context.StartJson(StatusCodes.Status201Created);
        json.WriteStartObject();
        json.WriteString("Id", result.Id);
        json.WriteString("ChangeVector", result.ChangeVector);
        json.WriteEndObject();
        await context.CompleteJsonAsync().ConfigureAwait(false);
    }

    [Route("/databases/*/docs", "DELETE")]
    public async ValueTask Delete(RequestContext context)
    {
        var database = Server.Databases.GetDatabase(context.GetCapture(0));
        var id = DocumentBodies.ValidateId(new QueryParameters(context.Request.QueryString.Value).GetString("id"));
        await database.Merger.EnqueueAsync(new DeleteDocumentCommand(id, IfMatch(context))).ConfigureAwait(false);
        context.Response.StatusCode = StatusCodes.Status204NoContent;
    }

    private static async ValueTask GetOneAsync(RequestContext context, DocumentDatabase database, string id)
    {
        var output = context.Response.BodyWriter;
        using (var reader = database.BeginRead())
        {
            if (!WriteSingle(context, reader, id))
                return;
        }
        await output.FlushAsync(context.RequestAborted).ConfigureAwait(false);
    }

    /// <summary>Writes <c>{"Results":[doc],"Includes":{}}</c> (or a 404 error); false when nothing more is to be sent (304).</summary>
    private static bool WriteSingle(RequestContext context, DocumentsReader reader, string id)
    {
        if (!reader.TryGet(id, out var record))
        {
            // A miss is ordinary traffic (clients probe for documents): answer without an exception.
            context.Response.StatusCode = StatusCodes.Status404NotFound;
            context.Response.ContentType = JsonErrors.JsonContentType;
            JsonErrors.Write(context.Response.BodyWriter, ErrorTypes.DocumentDoesNotExist, $"Document '{id}' does not exist.");
            return true;
        }
        var etag = ChangeVectors.FormatQuoted(record.Etag, reader.Database.DatabaseId);
        var response = context.Response;
        response.Headers.ETag = etag;
        if (NotModified(context, etag))
        {
            response.StatusCode = StatusCodes.Status304NotModified;
            return false;
        }
        response.StatusCode = StatusCodes.Status200OK;
        response.ContentType = JsonErrors.JsonContentType;
        var output = response.BodyWriter;
        output.Write("{\"Results\":["u8);
        BlittableJsonWriter.WriteTo(record.Document, output);
        output.Write("],\"Includes\":{}}"u8);
        return true;
    }

    private static async ValueTask GetManyAsync(RequestContext context, DocumentDatabase database, List<string> ids)
    {
        var response = context.Response;
        var output = response.BodyWriter;
        var reader = database.BeginRead();
        try
        {
            response.StatusCode = StatusCodes.Status200OK;
            response.ContentType = JsonErrors.JsonContentType;
            output.Write("{\"Results\":["u8);
            for (var i = 0; i < ids.Count; i++)
            {
                if (i > 0)
                    output.Write(","u8);
                WriteById(reader, ids[i], output);
                if (output.UnflushedBytes >= FlushThreshold)
                    reader = await FlushOutsideSnapshotAsync(context, database, reader).ConfigureAwait(false);
            }
        }
        finally
        {
            reader.Dispose();
        }
        output.Write("],\"Includes\":{}}"u8);
        await output.FlushAsync(context.RequestAborted).ConfigureAwait(false);
    }

    /// <summary>
    /// Writes <c>{"Results":[…]</c> and <paramref name="suffix"/> for the documents whose storage keys
    /// <paramref name="keysOf"/> picks. The page is chosen and read in one snapshot until the
    /// response must be flushed; a large page continues in a fresh snapshot after each flush.
    /// </summary>
    internal static async ValueTask WritePageAsync(RequestContext context, DocumentDatabase database, Func<DocumentsReader, List<byte[]>> keysOf, byte[] suffix)
    {
        var response = context.Response;
        var output = response.BodyWriter;
        var reader = database.BeginRead();
        try
        {
            var keys = keysOf(reader);
            response.StatusCode = StatusCodes.Status200OK;
            response.ContentType = JsonErrors.JsonContentType;
            output.Write("{\"Results\":["u8);
            var first = true;
            foreach (var key in keys)
            {
                if (!WriteByKey(reader, key, output, first))
                    continue;
                first = false;
                if (output.UnflushedBytes >= FlushThreshold)
                    reader = await FlushOutsideSnapshotAsync(context, database, reader).ConfigureAwait(false);
            }
        }
        finally
        {
            reader.Dispose();
        }
        output.Write(suffix);
        await output.FlushAsync(context.RequestAborted).ConfigureAwait(false);
    }

    /// <summary>
    /// Never hold a snapshot across network back-pressure: the flusher cannot pass the oldest
    /// reader, so a slow client would make the store's scratch memory grow. Close it, flush, and
    /// go on in a new one.
    /// </summary>
    private static async ValueTask<DocumentsReader> FlushOutsideSnapshotAsync(RequestContext context, DocumentDatabase database, DocumentsReader reader)
    {
        reader.Dispose();
        await context.Response.BodyWriter.FlushAsync(context.RequestAborted).ConfigureAwait(false);
        return database.BeginRead();
    }

    private static void WriteById(DocumentsReader reader, string id, PipeWriter output)
    {
        if (reader.TryGet(id, out var record))
            BlittableJsonWriter.WriteTo(record.Document, output);
        else
            output.Write("null"u8);
    }

    /// <summary>Writes the document stored under <paramref name="key"/>, preceded by a comma unless first.</summary>
    internal static bool WriteByKey(DocumentsReader reader, ReadOnlySpan<byte> key, PipeWriter output, bool first)
    {
        if (!reader.TryGetByKey(key, out var record))
            return false;
        if (!first)
            output.Write(","u8);
        BlittableJsonWriter.WriteTo(record.Document, output);
        return true;
    }

    private static string? IfMatch(RequestContext context)
    {
        var value = context.Request.Headers.IfMatch;
        return value.Count == 0 ? null : value.ToString();
    }

    /// <param name="quotedChangeVector">The ETag: the change vector in double quotes.</param>
    private static bool NotModified(RequestContext context, string quotedChangeVector)
    {
        var value = context.Request.Headers.IfNoneMatch;
        return value.Count > 0 && ChangeVectors.Matches(value.ToString(), quotedChangeVector.AsSpan(1, quotedChangeVector.Length - 2));
    }
}
