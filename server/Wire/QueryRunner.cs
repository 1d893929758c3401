using System.Buffers;
using System.Diagnostics;
using System.Text;
using System.Text.Encodings.Web;
using System.Text.Json;
using Jackdaw.Server.Databases;
using Jackdaw.Server.Documents;
using Jackdaw.Server.Errors;
using Jackdaw.Server.Queries;
using Jackdaw.Server.Rql;

namespace Jackdaw.Server.Wire;

/// <summary>
/// Runs a query (<see cref="QueryPlanner"/>, then <see cref="IndexQueryExecutor"/> or
/// <see cref="CollectionQueryExecutor"/>) and writes RavenDB's answer shape around its results:
/// <c>{"Results":[...],"Includes":{...},"TotalResults",...}</c>, and the explanation of
/// <c>debug=explain</c>. The answer is built in memory: it holds at most <c>maxLimit</c> results,
/// whatever <c>limit</c> the query names, while the streams (<see cref="QueryStream"/>) write results
/// as they read them and have no such limit.
/// </summary>
public static class QueryRunner
{
    /// <param name="maxLimit">The most results the answer may hold (the server's <c>Limits:MaxQueryLimit</c>).</param>
    /// <exception cref="Errors.InvalidQueryException">The query is not valid.</exception>
    public static async Task<QueryAnswer> RunAsync(DocumentDatabase database, QueryRequest request, int maxLimit, string? ifNoneMatch, CancellationToken cancellationToken)
    {
        var started = Stopwatch.GetTimestamp();
        var slowQueries = SlowQueryLog.Of(database);
        // An index deleted, reset or rebuilt under the query: plan again (a few times at most).
        for (var attempt = 0; ; attempt++)
        {
            try
            {
                // Stage timings cost a tree per query: measured for the log only when it takes every
                // query (threshold 0); past a higher threshold a query is logged with its total time.
                var answer = await RunOnceAsync(database, request, maxLimit, ifNoneMatch, slowQueries is { ThresholdMs: 0 }, cancellationToken).ConfigureAwait(false);
                slowQueries?.Offer(request, answer.Statistics, Stopwatch.GetElapsedTime(started));
                return answer;
            }
            catch (ObjectDisposedException) when (attempt < 3 && !database.IsClosing)
            {
            }
        }
    }

    /// <param name="timed">Whether to time the query's stages even when it does not ask (for a slow-query log that takes every query).</param>
    private static async Task<QueryAnswer> RunOnceAsync(DocumentDatabase database, QueryRequest request, int maxLimit, string? ifNoneMatch, bool timed, CancellationToken cancellationToken)
    {
        var started = Stopwatch.GetTimestamp();
        var query = RqlQueryCache.Parse(request.Text);
        if (query.Update is { } update)
        {
            throw new InvalidQueryException(request.Text, update.Position, "an 'update' clause patches the documents it finds: send it with PATCH /databases/{db}/queries (a patch by query), not as a query.");
        }
        // Timings in the answer when the query or the request asks; measured anyway for a slow-query log at threshold 0.
        var wanted = query.IncludeTimings || request.IncludeTimings;
        var timings = wanted || timed ? new QueryTimings { InAnswer = wanted } : null;
        var plan = await QueryPlanner.PlanAsync(database, request, query, timings, cancellationToken).ConfigureAwait(false);
        // ?start=&pageSize= page within the query's own results (its offset and limit).
        var limit = Math.Min(Within(plan.Limit is { } own ? Math.Max(0, own - request.Start) : null, maxLimit), request.PageSize ?? long.MaxValue);
        var filter = QueryFilter.Of(plan.Query, request, QueryPlanner.Count(plan.Query.FilterLimit, request, "filter_limit"));
        var run = new QueryRun(request, Skipped(plan.Offset, request.Start, limit), limit, filter, timings, started, RavenAnswerShape.Of(database.NodeTag)) { Revisions = RevisionIncludes.For(plan.Query) };
        return plan.Index is null
            ? CollectionQueryExecutor.Execute(database, plan.Query, run, ifNoneMatch)
            : IndexQueryExecutor.Execute(database, plan.Index, plan.Query, run, ifNoneMatch);
    }

    /// <summary>The results skipped: the query's <c>offset</c> and then <c>?start=</c>.</summary>
    /// <exception cref="BadRequestException">The page's end (skipped and <paramref name="limit"/> more) passes the largest position a query can have.</exception>
    private static long Skipped(long offset, long start, long limit)
    {
        // Both are at least 0 (the planner and the query string refuse less): the sum cannot wrap
        // below 0 without passing long.MaxValue, and the executors add the limit to it.
        if (start > long.MaxValue - offset || offset + start > long.MaxValue - limit)
        {
            ThrowStartTooLarge(offset, start);
        }
        return offset + start;
    }

    [System.Diagnostics.CodeAnalysis.DoesNotReturn]
    private static void ThrowStartTooLarge(long offset, long start) =>
        throw new BadRequestException($"start={start} after the query's offset {offset} passes the largest position a query can have ({long.MaxValue:D}): ask for a smaller start.");

    /// <summary>
    /// <c>POST /queries?debug=explain</c>: which index the query would use and why, without running
    /// it (nor creating an auto-index): <c>{"IndexName":...,"Results":[{"Index":...,"Reason":...}]}</c>.
    /// </summary>
    public static ReadOnlyMemory<byte> Explain(DocumentDatabase database, QueryRequest request)
    {
        var (indexName, reasons) = QueryPlanner.Explain(database, request);
        var output = new ArrayBufferWriter<byte>(512);
        using (var writer = new Utf8JsonWriter(output, new JsonWriterOptions { Encoder = JavaScriptEncoder.UnsafeRelaxedJsonEscaping }))
        {
            writer.WriteStartObject();
            writer.WriteString("IndexName", indexName);
            writer.WriteStartArray("Results");
            foreach (var (index, reason) in reasons)
            {
                writer.WriteStartObject();
                writer.WriteString("Index", index);
                writer.WriteString("Reason", reason);
                writer.WriteEndObject();
            }
            writer.WriteEndArray();
            writer.WriteEndObject();
        }
        return output.WrittenMemory;
    }

    /// <summary>
    /// Runs a query on a given index (a test index of <c>POST /indexes/test</c>), whatever its
    /// <c>from</c> names; no waiting, no caching. Returns the answer's JSON.
    /// </summary>
    public static ReadOnlyMemory<byte> RunOn(DocumentDatabase database, Indexing.Index index, QueryRequest request, int maxLimit)
    {
        var query = RqlParser.Parse(request.Text);
        var offset = QueryPlanner.Count(query.Offset, request, "offset") ?? 0;
        var limit = Within(QueryPlanner.Count(query.Limit, request, "limit"), maxLimit);
        var filter = QueryFilter.Of(query, request, QueryPlanner.Count(query.FilterLimit, request, "filter_limit"));
        var run = new QueryRun(request, offset, limit, filter, query.IncludeTimings ? new QueryTimings() : null, Stopwatch.GetTimestamp(), RavenAnswerShape.Of(database.NodeTag));
        return IndexQueryExecutor.Execute(database, index, query, run, null).Body;
    }

    /// <summary>
    /// The query's limit, at most <paramref name="maxLimit"/>; that when it names none. A larger
    /// limit is read as none, not refused: RavenDB's clients send <c>int.MaxValue</c> to mean "no
    /// limit" (Jackdaw's client for a <c>Skip</c> without <c>Take</c>, RavenDB users'
    /// <c>Take(int.MaxValue)</c>), and a 400 would break queries RavenDB answers. The answer's
    /// <c>TotalResults</c> still counts every match.
    /// </summary>
    private static long Within(long? limit, int maxLimit) => Math.Min(limit ?? maxLimit, maxLimit);

    /// <summary>RavenDB's answer: results, includes, then the statistics its clients read.</summary>
    private sealed class RavenAnswerShape(string nodeTag) : IQueryAnswerShape
    {
        private static readonly RavenAnswerShape Default = new(Documents.ChangeVectors.DefaultTag);
        private static readonly NonBlocking.ConcurrentDictionary<string, RavenAnswerShape> ByTag = new(StringComparer.Ordinal);

        /// <summary>The shape for a node (its tag is in the statistics), one per tag.</summary>
        public static RavenAnswerShape Of(string nodeTag) =>
            nodeTag == Default._nodeTag ? Default : ByTag.GetOrAdd(nodeTag, static tag => new RavenAnswerShape(tag));

        private readonly string _nodeTag = nodeTag;

        public void StartResults(ArrayBufferWriter<byte> output) => output.Write("{\"Results\":["u8);

        public void EndResults(ArrayBufferWriter<byte> output, DocumentsReader reader, HashSet<string>? included, QueryTimings? timings, RevisionIncludes? revisions = null)
        {
            output.Write("],\"Includes\":"u8);
            if (included is null && revisions is null)
            {
                output.Write("{}"u8);
                return;
            }
            using var timing = timings?.Start("Includes");
            if (included is null)
            {
                output.Write("{}"u8);
            }
            else
            {
                DocumentIncludes.Write(output, reader, included);
            }
            if (revisions is not null)
            {
                RevisionIncludesWriter.Write(output, reader, revisions);
            }
        }

        public void WriteStatistics(ArrayBufferWriter<byte> output, QueryStatistics statistics)
        {
            if (statistics.ScannedResults is { } scanned)
            {
                output.Write(Encoding.UTF8.GetBytes($",\"ScannedResults\":{scanned}"));
            }
            if (statistics.Timings is { InAnswer: true })
            {
                output.Write(","u8);
                statistics.Timings.Write(output);
            }
            var now = JsonDefaults.FormatTime(DateTime.UtcNow);
            var tail = $",\"TotalResults\":{statistics.TotalResults},\"SkippedResults\":{statistics.SkippedResults},\"IndexName\":{JsonSerializer.Serialize(statistics.IndexName)},\"IsStale\":{(statistics.IsStale ? "true" : "false")}," +
                $"\"IndexTimestamp\":\"{JsonDefaults.FormatTime(statistics.IndexTimestamp)}\",\"LastQueryTime\":\"{now}\",\"ResultEtag\":{statistics.ResultEtag},\"NodeTag\":\"{_nodeTag}\"," +
                $"\"DurationInMs\":{(long)Stopwatch.GetElapsedTime(statistics.Started).TotalMilliseconds}}}";
            output.Write(Encoding.UTF8.GetBytes(tail));
        }
    }
}
