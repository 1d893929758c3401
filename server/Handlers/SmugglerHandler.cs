using System.IO.Compression;
using System.Text.Json;
using Jackdaw.Server.Backup.Smuggler;
using Jackdaw.Server.Databases;
using Jackdaw.Server.Errors;
using Jackdaw.Server.Hosting;
using Jackdaw.Server.Routing;
using Jackdaw.Server.Security;
using Jackdaw.Server.Wire;
using Microsoft.AspNetCore.WebUtilities;
using Microsoft.Net.Http.Headers;

namespace Jackdaw.Server.Handlers;

/// <summary>
/// <c>/databases/*/smuggler/export</c> and <c>/smuggler/import</c>: a database as RavenDB's
/// <c>.ravendbdump</c> (gzipped JSON), both ways, streaming (<see cref="DatabaseSmuggler"/>), as
/// RavenDB's clients call them (<c>store.smuggler.export</c>/<c>import</c>). Each runs as an
/// operation under the client's <c>operationId</c> (or a new one): <c>operations/state</c> shows
/// its <c>SmugglerResult</c> counts while it runs and as its result, and <c>operations/kill</c>
/// stops it.
/// </summary>
public sealed class SmugglerHandler(ServerContext server) : HandlerBase(server)
{
    /// <summary>
    /// <c>POST /databases/*/smuggler/export[?operationId=&amp;startEtag=]</c> with RavenDB's export
    /// options as the JSON body (empty: the defaults; or the studio's form field <c>DownloadOptions</c>):
    /// the dump's bytes, gzipped, streamed as they are read (<c>application/octet-stream</c>, as an
    /// attachment named after the database). Bad options are a 400 before anything is sent; a
    /// failure once the dump has begun cuts the connection, so a client never keeps a dump that
    /// looks whole but is not (the operation's state says why).
    /// </summary>
    [Route("/databases/*/smuggler/export", "POST")]
    [Access(RouteAccess.DatabaseReadWrite)]
    public async ValueTask Export(RequestContext context)
    {
        var database = Server.Databases.GetDatabase(context.GetCaptureMemory(0));
        var (id, startEtag) = QueryOf(context, database);
        SmugglerExportOptions options;
        using (var json = await ReadExportOptionsAsync(context).ConfigureAwait(false))
        {
            options = SmugglerOptionsJson.ReadExport(json?.RootElement);
        }
        options.StartDocumentsEtag = startEtag;
        var result = new SmugglerResult();
        var operation = database.Operations.Start(id, result);
        using var killOrAbort = CancellationTokenSource.CreateLinkedTokenSource(context.RequestAborted, operation.Killed);

        context.Response.StatusCode = StatusCodes.Status200OK;
        context.Response.ContentType = "application/octet-stream";
        var fileName = $"Dump of {database.Name} {DateTime.UtcNow.ToString("yyyy-MM-dd HH-mm", System.Globalization.CultureInfo.InvariantCulture)}.ravendbdump";
        context.Response.Headers.ContentDisposition = "attachment; filename=" + Uri.EscapeDataString(fileName);
        var body = new ByteCountingStream(context.Response.Body);
        try
        {
            await DatabaseSmuggler.ExportAsync(database, body, options, operation, killOrAbort.Token).ConfigureAwait(false);
            operation.Complete(result.Documents.ReadCount);
        }
        catch (Exception e)
        {
            var error = Killed(e, operation, context) ? new BadRequestException($"Export {operation.Id} was killed (operations/kill); the dump sent so far is incomplete.", e) : e;
            operation.Fail(ErrorMapping.FailureOf(error), result.Documents.ReadCount);
            if (!context.Response.HasStarted && error != e)
            {
                throw error;
            }
            if (!context.Response.HasStarted)
            {
                throw;
            }
            // The dump has begun: only a cut connection tells the client it is not whole.
            context.HttpContext.Abort();
        }
        finally
        {
            context.ResponseBytes.Add(body.Bytes);
        }
    }

    /// <summary>
    /// <c>POST /databases/*/smuggler/import[?operationId=]</c>: RavenDB's form, multipart with an
    /// <c>importOptions</c> part (the options' JSON) and a file part (the dump); or, Jackdaw's
    /// shortcut, the dump itself as the body (default options). Anything not gzip is a 400 before
    /// the import starts. Answered, once done, with the <c>SmugglerResult</c> (refused items in
    /// <c>Refused</c>); a dump that cannot be read on is a 400 naming the byte, and its operation
    /// is faulted with the same message. The body has the bulk insert's limit
    /// (<c>Limits:MaxBulkInsertBodySize</c>), each document the document limit.
    /// </summary>
    [Route("/databases/*/smuggler/import", "POST")]
    [Access(RouteAccess.DatabaseReadWrite)]
    public async ValueTask Import(RequestContext context)
    {
        var database = Server.Databases.GetDatabase(context.GetCaptureMemory(0));
        context.LimitBody(RequestBodyKind.BulkInsert);
        var (id, _) = QueryOf(context, database);
        SmugglerImportOptions options;
        Stream body;
        try
        {
            (options, body) = await ReadImportAsync(context).ConfigureAwait(false);
        }
        catch (Exception e) when (e is InvalidDataException or IOException and not Microsoft.AspNetCore.Http.BadHttpRequestException && !context.RequestAborted.IsCancellationRequested)
        {
            // A multipart body cut short, an options part marked gzip that is not.
            throw new BadRequestException($"The import's multipart body cannot be read: {e.Message}", e);
        }
        var (documentBytes, documentSetting) = Server.Options.Limits.BodyLimit(RequestBodyKind.Document, Server.Options.MaxRequestBodySize);
        if (documentBytes is { } max)
        {
            options.MaxDocumentBytes = max;
        }
        options.MaxDocumentSetting = "Limits:" + documentSetting;
        var dump = await DatabaseSmuggler.OpenDumpAsync(body, context.RequestAborted).ConfigureAwait(false);

        var result = new SmugglerResult();
        var operation = database.Operations.Start(id, result);
        using var killOrAbort = CancellationTokenSource.CreateLinkedTokenSource(context.RequestAborted, operation.Killed);
        try
        {
            await DatabaseSmuggler.ImportAsync(database, dump, options, operation, killOrAbort.Token).ConfigureAwait(false);
            operation.Complete(result.Documents.ReadCount);
        }
        catch (Exception e) when (Killed(e, operation, context))
        {
            var killed = new BadRequestException($"Import {operation.Id} was killed (operations/kill); what was committed before stays.", e);
            operation.Fail(ErrorMapping.FailureOf(killed), result.Documents.ReadCount);
            throw killed;
        }
        catch (Exception e)
        {
            operation.Fail(ErrorMapping.FailureOf(context.ExplainLimit(e)), result.Documents.ReadCount);
            throw;
        }
        var json = context.StartJson();
        result.WriteResult(json);
        await context.CompleteJsonAsync().ConfigureAwait(false);
    }

    /// <summary>The client's <c>operationId</c> (RavenDB's clients ask <c>next-operation-id</c> first), or a new one; and RavenDB's <c>startEtag</c>.</summary>
    private static (long OperationId, long? StartEtag) QueryOf(RequestContext context, DocumentDatabase database)
    {
        var query = new UrlQuery(context.Request.QueryString.Value);
        var id = query.TryGetRaw("operationId", out _) ? query.GetInt64("operationId", 0, min: 1) : database.Operations.NextId();
        long? startEtag = query.TryGetRaw("startEtag", out _) ? query.GetInt64("startEtag", 0, min: 0) : null;
        return (id, startEtag);
    }

    private static bool Killed(Exception e, DatabaseOperation operation, RequestContext context) =>
        e is OperationCanceledException && operation.Killed.IsCancellationRequested && !context.RequestAborted.IsCancellationRequested;

    /// <summary>The export options: the JSON body (RavenDB's clients), the studio's <c>DownloadOptions</c> form field, or none.</summary>
    private static async ValueTask<JsonDocument?> ReadExportOptionsAsync(RequestContext context)
    {
        if (!context.Request.HasFormContentType)
        {
            return await DocumentBodies.ReadJsonAsync(context.Request.BodyReader, context.RequestAborted, allowEmpty: true).ConfigureAwait(false);
        }
        var form = await context.Request.ReadFormAsync(context.RequestAborted).ConfigureAwait(false);
        return form.TryGetValue("DownloadOptions", out var options) && !string.IsNullOrWhiteSpace(options) ? JsonDocument.Parse(options.ToString()) : null;
    }

    /// <summary>The import options and the dump's stream: from RavenDB's multipart form, or the body itself.</summary>
    private static async ValueTask<(SmugglerImportOptions Options, Stream Dump)> ReadImportAsync(RequestContext context)
    {
        var request = context.Request;
        if (request.ContentType is null || !MediaTypeHeaderValue.TryParse(request.ContentType, out var contentType)
            || !contentType.MediaType.Equals("multipart/form-data", StringComparison.OrdinalIgnoreCase))
        {
            return (new SmugglerImportOptions(), request.Body);
        }
        var boundary = HeaderUtilities.RemoveQuotes(contentType.Boundary).Value;
        if (string.IsNullOrEmpty(boundary))
        {
            throw new BadRequestException("The multipart body has no boundary in its Content-Type.");
        }
        var reader = new MultipartReader(boundary, request.Body);
        SmugglerImportOptions? options = null;
        while (await reader.ReadNextSectionAsync(context.RequestAborted).ConfigureAwait(false) is { } section)
        {
            if (!ContentDispositionHeaderValue.TryParse(section.ContentDisposition, out var disposition))
            {
                continue;
            }
            var name = HeaderUtilities.RemoveQuotes(disposition.Name).Value;
            var isFile = disposition.FileName.HasValue || disposition.FileNameStar.HasValue;
            if (!isFile && name == "importOptions")
            {
                var part = section.Headers is { } headers && headers.TryGetValue("Content-Encoding", out var encoding) && string.Equals(encoding.ToString(), "gzip", StringComparison.OrdinalIgnoreCase)
                    ? new GZipStream(section.Body, CompressionMode.Decompress)
                    : section.Body;
                using var json = await JsonDocument.ParseAsync(part, cancellationToken: context.RequestAborted).ConfigureAwait(false);
                options = SmugglerOptionsJson.ReadImport(json.RootElement);
                continue;
            }
            if (isFile)
            {
                return (options ?? new SmugglerImportOptions(), section.Body);
            }
        }
        throw new BadRequestException("The multipart body has no file part: send the dump as a file (RavenDB's form: an 'importOptions' part, then the file).");
    }
}
