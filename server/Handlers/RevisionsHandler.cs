using System.Buffers;
using System.Globalization;
using System.Text.Json;
using Jackdaw.Server.Databases;
using Jackdaw.Server.Documents;
using Jackdaw.Server.Documents.Commands;
using Jackdaw.Server.Errors;
using Jackdaw.Server.Hosting;
using Jackdaw.Server.Routing;
using Jackdaw.Server.Security;
using Jackdaw.Server.Wire;

namespace Jackdaw.Server.Handlers;

/// <summary>
/// <c>/databases/*/revisions</c>: documents' revisions in RavenDB's shapes (reading by id, change
/// vector or time, the count, the bin), their configuration, and reverts (one document to a
/// revision, or everything to a point in time as an operation). Storage is in
/// <see cref="DocumentsTransaction"/>'s and <see cref="DocumentsReader"/>'s revisions parts.
/// </summary>
public sealed partial class RevisionsHandler(ServerContext server) : HandlerBase(server)
{
    /// <summary>RavenDB's default page of revisions.</summary>
    private const int DefaultPageSize = 25;

    /// <summary>
    /// A page flushes once this much is buffered, its snapshot closed around the flush (as
    /// <see cref="DocumentResultsWriter"/> does): a page may be up to a million revisions.
    /// </summary>
    private const int FlushThreshold = 256 * 1024;

    /// <summary>
    /// <c>GET /databases/*/revisions?id=&amp;start=&amp;pageSize=&amp;metadataOnly=</c> → <c>{"Results":[…],"TotalResults":n}</c>, newest first;
    /// <c>?changeVector=</c> (repeated for several) → <c>{"Results":[…]}</c> in order, null where none (404 for one that is missing);
    /// <c>?id=&amp;before=</c> → <c>{"Results":[the newest revision at or before]}</c> (empty when none).
    /// </summary>
    [Route("/databases/*/revisions", "GET")]
    [Access(RouteAccess.DatabaseRead)]
    public async ValueTask Get(RequestContext context)
    {
        var database = Server.Databases.GetDatabase(context.GetCaptureMemory(0));
        var query = new UrlQuery(context.Request.QueryString.Value);
        var changeVectors = new List<string>();
        string? id = null;
        string? beforeText = null;
        var metadataOnly = false;
        foreach (var parameter in query)
        {
            if (parameter.NameEquals("changeVector"))
            {
                changeVectors.Add(UrlQuery.Decode(parameter.RawValue, parameter.RawName));
            }
            else if (parameter.NameEquals("id"))
            {
                id = UrlQuery.Decode(parameter.RawValue, parameter.RawName);
            }
            else if (parameter.NameEquals("before"))
            {
                beforeText = UrlQuery.Decode(parameter.RawValue, parameter.RawName);
            }
            else if (parameter.NameEquals("metadataOnly"))
            {
                metadataOnly = UrlQuery.Decode(parameter.RawValue, parameter.RawName).Equals("true", StringComparison.OrdinalIgnoreCase);
            }
        }
        var start = PageNumber(query, "start", 0);
        var pageSize = RevisionsPageSize(query);

        var writer = new RevisionResultsWriter(context.Documents);
        var output = context.Response.BodyWriter;
        var reader = database.BeginRead();
        try
        {
            if (changeVectors.Count > 0)
            {
                var keys = changeVectors.Select(cv => reader.GetRevisionKey(cv.Trim('"'))).ToList();
                if (keys.Count == 1 && keys[0] is null)
                {
                    context.Response.StatusCode = StatusCodes.Status404NotFound;
                    return;
                }
                StartJson(context);
                output.Write("{\"Results\":["u8);
                for (var i = 0; i < keys.Count; i++)
                {
                    if (i > 0)
                    {
                        output.Write(","u8);
                    }
                    if (keys[i] is { } key && reader.TryGetRevisionByKey(key, out var revision))
                    {
                        writer.Write(revision, output, metadataOnly);
                    }
                    else
                    {
                        output.Write("null"u8);
                    }
                }
                output.Write("]}"u8);
                return;
            }

            id = RequiredId(id, "?id=users/1 (or ?changeVector=)");
            if (beforeText is not null)
            {
                var before = JsonDefaults.ParseTime(beforeText, "before");
                var key = reader.GetRevisionKeyBefore(id, before);
                StartJson(context);
                output.Write("{\"Results\":["u8);
                if (key is not null && reader.TryGetRevisionByKey(key, out var revision))
                {
                    writer.Write(revision, output, metadataOnly);
                }
                output.Write("]}"u8);
                return;
            }

            StartJson(context);
            var page = reader.GetRevisionKeysFor(id, start, pageSize);
            var total = reader.GetRevisionsCountFor(id);
            output.Write("{\"Results\":["u8);
            var first = true;
            foreach (var key in page)
            {
                if (!reader.TryGetRevisionByKey(key, out var revision))
                {
                    continue;
                }
                if (!first)
                {
                    output.Write(","u8);
                }
                first = false;
                writer.Write(revision, output, metadataOnly);
                if (output.UnflushedBytes >= FlushThreshold)
                {
                    reader = await DocumentResultsWriter.FlushOutsideSnapshotAsync(context.Response.BodyWriter, database, reader, context.RequestAborted, context.ResponseBytes).ConfigureAwait(false);
                }
            }
            output.Write("],\"TotalResults\":"u8);
            output.Write(System.Text.Encoding.ASCII.GetBytes(total.ToString(CultureInfo.InvariantCulture)));
            output.Write("}"u8);
            context.ResponseBytes.AddUnflushed(output);
            await output.FlushAsync(context.RequestAborted).ConfigureAwait(false);
        }
        finally
        {
            reader.Dispose();
        }
    }


    /// <summary><c>GET /databases/*/revisions/count?id=</c> → <c>{"RevisionsCount":n}</c>.</summary>
    [Route("/databases/*/revisions/count", "GET")]
    [Access(RouteAccess.DatabaseRead)]
    public async ValueTask Count(RequestContext context)
    {
        var database = Server.Databases.GetDatabase(context.GetCaptureMemory(0));
        var id = RequiredId(new UrlQuery(context.Request.QueryString.Value).GetString("id"), "?id=users/1");
        long count;
        using (var reader = database.BeginRead())
        {
            count = reader.GetRevisionsCountFor(id);
        }
        var json = context.StartJson();
        json.WriteStartObject();
        json.WriteNumber("RevisionsCount", count);
        json.WriteEndObject();
        await context.CompleteJsonAsync().ConfigureAwait(false);
    }

    /// <summary>
    /// <c>GET /databases/*/revisions/bin?start=&amp;pageSize=</c> → <c>{"Results":[…]}</c>: the delete
    /// revisions of the deleted documents that have revisions, newest delete first.
    /// </summary>
    [Route("/databases/*/revisions/bin", "GET")]
    [Access(RouteAccess.DatabaseRead)]
    public async ValueTask Bin(RequestContext context)
    {
        var database = Server.Databases.GetDatabase(context.GetCaptureMemory(0));
        var query = new UrlQuery(context.Request.QueryString.Value);
        var start = PageNumber(query, "start", 0);
        var pageSize = RevisionsPageSize(query);
        var writer = new RevisionResultsWriter(context.Documents);
        var output = context.Response.BodyWriter;
        var reader = database.BeginRead();
        try
        {
            StartJson(context);
            output.Write("{\"Results\":["u8);
            var first = true;
            foreach (var key in reader.GetRevisionsBinKeys(start, pageSize))
            {
                if (!reader.TryGetRevisionByKey(key, out var revision))
                {
                    continue;
                }
                if (!first)
                {
                    output.Write(","u8);
                }
                first = false;
                writer.Write(revision, output, metadataOnly: false);
                if (output.UnflushedBytes >= FlushThreshold)
                {
                    reader = await DocumentResultsWriter.FlushOutsideSnapshotAsync(context.Response.BodyWriter, database, reader, context.RequestAborted, context.ResponseBytes).ConfigureAwait(false);
                }
            }
            output.Write("]}"u8);
        }
        finally
        {
            reader.Dispose();
        }
        context.ResponseBytes.AddUnflushed(output);
        await output.FlushAsync(context.RequestAborted).ConfigureAwait(false);
    }

    /// <summary><c>GET /databases/*/revisions/config</c>: the configuration as stored; 204 when there is none.</summary>
    [Route("/databases/*/revisions/config", "GET")]
    [Access(RouteAccess.DatabaseRead)]
    public async ValueTask GetConfig(RequestContext context)
    {
        var database = Server.Databases.GetDatabase(context.GetCaptureMemory(0));
        var configuration = database.RevisionsConfiguration;
        if (configuration.Json.Length == 0)
        {
            context.Response.StatusCode = StatusCodes.Status204NoContent;
            return;
        }
        await context.WriteBytesAsync(configuration.Json, "application/json; charset=utf-8").ConfigureAwait(false);
    }

    /// <summary>
    /// <c>POST /databases/*/admin/revisions/config</c> with <c>{"Default":{...},"Collections":{...}}</c>
    /// (ConfigureRevisionsOperation; it replaces the configuration) → <c>{"RaftCommandIndex":n}</c>.
    /// On a clustered database it goes into the record (through the leader) and every node of it applies it.
    /// </summary>
    [Route("/databases/*/admin/revisions/config", "POST")]
    [Access(RouteAccess.DatabaseAdmin)]
    public async ValueTask SetConfig(RequestContext context)
    {
        if (await SetClusteredConfigAsync(context, conflicts: false).ConfigureAwait(false))
        {
            return;
        }
        var database = Server.Databases.GetDatabase(context.GetCaptureMemory(0));
        var body = await ReadBodyAsync(context).ConfigureAwait(false);
        var command = new ConfigureRevisionsCommand(RevisionsConfiguration.Parse(body));
        await database.EnqueueAsync(command).ConfigureAwait(false);
        await WriteIndexAsync(context, command.Index).ConfigureAwait(false);
    }

    /// <summary><c>GET /databases/*/revisions/conflicts/config</c>: the conflict revisions configuration; 204 when there is none.</summary>
    [Route("/databases/*/revisions/conflicts/config", "GET")]
    [Access(RouteAccess.DatabaseRead)]
    public async ValueTask GetConflictsConfig(RequestContext context)
    {
        var database = Server.Databases.GetDatabase(context.GetCaptureMemory(0));
        byte[]? json;
        using (var reader = database.BeginRead())
        {
            json = reader.GetRevisionsConflictsConfiguration();
        }
        if (json is null)
        {
            context.Response.StatusCode = StatusCodes.Status204NoContent;
            return;
        }
        await context.WriteBytesAsync(json, "application/json; charset=utf-8").ConfigureAwait(false);
    }

    /// <summary>
    /// <c>POST /databases/*/admin/revisions/conflicts/config</c> with a collection configuration
    /// (ConfigureRevisionsForConflictsOperation) → <c>{"RaftCommandIndex":n}</c>. Stored and
    /// answered (in the record on a clustered database); nothing applies it yet.
    /// </summary>
    [Route("/databases/*/admin/revisions/conflicts/config", "POST")]
    [Access(RouteAccess.DatabaseAdmin)]
    public async ValueTask SetConflictsConfig(RequestContext context)
    {
        if (await SetClusteredConfigAsync(context, conflicts: true).ConfigureAwait(false))
        {
            return;
        }
        var database = Server.Databases.GetDatabase(context.GetCaptureMemory(0));
        var body = await ReadBodyAsync(context).ConfigureAwait(false);
        var normalized = RevisionsCollectionConfiguration.NormalizeConflictsConfiguration(body);
        var command = new ConfigureRevisionsForConflictsCommand(normalized);
        await database.EnqueueAsync(command).ConfigureAwait(false);
        await WriteIndexAsync(context, command.Index).ConfigureAwait(false);
    }

    /// <summary>
    /// <c>POST /databases/*/revisions/revert</c> with <c>{"Time":"2026-01-02T03:04:05.0000000Z","WindowInSec":345600,"Collections":["Orders"]}</c>
    /// (RevertRevisionsOperation) → <c>{"OperationId","OperationNodeTag"}</c>; see <see cref="RevertRevisionsOperation"/>.
    /// </summary>
    [Route("/databases/*/revisions/revert", "POST")]
    [Access(RouteAccess.DatabaseReadWrite)]
    public async ValueTask Revert(RequestContext context)
    {
        var database = Server.Databases.GetDatabase(context.GetCaptureMemory(0));
        var body = await ReadBodyAsync(context).ConfigureAwait(false);
        const string Example = "{\"Time\":\"2026-01-02T03:04:05.0000000Z\",\"WindowInSec\":345600,\"Collections\":[\"Orders\"]}";
        DateTime time;
        var window = RevertRevisionsOperation.DefaultWindow;
        List<string>? collections = null;
        using (var document = ParseObject(body, "The revert request", Example))
        {
            var root = document.RootElement;
            if (!root.TryGetProperty("Time", out var timeJson) || timeJson.ValueKind != JsonValueKind.String)
            {
                throw new BadRequestException($"The revert request needs 'Time', the point in time to revert to (UTC), e.g. {Example}.");
            }
            time = JsonDefaults.ParseTime(timeJson.GetString()!, "Time");
            if (root.TryGetProperty("WindowInSec", out var windowJson) && windowJson.ValueKind != JsonValueKind.Null)
            {
                if (windowJson.ValueKind != JsonValueKind.Number || !windowJson.TryGetInt64(out var seconds) || seconds < 0 || seconds > TimeSpan.MaxValue.TotalSeconds)
                {
                    throw new BadRequestException($"The revert request's 'WindowInSec' must be a number of seconds, zero or more; it is {windowJson.GetRawText()}.");
                }
                window = TimeSpan.FromSeconds(seconds);
            }
            if (root.TryGetProperty("Collections", out var collectionsJson) && collectionsJson.ValueKind != JsonValueKind.Null)
            {
                if (collectionsJson.ValueKind != JsonValueKind.Array || collectionsJson.EnumerateArray().Any(c => c.ValueKind != JsonValueKind.String))
                {
                    throw new BadRequestException($"The revert request's 'Collections' must be an array of collection names, e.g. {Example}.");
                }
                collections = collectionsJson.EnumerateArray().Select(c => c.GetString()!).ToList();
            }
        }
        var operation = RevertRevisionsOperation.Start(database, time, window, collections, ErrorMapping.FailureOf);
        await WriteOperationIdAsync(context, operation.Id).ConfigureAwait(false);
    }

    /// <summary>
    /// <c>POST /databases/*/revisions/revert/docs</c> with <c>{"IdToChangeVector":{"users/1":"A:5-…"}}</c>
    /// (RavenDB's RevertRevisionsByIdOperation): each document back to that revision, in one
    /// transaction, all or none → 204. A change vector that names no revision of its document → 400.
    /// </summary>
    [Route("/databases/*/revisions/revert/docs", "POST")]
    [Access(RouteAccess.DatabaseReadWrite)]
    public async ValueTask RevertDocuments(RequestContext context)
    {
        var database = Server.Databases.GetDatabase(context.GetCaptureMemory(0));
        var body = await ReadBodyAsync(context).ConfigureAwait(false);
        const string Example = "{\"IdToChangeVector\":{\"users/1\":\"A:5-dbid\"}}";
        var pairs = new List<KeyValuePair<string, string>>();
        using (var document = ParseObject(body, "The revert request", Example))
        {
            if (!document.RootElement.TryGetProperty("IdToChangeVector", out var map) || map.ValueKind != JsonValueKind.Object)
            {
                throw new BadRequestException($"The revert request needs 'IdToChangeVector', an object of document id to revision change vector, e.g. {Example}.");
            }
            foreach (var pair in map.EnumerateObject())
            {
                if (pair.Value.ValueKind != JsonValueKind.String || pair.Value.GetString() is not { Length: > 0 } changeVector)
                {
                    throw new BadRequestException($"The revert request's change vector for '{pair.Name}' must be a non-empty string, e.g. {Example}.");
                }
                pairs.Add(new KeyValuePair<string, string>(DocumentBodies.ValidateId(pair.Name), changeVector));
            }
        }
        if (pairs.Count > 0)
        {
            await database.EnqueueAsync(new RevertToRevisionsCommand(pairs, context.Documents)).ConfigureAwait(false);
        }
        context.Response.StatusCode = StatusCodes.Status204NoContent;
    }

    private static async ValueTask<byte[]> ReadBodyAsync(RequestContext context)
    {
        context.LimitBody(RequestBodyKind.Other);
        var reader = context.Request.BodyReader;
        var read = await DocumentBodies.BufferAsync(reader, context.RequestAborted).ConfigureAwait(false);
        var bytes = read.Buffer.ToArray();
        reader.AdvanceTo(read.Buffer.End);
        return bytes;
    }

    private static JsonDocument ParseObject(byte[] body, string what, string example)
    {
        JsonDocument document;
        try
        {
            document = JsonDocument.Parse(body);
        }
        catch (JsonException e)
        {
            throw new BadRequestException($"{what} is not valid JSON ({e.Message}); send e.g. {example}.", e);
        }
        if (document.RootElement.ValueKind != JsonValueKind.Object)
        {
            document.Dispose();
            throw new BadRequestException($"{what} must be a JSON object, e.g. {example}.");
        }
        return document;
    }

    private static async ValueTask WriteIndexAsync(RequestContext context, long index)
    {
        var json = context.StartJson();
        json.WriteStartObject();
        json.WriteNumber("RaftCommandIndex", index);
        json.WriteEndObject();
        await context.CompleteJsonAsync().ConfigureAwait(false);
    }

    private static string RequiredId(string? id, string example)
    {
        if (string.IsNullOrEmpty(id))
        {
            throw new BadRequestException($"Query parameter 'id' (the document whose revisions to read) is required, e.g. {example}.");
        }
        return DocumentBodies.ValidateId(id);
    }

    /// <summary>A page size, at most <c>Limits:MaxQueryLimit</c> as a page of documents.</summary>
    private int RevisionsPageSize(UrlQuery query)
    {
        var pageSize = PageNumber(query, "pageSize", DefaultPageSize);
        var max = Server.Options.Limits.MaxQueryLimit;
        if (pageSize > max)
        {
            throw new BadRequestException($"pageSize {pageSize} is over {max.ToString("N0", CultureInfo.InvariantCulture)}, the most revisions one page holds (Limits:MaxQueryLimit); page on with start.");
        }
        return pageSize;
    }

    /// <summary>A paging number; the Node.js client's bin command sends <c>pageSize=null</c> or <c>undefined</c> for none.</summary>
    private static int PageNumber(UrlQuery query, string name, int defaultValue)
    {
        if (query.GetString(name) is not { Length: > 0 } text || text is "null" or "undefined")
        {
            return defaultValue;
        }
        if (!int.TryParse(text, NumberStyles.None, CultureInfo.InvariantCulture, out var value))
        {
            throw new BadRequestException($"Query parameter '{name}' must be an integer of 0 or more; got '{text}'.");
        }
        return value;
    }

    private static void StartJson(RequestContext context)
    {
        context.Response.StatusCode = StatusCodes.Status200OK;
        context.Response.ContentType = "application/json; charset=utf-8";
    }
}
