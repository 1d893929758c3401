using Jackdaw.Server.Rql;

namespace Jackdaw.Server.Wire;

/// <summary>
/// What <see cref="QueryRunner.PlanAsync"/> decided: the parsed query, its offset and limit (null:
/// none given), and the index that answers it (null: the document store, read in etag order).
/// </summary>
internal sealed record QueryPlan(RqlQuery Query, long Offset, long? Limit, Indexing.Index? Index);
