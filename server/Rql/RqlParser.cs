using Jackdaw.Server.Errors;

namespace Jackdaw.Server.Rql;

/// <summary>
/// Parses the RQL subset Jackdaw answers (keywords case-insensitive):
/// <code>
/// query      = "from" ( name | "index" string ) [ "as" name ] [ "group" "by" path { "," path } ] [ "where" or ]
///              [ "order" "by" order { "," order } ] [ "filter" or ] [ "select" projection { "," projection } ]
///              [ "include" include { "," include } ] [ "limit" value [ "offset" value | "," value ] ]
///              [ "filter_limit" value ]
/// or         = and { "or" and }
/// and        = unary { "and" unary }
/// unary      = "not" unary | "(" or ")" | method | operand comparison
/// comparison = op value | "between" value "and" value | [ "all" ] "in" "(" value { "," value } ")"
/// method     = ( "startsWith" | "endsWith" | "regex" ) "(" operand "," value ")" | search
///              | "proximity" "(" search "," number ")" | "exists" "(" operand ")" | "exact" "(" unary ")"
/// search     = "search" "(" operand "," value [ "," ( "and" | "or" ) ] ")"
/// include    = path | "timings" "(" ")" | "revisions" "(" string { "," string } ")"
/// operand    = "id" "(" ")" | path          path = name [ "[]" ] { "." name [ "[]" ] }
/// value      = string | number | "true" | "false" | "null" | $parameter
/// order      = ( "score" "(" ")" | "id" "(" ")" | path ) [ "as" ( "long" | "double" | "alphaNumeric" | "string" ) ] [ "asc" | "desc" ]
/// projection = ( path | "key" "(" ")" | "count" "(" ")" | "sum" "(" path ")" ) [ "as" name ]   (the last three in a group-by query only)
/// </code>
/// Errors name the position and what was expected. Nesting is bounded by <see cref="MaxDepth"/>, so
/// a hostile query cannot exhaust the stack.
/// </summary>
public sealed partial class RqlParser
{
    public const int MaxDepth = 128;

    // The clauses after 'from', in the order RavenDB's RQL requires them.
    private static readonly string[] Clauses = ["group", "where", "order", "filter", "select", "include", "limit", "filter_limit"];
    private static readonly string[] ClauseNames = ["group by", "where", "order by", "filter", "select", "include", "limit", "filter_limit"];

    private readonly string _query;
    private readonly List<RqlToken> _tokens;
    private int _next;
    private int _depth;

    private RqlParser(string query)
    {
        _query = query;
        _tokens = RqlTokenizer.Tokenize(query);
    }

    /// <exception cref="InvalidQueryException">The text is not valid RQL of this subset.</exception>
    public static RqlQuery Parse(string query)
    {
        ArgumentNullException.ThrowIfNull(query);
        var (text, update) = RqlUpdateClause.Split(query);
        var parsed = new RqlParser(text).ParseQuery();
        return update is null ? parsed : parsed with { Update = update };
    }

    private RqlToken Current => _tokens[_next];

    private RqlQuery ParseQuery()
    {
        ExpectKeyword("from");
        var from = ParseSource();
        var groupBy = ParseGroupBy(from);
        RqlExpression? where = null;
        List<RqlOrder> orderBy = [];
        List<RqlProjection> select = [];
        List<RqlPath> include = [];
        RqlValue? limit = null, offset = null, filterLimit = null;
        RqlExpression? filter = null;
        var timings = false;

        if (TakeKeyword("where"))
        {
            where = ParseOr();
        }
        if (TakeKeyword("order"))
        {
            ExpectKeyword("by");
            do
                orderBy.Add(ParseOrder());
            while (Take(RqlTokenKind.Comma));
        }
        if (TakeKeyword("filter"))
        {
            filter = ParseOr();
        }
        if (TakeKeyword("select"))
        {
            do
                select.Add(ParseProjection());
            while (Take(RqlTokenKind.Comma));
        }
        List<RqlRevisionsInclude> revisions = [];
        if (TakeKeyword("include"))
        {
            do
            {
                if (Current.Is("revisions") && Peek(1).Kind == RqlTokenKind.OpenParen)
                {
                    ParseRevisionsInclude(revisions);
                }
                else if (Current.Kind == RqlTokenKind.Identifier && Peek(1).Kind == RqlTokenKind.OpenParen)
                {
                    timings |= ParseIncludeMethod();
                }
                else
                {
                    include.Add(ParsePath());
                }
            }
            while (Take(RqlTokenKind.Comma));
        }
        if (TakeKeyword("limit"))
        {
            limit = ParseValue("a number of results");
            if (TakeKeyword("offset"))
            {
                offset = ParseValue("a number of results to skip");
            }
            else if (Take(RqlTokenKind.Comma))
            {
                (offset, limit) = (limit, ParseValue("a number of results"));
            }
        }
        if (TakeKeyword("filter_limit"))
        {
            if (filter is null)
            {
                throw Error(_tokens[_next - 1], "'filter_limit' limits a 'filter' clause, and the query has none");
            }
            filterLimit = ParseValue("the most documents the filter examines");
        }
        if (Current.Kind != RqlTokenKind.End)
        {
            throw ClauseOutOfPlace(groupBy.Count > 0, where is not null, orderBy.Count > 0, filter is not null, select.Count > 0, include.Count > 0 || timings || revisions.Count > 0, limit is not null, filterLimit is not null);
        }
        return new RqlQuery(from, where, orderBy, select, include, limit, offset) { Filter = filter, FilterLimit = filterLimit, IncludeTimings = timings, GroupBy = groupBy, IncludeRevisions = revisions };
    }

    /// <summary>
    /// <c>revisions('…', …)</c>, as RavenDB's clients write it: each string is a point in time (ISO 8601)
    /// or a path (<c>Contract.ChangeVector</c>) to change vectors in the results.
    /// </summary>
    private void ParseRevisionsInclude(List<RqlRevisionsInclude> revisions)
    {
        var open = Peek(1);
        _next += 2;
        do
        {
            var token = Current;
            if (token.Kind != RqlTokenKind.String || token.Text.Length == 0)
            {
                throw Error(token, "include revisions(...) takes quoted strings: a date and time, revisions('2026-01-02T00:00:00.0000000Z'), or a path to change vectors, revisions('ContractRevision')");
            }
            _next++;
            if (char.IsAsciiDigit(token.Text[0]) && DateTime.TryParse(token.Text, System.Globalization.CultureInfo.InvariantCulture, System.Globalization.DateTimeStyles.AdjustToUniversal | System.Globalization.DateTimeStyles.AssumeUniversal, out var before))
            {
                revisions.Add(new RqlRevisionsInclude(DateTime.SpecifyKind(before, DateTimeKind.Utc), null, token.Position));
                continue;
            }
            var names = token.Text.Split('.', StringSplitOptions.RemoveEmptyEntries | StringSplitOptions.TrimEntries)
                .Select(segment => segment.EndsWith("[]", StringComparison.Ordinal) ? segment[..^2] : segment)
                .ToArray();
            if (names.Length == 0)
            {
                throw Error(token, $"'{token.Text}' in include revisions(...) is neither a date and time nor a path");
            }
            revisions.Add(new RqlRevisionsInclude(null, new Documents.DocumentPath(names), token.Position));
        }
        while (Take(RqlTokenKind.Comma));
        Expect(RqlTokenKind.CloseParen, "')' to close revisions( at position " + open.Position);
    }

    /// <summary><c>include timings()</c> (true); the other include methods of RavenDB's RQL are refused by name.</summary>
    private bool ParseIncludeMethod()
    {
        var token = Current;
        if (!token.Is("timings"))
        {
            throw Error(token, $"'include {token.Text}()' is not supported; include takes document paths (include Company), timings() and revisions(...)");
        }
        _next += 2;
        Expect(RqlTokenKind.CloseParen, "')' after timings(");
        return true;
    }

    /// <summary>
    /// The error for what is left after the last clause: a clause that came too late says which
    /// one it must precede (RavenDB's order), anything else lists only the clauses that may still follow.
    /// </summary>
    private InvalidQueryException ClauseOutOfPlace(params ReadOnlySpan<bool> taken)
    {
        var last = -1;
        for (var i = 0; i < taken.Length; i++)
        {
            if (taken[i])
            {
                last = i;
            }
        }
        for (var i = 0; i <= last; i++)
        {
            if (!Current.Is(Clauses[i]))
            {
                continue;
            }
            if (taken[i])
            {
                return new InvalidQueryException(_query, Current.Position, $"'{ClauseNames[i]}' may appear only once, found {Current}.");
            }
            // Clauses[i] came after a later clause: name the first clause given that it must precede.
            var before = i + 1;
            while (!taken[before])
            {
                before++;
            }
            return new InvalidQueryException(_query, Current.Position,
                $"'{ClauseNames[i]}' must come before '{ClauseNames[before]}' (the clauses go in the order {string.Join(", ", ClauseNames)}), found {Current}.");
        }
        var allowed = new List<string>();
        for (var i = last + 1; i < Clauses.Length; i++)
        {
            // filter_limit only follows a filter.
            if (Clauses[i] == "filter_limit" && !taken[Array.IndexOf(Clauses, "filter")])
            {
                continue;
            }
            allowed.Add($"'{ClauseNames[i]}'");
        }
        allowed.Add("the end of the query");
        var list = allowed.Count == 1 ? allowed[0] : string.Join(", ", allowed[..^1]) + " or " + allowed[^1];
        return Error(Current, "expected " + list);
    }

    private RqlSource ParseSource()
    {
        var start = Current;
        string name;
        var isIndex = false;
        if (start.Is("index"))
        {
            _next++;
            if (Current.Kind != RqlTokenKind.String || Current.Text.Length == 0)
            {
                throw Error(Current, "expected the index name in quotes, e.g. from index 'Orders/Totals'");
            }
            name = Current.Text;
            isIndex = true;
            _next++;
        }
        else if (start.Kind == RqlTokenKind.Identifier && !IsClause(start))
        {
            name = start.Text;
            _next++;
        }
        else if (start.Kind == RqlTokenKind.String && start.Text.Length > 0)
        {
            name = start.Text;
            _next++;
        }
        else
        {
            throw Error(start, "expected a collection name or 'index' after 'from'");
        }

        string? alias = null;
        if (TakeKeyword("as"))
        {
            if (Current.Kind != RqlTokenKind.Identifier || IsClause(Current))
            {
                throw Error(Current, "expected an alias after 'as'");
            }
            alias = Current.Text;
            _next++;
        }
        return new RqlSource(name, isIndex, alias, start.Position);
    }

    private void Enter()
    {
        if (++_depth > MaxDepth)
        {
            throw Error(Current, $"the query nests deeper than {MaxDepth} levels");
        }
    }

    private RqlToken Peek(int ahead) => _tokens[Math.Min(_next + ahead, _tokens.Count - 1)];

    private bool Take(RqlTokenKind kind)
    {
        if (Current.Kind != kind)
        {
            return false;
        }
        _next++;
        return true;
    }

    private bool TakeKeyword(string keyword)
    {
        if (!Current.Is(keyword))
        {
            return false;
        }
        _next++;
        return true;
    }

    private void Expect(RqlTokenKind kind, string what)
    {
        if (!Take(kind))
        {
            throw Error(Current, "expected " + what);
        }
    }

    private void ExpectKeyword(string keyword)
    {
        if (!TakeKeyword(keyword))
        {
            throw Error(Current, $"expected '{keyword}'");
        }
    }

    // 'group' starts a clause only before 'by': a field or collection named Group stays a name.
    private bool IsClause(RqlToken token) => Clauses.Any(token.Is) && !(token.Is("group") && !Peek(1).Is("by"));

    private InvalidQueryException Error(RqlToken at, string expected) => new(_query, at.Position, $"{expected}, found {at}.");
}
