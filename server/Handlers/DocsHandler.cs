using System.Buffers;
using System.IO.Pipelines;
using Jackdaw.Server.Queries;
using Jackdaw.Server.Databases;
using Jackdaw.Server.Documents;
using Jackdaw.Server.Documents.Commands;
using Jackdaw.Server.Errors;
using Jackdaw.Server.Hosting;
using Jackdaw.Server.Wire;
using Jackdaw.Server.Routing;
using Jackdaw.Storage.Blittable;
using Jackdaw.Server.Security;

namespace Jackdaw.Server.Handlers;

/// <summary><c>/databases/*/docs</c>: load, page, check, store and delete documents.</summary>
public sealed class DocsHandler(ServerContext server) : HandlerBase(server)
{
    private static readonly ReadOnlyMemory<byte> ResultsSuffix = "],\"Includes\":{}}"u8.ToArray();
    private const int DefaultPageSize = 25;

    [Route("/databases/*/docs", "GET")]
    [Access(RouteAccess.DatabaseRead)]
    public ValueTask Get(RequestContext context)
    {
        var database = Server.Databases.GetDatabase(context.GetCaptureMemory(0));
        var query = new UrlQuery(context.Request.QueryString.Value);

        // One id is the common case: no list for it.
        string? single = null;
        List<string?>? ids = null;
        List<DocumentPath>? includes = null;
        var revisions = new RevisionIncludeParameters();
        var metadataOnly = false;
        foreach (var parameter in query)
        {
            if (parameter.NameEquals("metadataOnly"))
            {
                metadataOnly = ReadBoolean(UrlQuery.Decode(parameter.RawValue, parameter.RawName), "metadataOnly");
                continue;
            }
            if (parameter.NameEquals("include"))
            {
                if (DocumentIncludes.Parse(UrlQuery.Decode(parameter.RawValue, parameter.RawName)) is { } path)
                {
                    (includes ??= []).Add(path);
                }
                continue;
            }
            if (revisions.TryRead(parameter))
            {
                continue;
            }
            if (!parameter.NameEquals("id"))
            {
                continue;
            }
            // Among several ids an empty one is a hole, answered null, as RavenDB does; alone it is an error.
            var raw = UrlQuery.Decode(parameter.RawValue, parameter.RawName);
            string? id = raw.Length == 0 ? null : DocumentBodies.ValidateId(raw);
            if (single is null && ids is null)
            {
                if (id is null)
                {
                    ids = [null];
                }
                else
                {
                    single = id;
                }
            }
            else
            {
                ids ??= [single];
                ids.Add(id);
            }
        }

        if (ids is { Count: 1 } && ids[0] is null)
        {
            DocumentBodies.ValidateId(null, "id");
        }
        if (ids is not null)
        {
            return GetManyAsync(context, database, ids, includes, revisions.Collector(), metadataOnly);
        }
        if (single is not null)
        {
            return metadataOnly
                ? GetManyAsync(context, database, [single], includes, revisions.Collector(), metadataOnly, notFoundIfMissing: true)
                : GetOneAsync(context, database, single, includes, revisions.Collector());
        }

        return GetPageAsync(context, database, query, metadataOnly);
    }

    /// <summary>
    /// A page of documents: by prefix (filtered by <c>matches</c> and <c>exclude</c>, after
    /// <c>startAfter</c>), else newest first. A method of its own because its lambdas capture its
    /// locals: in <see cref="Get"/> the closure would be allocated for every load by id too.
    /// </summary>
    private ValueTask GetPageAsync(RequestContext context, DocumentDatabase database, UrlQuery query, bool metadataOnly)
    {
        var start = query.GetInt32("start", 0);
        var pageSize = PageSize(query, DefaultPageSize);
        var startsWith = query.GetString("startsWith");
        var matches = IdPattern.Parse(query.GetString("matches"));
        var exclude = IdPattern.Parse(query.GetString("exclude"));
        var startAfter = query.GetString("startAfter");
        if (startsWith is not null && (matches is not null || exclude is not null || !string.IsNullOrEmpty(startAfter)))
        {
            // RavenDB's loadStartingWith with wildcards: filtered in id order, then paged.
            StartResults(context);
            return DocumentResultsWriter.WritePageAsync(
                context.Response.BodyWriter,
                database,
                reader => KeysMatching(reader, startsWith, matches, exclude, startAfter, start, pageSize),
                ResultsSuffix,
                context.RequestAborted,
                metadataOnly,
                context.ResponseBytes);
        }
        StartResults(context);
        return DocumentResultsWriter.WritePageAsync(
            context.Response.BodyWriter,
            database,
            reader => startsWith is null ? reader.KeysByEtagDescending(start, pageSize) : reader.KeysStartingWith(startsWith, start, pageSize),
            ResultsSuffix,
            context.RequestAborted,
            metadataOnly,
            context.ResponseBytes);
    }

    [Route("/databases/*/docs", "HEAD")]
    [Access(RouteAccess.DatabaseRead)]
    public ValueTask Head(RequestContext context)
    {
        var database = Server.Databases.GetDatabase(context.GetCaptureMemory(0));
        var id = DocumentBodies.ValidateId(new UrlQuery(context.Request.QueryString.Value).GetString("id"));
        using var reader = database.BeginRead();
        ThrowIfConflicted(reader, id);
        if (!reader.TryGet(id, out var record))
        {
            context.Response.StatusCode = StatusCodes.Status404NotFound;
            return ValueTask.CompletedTask;
        }
        var etag = ChangeVectors.Quote(record.ChangeVectorOr(database.DatabaseId));
        context.Response.Headers.ETag = etag;
        context.Response.StatusCode = NotModified(context, etag) ? StatusCodes.Status304NotModified : StatusCodes.Status200OK;
        return ValueTask.CompletedTask;
    }

    [Route("/databases/*/docs", "PUT")]
    [Access(RouteAccess.DatabaseReadWrite)]
    public async ValueTask Put(RequestContext context)
    {
        context.LimitBody(RequestBodyKind.Document);
        var database = Server.Databases.GetDatabase(context.GetCaptureMemory(0));
        var id = DocumentBodies.ValidateId(new UrlQuery(context.Request.QueryString.Value).GetString("id"));
        var expected = IfMatch(context);
        var document = await DocumentBodies.ParseAsync(context.Request.BodyReader, context.Documents, context.RequestAborted).ConfigureAwait(false);
        var put = new DocumentToPut(id, document, DocumentBodies.GetCollection(document), expected);

        var command = new PutDocumentCommand(put, context.Documents);
        await database.EnqueueAsync(command).ConfigureAwait(false);

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
    [Access(RouteAccess.DatabaseReadWrite)]
    public async ValueTask Delete(RequestContext context)
    {
        var database = Server.Databases.GetDatabase(context.GetCaptureMemory(0));
        var id = DocumentBodies.ValidateId(new UrlQuery(context.Request.QueryString.Value).GetString("id"));
        await database.EnqueueAsync(new DeleteDocumentCommand(id, IfMatch(context))).ConfigureAwait(false);
        context.Response.StatusCode = StatusCodes.Status204NoContent;
    }

    private static async ValueTask GetOneAsync(RequestContext context, DocumentDatabase database, string id, List<DocumentPath>? includes, RevisionIncludes? revisions)
    {
        var output = context.Response.BodyWriter;
        using (var reader = database.BeginRead())
        {
            if (!WriteSingle(context, reader, id, includes, revisions))
            {
                return;
            }
        }
        // The whole answer waits in Kestrel's buffer with the headers not yet sent: it goes with
        // its length rather than in chunks (no chunk framing to write, nor a last chunk). Not for
        // a multi_get item, whose headers are copied into the outer answer.
        if (!context.IsInnerRequest && !context.Response.HasStarted)
        {
            context.Response.ContentLength = output.UnflushedBytes;
        }
        context.ResponseBytes.AddUnflushed(output);
        await output.FlushAsync(context.RequestAborted).ConfigureAwait(false);
    }

    /// <summary>Writes <c>{"Results":[doc],"Includes":{}[,"RevisionIncludes":[…]]}</c> (or a 404 error); false when nothing more is to be sent (304).</summary>
    private static bool WriteSingle(RequestContext context, DocumentsReader reader, string id, List<DocumentPath>? includes, RevisionIncludes? revisions)
    {
        ThrowIfConflicted(reader, id);
        if (!reader.TryGet(id, out var record))
        {
            // A miss is ordinary traffic (clients probe for documents): answer without an exception.
            context.Response.StatusCode = StatusCodes.Status404NotFound;
            context.Response.ContentType = JsonErrors.JsonContentType;
            JsonErrors.Write(context.Response.BodyWriter, ErrorTypes.DocumentDoesNotExist, $"Document '{id}' does not exist.");
            return true;
        }
        var response = context.Response;
        // With includes the answer depends on other documents (or revisions) too: no ETag (clients cache by it).
        if (includes is null && revisions is null)
        {
            var etag = ChangeVectors.Quote(record.ChangeVectorOr(reader.DatabaseId));
            response.Headers.ETag = etag;
            if (NotModified(context, etag))
            {
                response.StatusCode = StatusCodes.Status304NotModified;
                return false;
            }
        }
        response.StatusCode = StatusCodes.Status200OK;
        response.ContentType = JsonErrors.JsonContentType;
        var output = response.BodyWriter;
        output.Write("{\"Results\":["u8);
        BlittableJsonWriter.WriteTo(record.Document, output);
        output.Write("],\"Includes\":"u8);
        if (includes is null)
        {
            output.Write("{}"u8);
        }
        else
        {
            var included = new HashSet<string>(StringComparer.OrdinalIgnoreCase);
            DocumentIncludes.Collect(record.Document, includes, included);
            DocumentIncludes.Write(output, reader, included);
        }
        if (revisions is not null)
        {
            revisions.Collect(id, record.Document);
            RevisionIncludesWriter.Write(output, reader, revisions);
        }
        output.Write("}"u8);
        return true;
    }

    /// <summary>A document replication left in conflict (the keep policy) is answered as RavenDB does: 409, whichever route reads it.</summary>
    private static void ThrowIfConflicted(DocumentsReader reader, string id)
    {
        if (reader.MayHaveConflicts && reader.GetConflicts(id) is { Count: > 0 } conflicts)
        {
            throw new DocumentConflictException(id, conflicts.Count, reader.TryGet(id, out var record) ? record.Etag : 0);
        }
    }

    private static ValueTask GetManyAsync(RequestContext context, DocumentDatabase database, List<string?> ids, List<DocumentPath>? includes, RevisionIncludes? revisions, bool metadataOnly = false, bool notFoundIfMissing = false)
    {
        using (var reader = database.BeginRead())
        {
            if (reader.MayHaveConflicts)
            {
                foreach (var id in ids)
                {
                    if (id is not null)
                    {
                        ThrowIfConflicted(reader, id);
                    }
                }
            }
        }
        if (notFoundIfMissing)
        {
            using var reader = database.BeginRead();
            if (!reader.TryGet(ids[0]!, out _))
            {
                context.Response.StatusCode = StatusCodes.Status404NotFound;
                context.Response.ContentType = JsonErrors.JsonContentType;
                JsonErrors.Write(context.Response.BodyWriter, ErrorTypes.DocumentDoesNotExist, $"Document '{ids[0]}' does not exist.");
                return ValueTask.CompletedTask;
            }
        }
        StartResults(context);
        return DocumentResultsWriter.WriteByIdsAsync(context.Response.BodyWriter, database, ids, includes, context.RequestAborted, metadataOnly, revisions, context.ResponseBytes);
    }

    /// <summary>
    /// Storage keys of the documents under <paramref name="startsWith"/>, in id order, after
    /// <paramref name="startAfter"/>, whose id after the prefix <paramref name="matches"/> and not
    /// <paramref name="exclude"/>, <paramref name="start"/> of them skipped, at most <paramref name="pageSize"/>.
    /// </summary>
    private static List<byte[]> KeysMatching(DocumentsReader reader, string startsWith, IdPattern? matches, IdPattern? exclude, string? startAfter, int start, int pageSize)
    {
        var keys = new List<byte[]>();
        if (pageSize <= 0)
        {
            return keys;
        }
        var after = string.IsNullOrEmpty(startAfter) ? [] : DocumentIds.KeyPrefix(startAfter);
        var skipped = 0;
        using var documents = reader.GetDocumentsById(DocumentIds.KeyPrefix(startsWith), after).GetEnumerator();
        while (documents.MoveNext())
        {
            var id = System.Text.Encoding.UTF8.GetString(documents.Current.IdUtf8);
            var rest = id.AsSpan(Math.Min(startsWith.Length, id.Length));
            if ((matches is not null && !matches.Matches(rest)) || (exclude is not null && exclude.Matches(rest)))
            {
                continue;
            }
            if (skipped++ < start)
            {
                continue;
            }
            keys.Add(documents.CurrentKey.ToArray());
            if (keys.Count == pageSize)
            {
                break;
            }
        }
        return keys;
    }

    private static bool ReadBoolean(string value, string name) =>
        value.Equals("true", StringComparison.OrdinalIgnoreCase) || (value.Equals("false", StringComparison.OrdinalIgnoreCase)
            ? false
            : throw new BadRequestException($"Query parameter '{name}' is '{value}'; it is true or false."));

    /// <summary>
    /// <c>POST /databases/*/docs</c> with <c>{"Ids":[...]}</c>: a load of more ids than fit in a URL
    /// (RavenDB's clients switch to it past ~1 KB of ids), with <c>include</c>, <c>revisions</c> and
    /// <c>revisionsBefore</c> in the query as for GET.
    /// </summary>
    [Route("/databases/*/docs", "POST")]
    [Access(RouteAccess.DatabaseRead)]
    public async ValueTask PostIds(RequestContext context)
    {
        var database = Server.Databases.GetDatabase(context.GetCaptureMemory(0));
        List<DocumentPath>? includes = null;
        var revisions = new RevisionIncludeParameters();
        var metadataOnly = false;
        foreach (var parameter in new UrlQuery(context.Request.QueryString.Value))
        {
            if (parameter.NameEquals("include") && DocumentIncludes.Parse(UrlQuery.Decode(parameter.RawValue, parameter.RawName)) is { } path)
            {
                (includes ??= []).Add(path);
            }
            else if (parameter.NameEquals("metadataOnly"))
            {
                metadataOnly = ReadBoolean(UrlQuery.Decode(parameter.RawValue, parameter.RawName), "metadataOnly");
            }
            else
            {
                revisions.TryRead(parameter);
            }
        }
        var ids = await ReadIdsAsync(context).ConfigureAwait(false);
        await GetManyAsync(context, database, ids, includes, revisions.Collector(), metadataOnly).ConfigureAwait(false);
    }

    private static async ValueTask<List<string?>> ReadIdsAsync(RequestContext context)
    {
        using var json = (await DocumentBodies.ReadJsonAsync(context.Request.BodyReader, context.RequestAborted).ConfigureAwait(false))!;
        if (json.RootElement.ValueKind != System.Text.Json.JsonValueKind.Object
            || !json.RootElement.TryGetProperty("Ids", out var array) || array.ValueKind != System.Text.Json.JsonValueKind.Array)
        {
            throw new BadRequestException("The body must be {\"Ids\":[\"users/1\",...]}.");
        }
        var ids = new List<string?>(array.GetArrayLength());
        foreach (var item in array.EnumerateArray())
        {
            // A null or empty id is a hole in the list: answered null, as RavenDB does.
            if (item.ValueKind == System.Text.Json.JsonValueKind.Null || (item.ValueKind == System.Text.Json.JsonValueKind.String && item.GetString()!.Length == 0))
            {
                ids.Add(null);
                continue;
            }
            if (item.ValueKind != System.Text.Json.JsonValueKind.String)
            {
                throw new BadRequestException("'Ids' must be an array of document ids.");
            }
            ids.Add(DocumentBodies.ValidateId(item.GetString()));
        }
        return ids;
    }

    /// <summary>
    /// A load's revisions to include, as RavenDB's clients ask for them
    /// (<c>session.load(id, { includes: b => b.includeRevisions(...) })</c>): <c>&amp;revisions=</c>, a
    /// path to change vectors in the documents (repeated for several), and <c>&amp;revisionsBefore=</c>,
    /// a point in time (each document's newest revision at or before it).
    /// </summary>
    private struct RevisionIncludeParameters
    {
        private List<DocumentPath>? _paths;
        private DateTime? _before;

        /// <summary>Takes <paramref name="parameter"/> when it is one of these; false otherwise.</summary>
        public bool TryRead(UrlQuery.Parameter parameter)
        {
            if (parameter.NameEquals("revisions"))
            {
                if (DocumentIncludes.Parse(UrlQuery.Decode(parameter.RawValue, parameter.RawName)) is { } path)
                {
                    (_paths ??= []).Add(path);
                }
                return true;
            }
            if (parameter.NameEquals("revisionsBefore"))
            {
                var text = UrlQuery.Decode(parameter.RawValue, parameter.RawName);
                if (text.Length > 0)
                {
                    _before = JsonDefaults.ParseTime(text, "revisionsBefore");
                }
                return true;
            }
            return false;
        }

        /// <summary>The collector for the answer, or null when no revisions are asked for.</summary>
        public readonly RevisionIncludes? Collector() => _paths is null && _before is null ? null : RevisionIncludes.For(_paths, _before);
    }

    private static void StartResults(RequestContext context)
    {
        context.Response.StatusCode = StatusCodes.Status200OK;
        context.Response.ContentType = JsonErrors.JsonContentType;
    }


}
