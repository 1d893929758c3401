using System.Buffers;
using System.Text;
using System.Text.Json;
using Jackdaw.Server.Errors;
using Jackdaw.Server.Hosting;
using Jackdaw.Server.Wire;
using Jackdaw.Server.Routing;
using Jackdaw.Server.Security;

namespace Jackdaw.Server.Handlers;

/// <summary>
/// <c>POST /databases/*/multi_get</c>, RavenDB's lazy operations: several requests in one round
/// trip. Each item runs through the router and its handler as an <see cref="InnerRequest"/> (no
/// loopback connection) and is answered in RavenDB's shape, in the order asked:
/// <c>{"Results":[{"StatusCode":200,"Headers":{"ETag":"..."},"Result":body or null}]}</c>. An item
/// that fails has its own status and <c>{"Type","Message"}</c> body; the others are unaffected.
/// </summary>
public sealed class MultiGetHandler(ServerContext server) : HandlerBase(server)
{
    /// <summary>Answers are sent on once this much is buffered, so a batch of large results is not held whole.</summary>
    private const int FlushThreshold = 64 * 1024;

    private const string DatabasesPrefix = "/databases/";

    [Route("/databases/*/multi_get", "POST")]
    [Access(RouteAccess.DatabaseRead)]
    public async ValueTask Post(RequestContext context)
    {
        if (context.IsInnerRequest)
        {
            throw new BadRequestException("A multi_get cannot contain another multi_get.");
        }

        // A missing database fails the whole batch with RavenDB's 503, before any item runs.
        var database = context.GetCapture(0).ToString();
        Server.Databases.GetDatabase(database);

        context.LimitBody(RequestBodyKind.Batch);
        byte[] body;
        var read = await DocumentBodies.BufferAsync(context.Request.BodyReader, context.RequestAborted).ConfigureAwait(false);
        try
        {
            body = read.Buffer.ToArray();
        }
        finally
        {
            context.Request.BodyReader.AdvanceTo(read.Buffer.End);
        }

        var requests = MultiGetRequest.ParseAll(body);
        using var inner = context.CreateInnerRequest();
        var output = context.Response.BodyWriter;
        var json = context.StartJson();
        json.WriteStartObject();
        json.WriteStartArray("Results");
        foreach (var request in requests)
        {
            var (path, query) = Target(request, database);
            if (path is null)
            {
                inner.Reject(request.Method, request.Url, StatusCodes.Status400BadRequest, ErrorTypes.BadRequest,
                    $"This multi_get runs requests of database '{database}'; '{request.Url}' names another. Send a multi_get to each database.");
            }
            else
            {
                await inner.RunAsync(request.Method, path, query, request.Headers, request.Content).ConfigureAwait(false);
            }

            WriteResult(json, inner);
            if (json.BytesPending + output.UnflushedBytes >= FlushThreshold)
            {
                json.Flush();
                await output.FlushAsync(context.RequestAborted).ConfigureAwait(false);
            }
        }

        json.WriteEndArray();
        json.WriteEndObject();
        await context.CompleteJsonAsync().ConfigureAwait(false);
    }

    /// <summary>
    /// The item's decoded path and query string. RavenDB's clients send the path from the server's
    /// root (<c>/databases/{db}/docs</c>); a path without <c>/databases/</c> is taken relative to this
    /// database (<c>/docs</c>). A path naming another database has no target (null).
    /// </summary>
    private static (string? Path, string Query) Target(MultiGetRequest request, string database)
    {
        var url = request.Url;
        var query = request.Query;
        var mark = url.IndexOf('?', StringComparison.Ordinal);
        if (mark >= 0)
        {
            query = query.Length == 0 ? url[mark..] : string.Concat(url.AsSpan(mark), "&", query.AsSpan(1));
            url = url[..mark];
        }

        if (url.Contains('%', StringComparison.Ordinal))
        {
            url = Uri.UnescapeDataString(url);
        }

        if (!url.StartsWith(DatabasesPrefix, StringComparison.Ordinal))
        {
            return (string.Concat(DatabasesPrefix, database, url), query);
        }

        var end = url.IndexOf('/', DatabasesPrefix.Length);
        var named = end < 0 ? url.AsSpan(DatabasesPrefix.Length) : url.AsSpan(DatabasesPrefix.Length, end - DatabasesPrefix.Length);
        return named.Equals(database, StringComparison.OrdinalIgnoreCase) ? (url, query) : (null, query);
    }

    /// <summary>
    /// <c>{"StatusCode":n,"Headers":{...},"Result":...}</c>; a body that is not JSON (a Studio page)
    /// is a JSON string. RavenDB writes <c>Result</c> first, as it streams the handler's output; its
    /// clients read the properties in any order, and with the status first a reader can parse the
    /// result where it lies, knowing whether it is an answer or an error (ours does).
    /// </summary>
    private static void WriteResult(Utf8JsonWriter json, InnerRequest inner)
    {
        json.WriteStartObject();
        json.WriteNumber("StatusCode", inner.StatusCode);
        json.WriteStartObject("Headers");
        foreach (var (name, values) in inner.ResponseHeaders)
        {
            foreach (var value in values)
            {
                json.WriteString(name, value);
            }
        }

        json.WriteEndObject();
        json.WritePropertyName("Result");
        var body = inner.ResponseBody;
        if (body.IsEmpty)
        {
            json.WriteNullValue();
        }
        else if (inner.ResponseHeaders.ContentType.ToString().StartsWith("application/json", StringComparison.OrdinalIgnoreCase))
        {
            // Our handlers write their JSON with Utf8JsonWriter or from stored blittables: valid by
            // construction, so it is copied as is rather than parsed again.
            json.WriteRawValue(body, skipInputValidation: true);
        }
        else
        {
            json.WriteStringValue(Encoding.UTF8.GetString(body));
        }

        json.WriteEndObject();
    }
}
