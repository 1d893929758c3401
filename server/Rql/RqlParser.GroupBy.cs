namespace Jackdaw.Server.Rql;

// The group-by part of the grammar: the 'group by' clause, and the select items only a group-by
// query has (key(), count(), sum(path)).
public sealed partial class RqlParser
{
    private IReadOnlyList<RqlPath> _groupBy = [];

    /// <summary><c>group by path { , path }</c> after the source; empty when the query has none.</summary>
    private IReadOnlyList<RqlPath> ParseGroupBy(RqlSource from)
    {
        var group = Current;
        if (!TakeKeyword("group"))
        {
            return [];
        }
        ExpectKeyword("by");
        if (from.IsIndex)
        {
            throw Error(group, "'group by' makes an auto map-reduce index and so queries a collection (from Orders group by Company); a map-reduce index is queried as it is");
        }
        var paths = new List<RqlPath>();
        do
        {
            var token = Current;
            if (token.Kind == RqlTokenKind.Identifier && Peek(1).Kind == RqlTokenKind.OpenParen)
            {
                throw Error(token, "expected a field to group by (group by Company, group by Lines[].Product); methods such as array() are not supported");
            }
            var path = ParsePath();
            if (paths.Any(p => p.ToString() == path.ToString()))
            {
                throw Error(token, $"'{path}' is already a group-by field");
            }
            paths.Add(path);
        }
        while (Take(RqlTokenKind.Comma));
        _groupBy = paths;
        return paths;
    }

    /// <summary>
    /// A select item: a field, or in a group-by query <c>key()</c>, <c>count()</c> or
    /// <c>sum(path)</c>, with the field of the reduce result it reads (see <see cref="RqlProjection"/>).
    /// </summary>
    private (RqlPath Path, RqlAggregate Aggregate) ParseSelectItem()
    {
        var token = Current;
        if (token.Kind != RqlTokenKind.Identifier || Peek(1).Kind != RqlTokenKind.OpenParen)
        {
            return (ParsePath(), RqlAggregate.None);
        }
        var aggregate = token.Text.ToLowerInvariant() switch
        {
            "key" => RqlAggregate.Key,
            "count" => RqlAggregate.Count,
            "sum" => RqlAggregate.Sum,
            _ => throw Error(token, $"unknown method '{token.Text}' in select; a select takes fields, and a group-by query also key(), count() and sum(field)"),
        };
        if (_groupBy.Count == 0)
        {
            throw Error(token, $"{token.Text.ToLowerInvariant()}() may only be used in a group-by query (from Orders group by Company select key(), count())");
        }
        _next += 2;
        RqlPath path;
        switch (aggregate)
        {
            case RqlAggregate.Sum:
                if (Current.Kind == RqlTokenKind.CloseParen)
                {
                    throw Error(Current, "expected the field to sum, e.g. sum(Freight)");
                }
                path = ParsePath();
                Expect(RqlTokenKind.CloseParen, "')' to close sum(");
                break;
            case RqlAggregate.Count:
                Expect(RqlTokenKind.CloseParen, "')' after count(: it counts the group's entries and takes no field");
                path = new RqlPath([new RqlPathSegment("Count", false)], token.Position);
                break;
            default:
                Expect(RqlTokenKind.CloseParen, "')' after key(");
                path = _groupBy[0];
                break;
        }
        return (path, aggregate);
    }
}
