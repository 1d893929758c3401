using Jackdaw.Server.Rql;

namespace Jackdaw.Server.Queries;

/// <summary>
/// A query's <c>filter</c> clause: tested on each document the index or the collection scan finds,
/// before paging, at most <c>filter_limit</c> documents (then the query ends with what it found, as
/// RavenDB's does). <see cref="Scanned"/> is the answer's <c>ScannedResults</c>.
/// </summary>
public sealed class QueryFilter(RqlExpression expression, RqlEvaluator evaluator, long? limit)
{
    /// <summary>The filter of <paramref name="query"/>, or null when it has none.</summary>
    public static QueryFilter? Of(RqlQuery query, QueryRequest request, long? limit) =>
        query.Filter is null ? null : new QueryFilter(query.Filter, new RqlEvaluator(request.Text, request.Parameters), limit);

    /// <summary>The most documents it examines (<c>filter_limit</c>); null: all.</summary>
    public long? Limit => limit;

    /// <summary>Forgets what it examined: the query reads its hits again, in a larger window.</summary>
    public void Reset() => Scanned = 0;

    /// <summary>How many documents the filter examined.</summary>
    public long Scanned { get; private set; }

    /// <summary>Whether the filter may examine no more documents (its <c>filter_limit</c> is reached).</summary>
    public bool Exhausted => Scanned >= (limit ?? long.MaxValue);

    /// <summary>Whether the document passes; counts it as examined. Call only while not <see cref="Exhausted"/>.</summary>
    public bool Matches(string id, ReadOnlySpan<byte> document)
    {
        Scanned++;
        return evaluator.Matches(expression, id, document);
    }
}
