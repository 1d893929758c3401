using System.Globalization;
using System.Text;

namespace Jackdaw.Client.Queries.Linq;

/// <summary>
/// A LINQ query taken apart into RQL's clauses, in the order RQL writes them whatever order the
/// LINQ operators came in: <c>from</c>, <c>where</c>, <c>order by</c>, <c>select</c>,
/// <c>include</c>, <c>limit</c>/<c>offset</c>. Skip and take stay numbers so that the execution
/// methods can narrow them (<c>FirstAsync</c> asks for one result, <c>CountAsync</c> for none).
/// </summary>
internal sealed class QueryModel(string from)
{
    private readonly List<(Condition Condition, bool IsSearch)> _conditions = [];

    public QueryParameterList Parameters { get; } = new();

    public QueryCustomization Customization { get; } = new();

    public List<QueryStatistics> Statistics { get; } = [];

    public List<string> OrderBy { get; } = [];

    public List<string> Includes { get; } = [];

    /// <summary>The <c>group by</c> paths (RQL), from <c>GroupBy</c>; empty when the query does not group.</summary>
    public List<string> GroupBy { get; } = [];

    public Projection? Projection { get; set; }

    public long Skip { get; set; }

    public long? Take { get; set; }

    public bool HasWhere => _conditions.Count > 0;

    public void AddWhere(Condition condition) => _conditions.Add((condition, false));

    public void AddSearch(Condition condition) => _conditions.Add((condition, true));

    /// <summary>The RQL with the model's own skip and take.</summary>
    public string ToRql() => ToRql(Take, Skip);

    /// <summary>The RQL with <paramref name="limit"/> results after <paramref name="offset"/>.</summary>
    public string ToRql(long? limit, long offset)
    {
        var builder = new StringBuilder(from);
        if (GroupBy.Count > 0)
        {
            builder.Append(" group by ").AppendJoin(", ", GroupBy);
        }

        var where = Where();
        if (where.Kind == ConditionKind.Never)
        {
            throw new NotSupportedException("The query's condition is always false on the client's values; RQL has no 'false', so skip the query instead.");
        }

        if (where.Kind != ConditionKind.Always)
        {
            builder.Append(" where ").Append(where.Text);
        }

        if (OrderBy.Count > 0)
        {
            builder.Append(" order by ").AppendJoin(", ", OrderBy);
        }

        if (Projection?.ToRql() is { Length: > 0 } select)
        {
            builder.Append(" select ").Append(select);
        }

        if (Includes.Count > 0)
        {
            builder.Append(" include ").AppendJoin(", ", Includes);
        }

        // RQL has no offset without a limit: a skip alone asks for every result after it.
        if (limit is not null || offset > 0)
        {
            builder.Append(" limit ").Append((limit ?? int.MaxValue).ToString(CultureInfo.InvariantCulture));
            if (offset > 0)
            {
                builder.Append(" offset ").Append(offset.ToString(CultureInfo.InvariantCulture));
            }
        }

        return builder.ToString();
    }

    /// <summary>
    /// The conditions joined by <c>and</c>, except that consecutive searches are joined by
    /// <c>or</c> (RavenDB's default: <c>.Search(a).Search(b)</c> finds either).
    /// </summary>
    private Condition Where()
    {
        var result = Condition.Always;
        Condition? searches = null;
        foreach (var (condition, isSearch) in _conditions)
        {
            if (isSearch)
            {
                searches = searches is { } previous ? Condition.Or(previous, condition) : condition;
                continue;
            }

            if (searches is { } group)
            {
                result = Condition.And(result, group);
                searches = null;
            }

            result = Condition.And(result, condition);
        }

        return searches is { } last ? Condition.And(result, last) : result;
    }
}
