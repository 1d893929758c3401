using System.Text;

namespace Jackdaw.Server.Rql;

/// <summary>
/// Writes a parsed query back as normalized RQL: keywords lower-case, strings in single quotes,
/// every binary expression in parentheses. Parsing what it writes gives the same query again, so
/// it is how a query is logged, shown in stats, and compared.
/// </summary>
public static class RqlFormatter
{
    public static string Format(RqlQuery query)
    {
        var text = new StringBuilder("from ");
        text.Append(query.From.IsIndex ? "index " + Quote(query.From.Name) : Name(query.From.Name));
        if (query.From.Alias is { } alias)
        {
            text.Append(" as ").Append(alias);
        }
        if (query.IsGroupBy)
        {
            text.Append(" group by ").AppendJoin(", ", query.GroupBy.Select(Path));
        }
        if (query.Where is { } where)
        {
            Write(text.Append(" where "), where);
        }
        if (query.OrderBy.Count > 0)
        {
            text.Append(" order by ");
            text.AppendJoin(", ", query.OrderBy.Select(o =>
                (o.IsId ? "id()" : o.Path is null ? "score()" : Path(o.Path)) + (o.As is { } type ? " as " + type : "") + (o.Descending ? " desc" : "")));
        }
        if (query.Filter is { } filter)
        {
            Write(text.Append(" filter "), filter);
        }
        if (query.Select.Count > 0)
        {
            text.Append(" select ").AppendJoin(", ", query.Select.Select(p => Selected(p) + (p.Alias is { } a ? " as " + Name(a) : "")));
        }
        if (query.Include.Count > 0 || query.IncludeTimings)
        {
            text.Append(" include ").AppendJoin(", ", query.Include.Select(Path).Concat(query.IncludeTimings ? ["timings()"] : []));
        }
        if (query.Limit is { } limit)
        {
            text.Append(" limit ").Append(Value(limit));
        }
        if (query.Offset is { } offset)
        {
            text.Append(" offset ").Append(Value(offset));
        }
        if (query.FilterLimit is { } filterLimit)
        {
            text.Append(" filter_limit ").Append(Value(filterLimit));
        }
        return text.ToString();
    }

    private static void Write(StringBuilder text, RqlExpression expression)
    {
        switch (expression)
        {
            case RqlBinary binary:
                text.Append('(');
                Write(text, binary.Left);
                text.Append(binary.IsAnd ? " and " : " or ");
                Write(text, binary.Right);
                text.Append(')');
                break;
            case RqlNot not:
                text.Append("not ");
                Write(text, not.Operand);
                break;
            case RqlComparison comparison:
                text.Append(Operand(comparison.Field)).Append(' ').Append(comparison.Operator switch
                {
                    RqlComparisonOperator.Equal => "=",
                    RqlComparisonOperator.NotEqual => "!=",
                    RqlComparisonOperator.Less => "<",
                    RqlComparisonOperator.LessOrEqual => "<=",
                    RqlComparisonOperator.Greater => ">",
                    _ => ">=",
                }).Append(' ').Append(Value(comparison.Value));
                break;
            case RqlBetween between:
                text.Append(Operand(between.Field)).Append(" between ").Append(Value(between.Low)).Append(" and ").Append(Value(between.High));
                break;
            case RqlIn @in:
                text.Append(Operand(@in.Field)).Append(@in.All ? " all in (" : " in (").AppendJoin(", ", @in.Values.Select(Value)).Append(')');
                break;
            case RqlMethod method:
                text.Append(method.Method switch
                {
                    RqlMethodKind.StartsWith => "startsWith(",
                    RqlMethodKind.EndsWith => "endsWith(",
                    RqlMethodKind.Search => "search(",
                    RqlMethodKind.Regex => "regex(",
                    _ => "exists(",
                }).Append(Operand(method.Field));
                if (method.Value is { } value)
                {
                    text.Append(", ").Append(Value(value));
                }
                if (method.Method == RqlMethodKind.Search && method.SearchAll)
                {
                    text.Append(", and");
                }
                text.Append(')');
                break;
            case RqlProximity proximity:
                text.Append("proximity(");
                Write(text, proximity.Search);
                text.Append(", ").Append(proximity.Distance).Append(')');
                break;
            case RqlExact exact:
                text.Append("exact(");
                Write(text, exact.Inner);
                text.Append(')');
                break;
        }
    }

    private static string Selected(RqlProjection projection) => projection.Aggregate switch
    {
        RqlAggregate.Key => "key()",
        RqlAggregate.Count => "count()",
        RqlAggregate.Sum => "sum(" + Path(projection.Path) + ")",
        _ => Path(projection.Path),
    };

    private static string Operand(RqlOperand operand) => operand.Path is null ? "id()" : Path(operand.Path);

    private static string Path(RqlPath path) => string.Join('.', path.Segments.Select(s => Name(s.Name) + (s.Array ? "[]" : "")));

    /// <summary>A name as written: bare when it is a plain identifier, else quoted.</summary>
    private static string Name(string name) =>
        name.Length > 0 && name.All(c => char.IsLetterOrDigit(c) || c is '_' or '@') && !Keywords.Contains(name) ? name : Quote(name);

    private static readonly HashSet<string> Keywords = new(StringComparer.OrdinalIgnoreCase)
    {
        "from", "index", "as", "where", "and", "or", "not", "between", "in", "all", "order", "by", "select",
        "include", "limit", "offset", "filter", "filter_limit", "asc", "desc", "ascending", "descending", "true", "false", "null", "id", "score",
    };

    private static string Value(RqlValue value) => value.Kind switch
    {
        RqlValueKind.String => Quote(value.Text),
        RqlValueKind.Parameter => "$" + value.Text,
        RqlValueKind.True => "true",
        RqlValueKind.False => "false",
        RqlValueKind.Null => "null",
        _ => value.Text,
    };

    private static string Quote(string text) => "'" + text.Replace("\\", "\\\\", StringComparison.Ordinal).Replace("'", "\\'", StringComparison.Ordinal) + "'";
}
