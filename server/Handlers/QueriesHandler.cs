using System.Buffers;
using System.Diagnostics;
using System.Globalization;
using System.Text.Json;
using Jackdaw.Server.Databases;
using Jackdaw.Server.Errors;
using Jackdaw.Server.Hosting;
using Jackdaw.Server.Http;
using Jackdaw.Server.Queries;
using Jackdaw.Server.Routing;
using Jackdaw.Storage.Blittable;

namespace Jackdaw.Server.Handlers;

/// <summary>
/// <c>/databases/*/queries</c>, RavenDB's query endpoint (planning and running in
/// <see cref="QueryRunner"/>). The answer carries <c>ETag</c> = its <c>ResultEtag</c>; a request whose
/// <c>If-None-Match</c> still matches gets 304 with no body.
/// </summary>
public sealed class QueriesHandler(ServerContext server) : HandlerBase(server)
{
    /// <summary>
    /// <c>POST /databases/*/queries</c> with <c>{"Query":"from Orders where ...","QueryParameters":{...},
    /// "WaitForNonStaleResults":false,"WaitForNonStaleResultsTimeout":"00:00:15"}</c>.
    /// </summary>
    [Route("/databases/*/queries", "POST")]
    public async ValueTask Post(RequestContext context)
    {
        var database = Server.Databases.GetDatabase(context.GetCaptureMemory(0));
        QueryRequest request;
        using (var json = (await DocumentBodies.ReadJsonAsync(context.Request.BodyReader, context.RequestAborted).ConfigureAwait(false))!)
        {
            if (json.RootElement.ValueKind != JsonValueKind.Object || !json.RootElement.TryGetProperty("Query", out var text) || text.ValueKind != JsonValueKind.String)
                throw new BadRequestException("The body must be {\"Query\":\"from Users ...\",\"QueryParameters\":{...}}.");
            Dictionary<string, JsonElement> parameters = [];
            if (json.RootElement.TryGetProperty("QueryParameters", out var given) && given.ValueKind == JsonValueKind.Object)
            {
                foreach (var parameter in given.EnumerateObject())
                    parameters[parameter.Name] = parameter.Value.Clone();
            }
            var wait = json.RootElement.TryGetProperty("WaitForNonStaleResults", out var w) && w.ValueKind == JsonValueKind.True;
            var timeout = DefaultWaitTimeout;
            if (json.RootElement.TryGetProperty("WaitForNonStaleResultsTimeout", out var t) && t.ValueKind == JsonValueKind.String)
                timeout = ParseTimeout(t.GetString()!);
            request = new QueryRequest(text.GetString()!, parameters, wait, timeout);
        }
        await AnswerAsync(context, database, request).ConfigureAwait(false);
    }

    /// <summary><c>GET /databases/*/queries?query=[&amp;waitForNonStaleResults=true&amp;waitForNonStaleResultsTimeout=00:00:15]</c>.</summary>
    [Route("/databases/*/queries", "GET")]
    public ValueTask Get(RequestContext context)
    {
        var database = Server.Databases.GetDatabase(context.GetCaptureMemory(0));
        var parameters = new QueryParameters(context.Request.QueryString.Value);
        var query = parameters.GetString("query")
            ?? throw new BadRequestException("Query parameter 'query' is required, e.g. ?query=from Users.");
        var wait = string.Equals(parameters.GetString("waitForNonStaleResults"), "true", StringComparison.OrdinalIgnoreCase);
        var timeout = parameters.GetString("waitForNonStaleResultsTimeout") is { Length: > 0 } given ? ParseTimeout(given) : DefaultWaitTimeout;
        return AnswerAsync(context, database, new QueryRequest(query, new Dictionary<string, JsonElement>(), wait, timeout));
    }

    /// <summary>How long a query waits for non-stale results when it does not say (RavenDB's default).</summary>
    public static readonly TimeSpan DefaultWaitTimeout = TimeSpan.FromSeconds(15);

    private static TimeSpan ParseTimeout(string text) =>
        TimeSpan.TryParse(text, CultureInfo.InvariantCulture, out var timeout) && timeout >= TimeSpan.Zero && timeout <= TimeSpan.FromHours(1)
            ? timeout
            : throw new BadRequestException($"WaitForNonStaleResultsTimeout '{text}' is not a time span between 00:00:00 and 01:00:00 (e.g. \"00:00:15\").");

    private static async ValueTask AnswerAsync(RequestContext context, DocumentDatabase database, QueryRequest request)
    {
        var ifNoneMatch = context.Request.Headers.IfNoneMatch.Count > 0 ? context.Request.Headers.IfNoneMatch[0] : null;
        var answer = await QueryRunner.RunAsync(database, request, ifNoneMatch, context.RequestAborted).ConfigureAwait(false);
        var response = context.Response;
        response.Headers.ETag = "\"" + answer.ResultEtag + "\"";
        if (answer.NotModified)
        {
            response.StatusCode = StatusCodes.Status304NotModified;
            return;
        }
        response.StatusCode = StatusCodes.Status200OK;
        response.ContentType = JsonErrors.JsonContentType;
        await response.BodyWriter.WriteAsync(answer.Body, context.RequestAborted).ConfigureAwait(false);
    }
}
