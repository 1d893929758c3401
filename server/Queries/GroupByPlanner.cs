using Jackdaw.Server.Errors;
using Jackdaw.Server.Indexing.Definitions;
using Jackdaw.Server.Rql;

namespace Jackdaw.Server.Queries;

/// <summary>
/// Checks a group-by query and maps it onto the reduce results of its auto map-reduce index
/// (<see cref="GroupByShape"/>). A result row holds each group-by field (named by its path),
/// <c>Count</c> and each sum (named by the summed path); the select, where and order by of the
/// query may name those, and the aliases the select gives aggregates. Anything else is an
/// <see cref="InvalidQueryException"/> at its position.
/// </summary>
public static class GroupByPlanner
{
    public static GroupByShape Prepare(RqlQuery query, string text)
    {
        if (QueryPlanner.IsAllDocs(query.From.Name))
        {
            throw new InvalidQueryException(text, query.From.Position, "a group-by query groups the documents of one collection (from Orders group by Company), not @all_docs.");
        }
        if (query.Filter is { } filter)
        {
            throw new InvalidQueryException(text, filter.Position, "'filter' examines documents, and a group-by query answers reduce results; use 'where' on the group-by fields and aggregates.");
        }
        var groupBy = query.GroupBy.Select(p => p.ToString()).ToList();
        var aggregations = new List<AutoAggregationField>();
        var aliases = new Dictionary<string, RqlProjection>(StringComparer.Ordinal);
        foreach (var item in query.Select)
        {
            switch (item.Aggregate)
            {
                case RqlAggregate.Count:
                    aggregations.Add(AutoAggregationField.Count);
                    break;
                case RqlAggregate.Sum:
                    aggregations.Add(AutoAggregationField.Sum(item.Path.ToString()));
                    break;
                case RqlAggregate.None when !groupBy.Contains(item.Path.ToString()):
                    throw new InvalidQueryException(text, item.Position,
                        $"'{item.Path}' is not a group-by field; a group-by query selects its group-by fields ({string.Join(", ", groupBy)}), key(), count() and sum(field).");
            }
            if (item.Alias is { } alias && alias != item.Path.ToString())
            {
                aliases[alias] = item;
            }
        }

        RqlPath Field(RqlPath path, int position, string clause)
        {
            var name = path.ToString();
            if (groupBy.Contains(name))
            {
                return path;
            }
            if (aliases.TryGetValue(name, out var item))
            {
                if (item.Aggregate == RqlAggregate.Key && groupBy.Count > 1)
                {
                    throw new InvalidQueryException(text, position, $"'{name}' is the key() of several group-by fields; compare each field ({string.Join(", ", groupBy)}) instead.");
                }
                return item.Path with { Position = path.Position };
            }
            if (aggregations.Any(a => a.Name == name))
            {
                return path;
            }
            if (name == AutoAggregationField.CountName)
            {
                aggregations.Add(AutoAggregationField.Count);
                return path;
            }
            throw new InvalidQueryException(text, position,
                $"the {clause} of a group-by query applies to its results, and '{name}' is none of their fields: the group-by fields ({string.Join(", ", groupBy)}), Count, the summed fields, or an alias the select gives them.");
        }

        RqlOperand Operand(RqlOperand operand, string clause) => operand.Path is null
            ? throw new InvalidQueryException(text, operand.Position, $"a group-by query's results are groups, not documents: id() cannot be used in its {clause}.")
            : operand with { Path = Field(operand.Path, operand.Position, clause) };

        RqlExpression Expression(RqlExpression expression) => expression switch
        {
            RqlBinary b => b with { Left = Expression(b.Left), Right = Expression(b.Right) },
            RqlNot n => n with { Operand = Expression(n.Operand) },
            RqlComparison c => c with { Field = Operand(c.Field, "where") },
            RqlBetween b => b with { Field = Operand(b.Field, "where") },
            RqlIn i => i with { Field = Operand(i.Field, "where") },
            RqlMethod m => m with { Field = Operand(m.Field, "where") },
            RqlProximity p => p with { Search = (RqlMethod)Expression(p.Search) },
            RqlExact e => e with { Inner = Expression(e.Inner) },
            _ => expression,
        };

        var where = query.Where is null ? null : Expression(query.Where);
        var orderBy = query.OrderBy.Select(order => order switch
        {
            { IsId: true } => throw new InvalidQueryException(text, order.Position, "a group-by query's results are groups, not documents: they cannot be ordered by id()."),
            { Path: { } path } => order with { Path = Field(path, order.Position, "order by") },
            _ => order,
        }).ToList();
        return new GroupByShape(query with { Where = where, OrderBy = orderBy }, groupBy, aggregations.Distinct().ToList());
    }
}
