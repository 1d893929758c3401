using System.Globalization;
using System.IO.Pipelines;
using System.Text.Json;
using Jackdaw.Server.Errors;
using Jackdaw.Server.Queries;

namespace Jackdaw.Server.Wire;

/// <summary>A <see cref="QueryRequest"/> as RavenDB's clients send it: the JSON body of a POST, or the GET form's URL.</summary>
public static class QueryRequestReader
{
    /// <summary>
    /// The body of <c>POST /queries</c> and <c>POST /streams/queries</c>:
    /// <c>{"Query":"from Orders where ...","QueryParameters":{...},"WaitForNonStaleResults":false,"WaitForNonStaleResultsTimeout":"00:00:15"}</c>;
    /// other properties RavenDB's clients send are ignored.
    /// </summary>
    public static async ValueTask<QueryRequest> ReadAsync(PipeReader body, CancellationToken cancellationToken)
    {
        using var json = (await DocumentBodies.ReadJsonAsync(body, cancellationToken).ConfigureAwait(false))!;
        return FromJson(json.RootElement);
    }

    /// <summary>
    /// The body of <c>PATCH /queries</c> (RavenDB's <c>{"Query":{"Query":"from ... update {...}","QueryParameters":{...}}}</c>)
    /// and <c>DELETE /queries</c> (the query unwrapped, as the Node.js client's <c>DeleteByQueryOperation</c>
    /// sends it; the wrapped form is taken too).
    /// </summary>
    public static async ValueTask<QueryRequest> ReadOperationAsync(PipeReader body, CancellationToken cancellationToken)
    {
        using var json = (await DocumentBodies.ReadJsonAsync(body, cancellationToken).ConfigureAwait(false))!;
        var root = json.RootElement;
        return FromJson(root.ValueKind == JsonValueKind.Object && root.TryGetProperty("Query", out var inner) && inner.ValueKind == JsonValueKind.Object ? inner : root);
    }

    private static QueryRequest FromJson(JsonElement root)
    {
        if (root.ValueKind != JsonValueKind.Object || !root.TryGetProperty("Query", out var text) || text.ValueKind != JsonValueKind.String)
        {
            throw new BadRequestException("The body must be {\"Query\":\"from Users ...\",\"QueryParameters\":{...}}.");
        }
        Dictionary<string, JsonElement> parameters = [];
        if (root.TryGetProperty("QueryParameters", out var given) && given.ValueKind == JsonValueKind.Object)
        {
            foreach (var parameter in given.EnumerateObject())
            {
                parameters[parameter.Name] = parameter.Value.Clone();
            }
        }
        var wait = root.TryGetProperty("WaitForNonStaleResults", out var w) && w.ValueKind == JsonValueKind.True;
        var timeout = QueryRequest.DefaultWaitTimeout;
        if (root.TryGetProperty("WaitForNonStaleResultsTimeout", out var t) && t.ValueKind == JsonValueKind.String)
        {
            timeout = ParseTimeout(t.GetString()!);
        }
        return new QueryRequest(text.GetString()!, parameters, wait, timeout);
    }

    /// <summary>
    /// The GET form: <c>?query=from Users[&amp;waitForNonStaleResults=true&amp;waitForNonStaleResultsTimeout=00:00:15]</c>
    /// (no parameters: values go into the text).
    /// </summary>
    public static QueryRequest FromQueryString(string? queryString)
    {
        var parameters = new UrlQuery(queryString);
        var query = parameters.GetString("query")
            ?? throw new BadRequestException("Query parameter 'query' is required, e.g. ?query=from Users.");
        var wait = string.Equals(parameters.GetString("waitForNonStaleResults"), "true", StringComparison.OrdinalIgnoreCase);
        var timeout = parameters.GetString("waitForNonStaleResultsTimeout") is { Length: > 0 } given ? ParseTimeout(given) : QueryRequest.DefaultWaitTimeout;
        return new QueryRequest(query, new Dictionary<string, JsonElement>(), wait, timeout);
    }

    private static TimeSpan ParseTimeout(string text) =>
        TimeSpan.TryParse(text, CultureInfo.InvariantCulture, out var timeout) && timeout >= TimeSpan.Zero && timeout <= TimeSpan.FromHours(1)
            ? timeout
            : throw new BadRequestException($"WaitForNonStaleResultsTimeout '{text}' is not a time span between 00:00:00 and 01:00:00 (e.g. \"00:00:15\").");
}
