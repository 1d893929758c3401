using Jackdaw.Server.Rql;

namespace Jackdaw.Server.Queries;

/// <summary>
/// What <see cref="QueryPlanner.PlanAsync(Databases.DocumentDatabase, QueryRequest, CancellationToken)"/> decided: the parsed query, its offset and limit (null:
/// none given), and the index that answers it (null: the document store, read in etag order).
/// </summary>
public sealed record QueryPlan(RqlQuery Query, long Offset, long? Limit, Indexing.Index? Index);
