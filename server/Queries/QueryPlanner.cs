using System.Buffers;
using System.Diagnostics;
using System.Globalization;
using System.IO.Hashing;
using System.Text;
using System.Text.Encodings.Web;
using System.Text.Json;
using Jackdaw.Server.Databases;
using Jackdaw.Server.Documents;
using Jackdaw.Server.Errors;
using Jackdaw.Server.Indexing;
using Jackdaw.Server.Indexing.Definitions;
using Jackdaw.Server.Indexing.Lucene;
using Jackdaw.Server.Rql;
using Jackdaw.Storage.Blittable;
using Lucene.Net.Index;
using Lucene.Net.Search;

namespace Jackdaw.Server.Queries;

/// <summary>Which index would answer a query, and why (RavenDB's <c>debug=explain</c>).</summary>
public sealed record QueryExplanation(string IndexName, IReadOnlyList<(string Index, string Reason)> Reasons);

/// <summary>
/// Decides what answers a query: a <c>group by</c> query the auto map-reduce index of its
/// grouping that has its aggregations (made, or widened, when none does: <see cref="GroupByPlanner"/>);
/// a query on a collection with no <c>where</c> (or one on
/// <c>id()</c> only) and no <c>order by</c> reads the document store; any other collection query
/// goes to the auto-index that covers its fields (made, or widened, when none does); <c>from index
/// 'Name'</c> to that index. Queries and streams plan alike.
/// </summary>
public static class QueryPlanner
{
    /// <summary>How long a query waits for a new index's first batch (<see cref="Indexing.Index.WaitForFirstBatchAsync"/>): a batch takes at most 2 s.</summary>
    public static readonly TimeSpan FirstBatchWait = TimeSpan.FromSeconds(5);

    /// <summary>
    /// Parses the query and decides what answers it: the document store (no index), or an index
    /// (an auto-index made or widened when none covers the query), waited for as the request asks
    /// (and for a new index's first batch). Queries and streams plan alike.
    /// </summary>
    public static Task<QueryPlan> PlanAsync(DocumentDatabase database, QueryRequest request, CancellationToken cancellationToken) =>
        PlanAsync(database, request, RqlParser.Parse(request.Text), null, cancellationToken);

    /// <summary>The same for a query already parsed, its stages timed when <paramref name="timings"/> is given.</summary>
    public static async Task<QueryPlan> PlanAsync(DocumentDatabase database, QueryRequest request, RqlQuery query, QueryTimings? timings, CancellationToken cancellationToken)
    {
        var optimizer = timings?.Start("Optimizer");
        var offset = Count(query.Offset, request, "offset") ?? 0;
        var limit = Count(query.Limit, request, "limit");
        if (!query.IsGroupBy && !query.From.IsIndex && LuceneQueryBuilder.OnIdOnly(query.Where) && query.OrderBy.All(o => o.IsId || o.IsScore))
        {
            optimizer?.Dispose();
            return new QueryPlan(query, offset, limit, null);
        }

        var store = IndexStore.Of(database);
        Indexing.Index index;
        if (query.From.IsIndex)
        {
            index = await store.GetAsync(query.From.Name).ConfigureAwait(false);
        }
        else if (query.IsGroupBy)
        {
            var shape = GroupByPlanner.Prepare(query, request.Text);
            index = await store.GetOrCreateAutoMapReduceIndexAsync(query.From.Name, shape.GroupBy, shape.Aggregations).ConfigureAwait(false);
            query = shape.Query;
        }
        else
        {
            if (IsAllDocs(query.From.Name))
            {
                throw new InvalidQueryException(request.Text, query.From.Position, "a where on fields or an order by over @all_docs needs a static index; query a collection, or define an index and query it with 'from index'.");
            }
            index = await store.GetOrCreateAutoIndexAsync(query.From.Name, LuceneQueryBuilder.NeededFields(query)).ConfigureAwait(false);
        }
        index.MarkQueried();
        optimizer?.Dispose();

        using var staleness = timings?.Start("Staleness");
        if (!request.WaitForNonStaleResults)
        {
            await index.WaitForFirstBatchAsync(FirstBatchWait, cancellationToken).ConfigureAwait(false);
        }
        else
        {
            var cutoff = database.LastEtag;
            if (!await index.WaitForEtagAsync(cutoff, request.WaitTimeout, cancellationToken).ConfigureAwait(false))
            {
                throw new QueryTimeoutException(index.State == IndexState.Error
                    ? $"Index '{index.Name}' is in error state; it cannot catch up until it is reset (see /indexes/errors)."
                    : $"Waited {request.WaitTimeout} for index '{index.Name}' to index every change up to etag {cutoff}; it has not yet. Retry, or query without WaitForNonStaleResults to get stale results.");
            }
        }
        return new QueryPlan(query, offset, limit, index);
    }

    /// <summary>
    /// What <see cref="PlanAsync(DocumentDatabase, QueryRequest, CancellationToken)"/> would decide,
    /// without running the query nor creating an auto-index.
    /// </summary>
    public static QueryExplanation Explain(DocumentDatabase database, QueryRequest request)
    {
        var query = RqlParser.Parse(request.Text);
        string indexName;
        List<(string Index, string Reason)> reasons;
        if (query.From.IsIndex)
        {
            var index = IndexStore.Of(database).Get(query.From.Name);
            indexName = index.Name;
            reasons = [(index.Name, "The query names this index ('from index').")];
        }
        else if (query.IsGroupBy)
        {
            var shape = GroupByPlanner.Prepare(query, request.Text);
            var (name, found) = IndexStore.Of(database).ExplainAutoMapReduceIndex(query.From.Name, shape.GroupBy, shape.Aggregations);
            indexName = name;
            reasons = [.. found];
        }
        else if (!query.From.IsIndex && LuceneQueryBuilder.OnIdOnly(query.Where) && query.OrderBy.All(o => o.IsId || o.IsScore))
        {
            indexName = IsAllDocs(query.From.Name) ? "AllDocs" : "collection/" + query.From.Name;
            reasons = [(indexName, query.Where is null
                ? "The query has no where on fields and no order by: the documents are read from the collection, no index is needed."
                : "The query's where is on id() only: the documents are read by id from the collection, no index is needed.")];
        }
        else if (IsAllDocs(query.From.Name))
        {
            throw new InvalidQueryException(request.Text, query.From.Position, "a where on fields or an order by over @all_docs needs a static index; query a collection, or define an index and query it with 'from index'.");
        }
        else
        {
            var (name, found) = IndexStore.Of(database).ExplainAutoIndex(query.From.Name, LuceneQueryBuilder.NeededFields(query));
            indexName = name;
            reasons = [.. found];
        }
        return new QueryExplanation(indexName, reasons);
    }

    public static bool IsAllDocs(string name) => string.Equals(name, "@all_docs", StringComparison.OrdinalIgnoreCase);

    /// <summary>A limit or offset; null when none is given (RavenDB's clients send a null parameter for "none").</summary>
    public static long? Count(RqlValue? value, QueryRequest request, string what)
    {
        if (value is null || value.Kind == RqlValueKind.Null)
        {
            return null;
        }
        if (value.Kind == RqlValueKind.Parameter && request.Parameters.TryGetValue(value.Text, out var none) && none.ValueKind == JsonValueKind.Null)
        {
            return null;
        }
        long count;
        if (value.Kind == RqlValueKind.Number && long.TryParse(value.Text, NumberStyles.None, CultureInfo.InvariantCulture, out count))
        {
            return count;
        }
        if (value.Kind == RqlValueKind.Parameter && request.Parameters.TryGetValue(value.Text, out var given) && given.ValueKind == JsonValueKind.Number && given.TryGetInt64(out count) && count >= 0)
        {
            return count;
        }
        throw new InvalidQueryException(request.Text, value.Position, $"'{what}' must be a whole number of at least 0 (or a parameter holding one).");
    }
}
