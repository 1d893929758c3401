using Jackdaw.Server.Indexing.Definitions;
using Jackdaw.Server.Rql;

namespace Jackdaw.Server.Queries;

/// <summary>
/// What a group-by query needs of its auto map-reduce index: the group-by paths and the
/// aggregations, and the query with its <c>where</c> and <c>order by</c> written over the reduce
/// result's fields (an alias such as <c>Total</c> of <c>sum(Freight) as Total</c> becomes <c>Freight</c>).
/// </summary>
public sealed record GroupByShape(RqlQuery Query, IReadOnlyList<string> GroupBy, IReadOnlyList<AutoAggregationField> Aggregations);
