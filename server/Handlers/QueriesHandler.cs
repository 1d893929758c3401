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
/// <c>/databases/*/queries</c>, RavenDB's query endpoint. Until indexes exist it answers what the
/// document store can answer without one: <c>from Collection</c> (or <c>@all_docs</c>) with no
/// <c>where</c> or one on <c>id()</c> only, in etag order, with <c>limit</c>/<c>offset</c> and
/// <c>include</c>. Anything that needs an index (a <c>where</c> on fields, <c>order by</c>,
/// <c>select</c>, <c>from index</c>) is a 501 that says so.
/// </summary>
public sealed class QueriesHandler(ServerContext server) : HandlerBase(server)
{
    /// <summary><c>POST /databases/*/queries</c> with <c>{"Query":"from Users","QueryParameters":{...}}</c>.</summary>
    [Route("/databases/*/queries", "POST")]
    public async ValueTask Post(RequestContext context)
    {
        var database = Server.Databases.GetDatabase(context.GetCaptureMemory(0));
        string query;
        Dictionary<string, JsonElement> parameters = [];
        using (var json = (await DocumentBodies.ReadJsonAsync(context.Request.BodyReader, context.RequestAborted).ConfigureAwait(false))!)
        {
            if (json.RootElement.ValueKind != JsonValueKind.Object || !json.RootElement.TryGetProperty("Query", out var text) || text.ValueKind != JsonValueKind.String)
                throw new BadRequestException("The body must be {\"Query\":\"from Users ...\",\"QueryParameters\":{...}}.");
            query = text.GetString()!;
            if (json.RootElement.TryGetProperty("QueryParameters", out var given) && given.ValueKind == JsonValueKind.Object)
            {
                foreach (var parameter in given.EnumerateObject())
                    parameters[parameter.Name] = parameter.Value.Clone();
            }
        }
        await AnswerAsync(context, database, query, parameters).ConfigureAwait(false);
    }

    /// <summary><c>GET /databases/*/queries?query=</c>.</summary>
    [Route("/databases/*/queries", "GET")]
    public ValueTask Get(RequestContext context)
    {
        var database = Server.Databases.GetDatabase(context.GetCaptureMemory(0));
        var query = new QueryParameters(context.Request.QueryString.Value).GetString("query")
            ?? throw new BadRequestException("Query parameter 'query' is required, e.g. ?query=from Users.");
        return AnswerAsync(context, database, query, []);
    }

    private static async ValueTask AnswerAsync(RequestContext context, DocumentDatabase database, string text, Dictionary<string, JsonElement> parameters)
    {
        var started = Stopwatch.GetTimestamp();
        var query = RqlParser.Parse(text);
        ThrowIfItNeedsAnIndex(query);
        var evaluator = new RqlEvaluator(text, parameters);
        var offset = Count(query.Offset, text, parameters, "offset");
        var limit = query.Limit is null ? long.MaxValue : Count(query.Limit, text, parameters, "limit");
        var includes = query.Include.Count == 0 ? null : query.Include.Select(p => p.Segments.Select(s => s.Name).ToArray()).ToList();
        var collection = string.Equals(query.From.Name, "@all_docs", StringComparison.OrdinalIgnoreCase) ? null : query.From.Name;

        var output = new ArrayBufferWriter<byte>(16 * 1024);
        long total = 0;
        long etag;
        using (var reader = database.BeginRead())
        {
            etag = reader.LastEtag;
            var included = includes is null ? null : new HashSet<string>(StringComparer.OrdinalIgnoreCase);
            output.Write("{\"Results\":["u8);
            var written = 0L;
            foreach (var record in reader.GetDocumentsFrom(collection, 0))
            {
                if (query.Where is not null && !evaluator.Matches(query.Where, record.Id, record.Document))
                    continue;
                total++;
                if (total <= offset || written >= limit)
                    continue;
                if (written++ > 0)
                    output.Write(","u8);
                BlittableJsonWriter.WriteTo(record.Document, output);
                if (included is not null)
                    DocumentIncludes.Collect(record.Document, includes!, included);
            }
            output.Write("],\"Includes\":"u8);
            if (included is null)
                output.Write("{}"u8);
            else
                DocumentIncludes.Write(output, reader, included);
        }

        var now = DateTime.UtcNow.ToString("yyyy-MM-dd'T'HH:mm:ss.fffffff'Z'", CultureInfo.InvariantCulture);
        var tail = $",\"TotalResults\":{total},\"SkippedResults\":0,\"IndexName\":{JsonSerializer.Serialize((collection is null ? "AllDocs" : "collection/" + collection))},\"IsStale\":false," +
            $"\"IndexTimestamp\":\"{now}\",\"LastQueryTime\":\"{now}\",\"ResultEtag\":{etag},\"NodeTag\":\"{TopologyHandler.NodeTag}\"," +
            $"\"DurationInMs\":{(long)Stopwatch.GetElapsedTime(started).TotalMilliseconds}}}";
        output.Write(System.Text.Encoding.UTF8.GetBytes(tail));

        var response = context.Response;
        response.StatusCode = StatusCodes.Status200OK;
        response.ContentType = JsonErrors.JsonContentType;
        await response.BodyWriter.WriteAsync(output.WrittenMemory, context.RequestAborted).ConfigureAwait(false);
    }

    /// <summary>What needs an index is refused by name: indexes arrive with the rest of this work.</summary>
    private static void ThrowIfItNeedsAnIndex(RqlQuery query)
    {
        if (query.From.IsIndex)
            throw new FeatureNotSupportedException($"Queries on an index ('{query.From.Name}') are not supported yet: indexes are not built yet.");
        if (query.Where is not null && !OnIdOnly(query.Where))
            throw new FeatureNotSupportedException("A 'where' on document fields needs an index, and indexes are not built yet; without one Jackdaw answers 'from Collection' with no where, or a where on id() only.");
        if (query.OrderBy.Count > 0)
            throw new FeatureNotSupportedException("'order by' needs an index, and indexes are not built yet; without one results come in the order they were written.");
        if (query.Select.Count > 0)
            throw new FeatureNotSupportedException("'select' projections are not supported yet.");
    }

    private static bool OnIdOnly(RqlExpression expression) => expression switch
    {
        RqlBinary b => OnIdOnly(b.Left) && OnIdOnly(b.Right),
        RqlNot n => OnIdOnly(n.Operand),
        RqlComparison c => c.Field.IsId,
        RqlIn i => i.Field.IsId,
        RqlBetween b => b.Field.IsId,
        RqlMethod m => m.Field.IsId && m.Method is RqlMethodKind.StartsWith or RqlMethodKind.EndsWith,
        _ => false,
    };

    private static long Count(RqlValue? value, string text, Dictionary<string, JsonElement> parameters, string what)
    {
        if (value is null)
            return 0;
        long count;
        if (value.Kind == RqlValueKind.Number && long.TryParse(value.Text, NumberStyles.None, CultureInfo.InvariantCulture, out count))
            return count;
        if (value.Kind == RqlValueKind.Parameter && parameters.TryGetValue(value.Text, out var given) && given.ValueKind == JsonValueKind.Number && given.TryGetInt64(out count) && count >= 0)
            return count;
        throw new InvalidQueryException(text, value.Position, $"'{what}' must be a whole number of at least 0 (or a parameter holding one).");
    }
}
