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

    private RqlExpression ParseOr()
    {
        Enter();
        var left = ParseAnd();
        while (Current.Is("or"))
        {
            var position = Current.Position;
            _next++;
            left = new RqlBinary(left, IsAnd: false, ParseAnd(), position);
        }
        _depth--;
        return left;
    }

    private RqlExpression ParseAnd()
    {
        var left = ParseUnary();
        while (Current.Is("and"))
        {
            var position = Current.Position;
            _next++;
            left = new RqlBinary(left, IsAnd: true, ParseUnary(), position);
        }
        return left;
    }

    private RqlExpression ParseUnary()
    {
        Enter();
        try
        {
            var token = Current;
            if (token.Is("not"))
            {
                _next++;
                return new RqlNot(ParseUnary(), token.Position);
            }
            if (Take(RqlTokenKind.OpenParen))
            {
                var inner = ParseOr();
                Expect(RqlTokenKind.CloseParen, "')' to close the '(' at position " + token.Position);
                return inner;
            }
            if (token.Kind == RqlTokenKind.Identifier && Peek(1).Kind == RqlTokenKind.OpenParen && !token.Is("id"))
            {
                return ParseMethod();
            }
            var operand = ParseOperand();
            return ParseComparison(operand);
        }
        finally
        {
            _depth--;
        }
    }

    private RqlExpression ParseMethod()
    {
        var token = Current;
        var name = token.Text.ToLowerInvariant();
        _next++;
        Expect(RqlTokenKind.OpenParen, "'('");
        RqlExpression result;
        switch (name)
        {
            case "startswith" or "endswith":
            {
                var field = ParseOperand();
                Expect(RqlTokenKind.Comma, "',' and the value to compare with");
                var value = ParseValue("the value to compare with");
                result = new RqlMethod(name == "startswith" ? RqlMethodKind.StartsWith : RqlMethodKind.EndsWith, field, value, false, token.Position);
                break;
            }
            case "regex":
            {
                var field = ParseOperand();
                Expect(RqlTokenKind.Comma, "',' and the regular expression");
                var value = ParseValue("the regular expression");
                result = new RqlMethod(RqlMethodKind.Regex, field, value, false, token.Position);
                break;
            }
            case "proximity":
            {
                var inner = Current;
                if (!(inner.Is("search") && Peek(1).Kind == RqlTokenKind.OpenParen))
                {
                    throw Error(inner, "expected search(...): proximity applies to a search, e.g. proximity(search(Notes, 'fluent french'), 2)");
                }
                var search = (RqlMethod)ParseMethod();
                Expect(RqlTokenKind.Comma, "',' and the most words between the search's words");
                var distance = Current;
                if (distance.Kind != RqlTokenKind.Number || !int.TryParse(distance.Text, System.Globalization.NumberStyles.None, System.Globalization.CultureInfo.InvariantCulture, out var words))
                {
                    throw Error(distance, "expected the proximity distance: a whole number of at least 0");
                }
                _next++;
                result = new RqlProximity(search, words, token.Position);
                break;
            }
            case "search":
            {
                var field = ParseOperand();
                Expect(RqlTokenKind.Comma, "',' and the words to search for");
                var value = ParseValue("the words to search for");
                var all = false;
                if (Take(RqlTokenKind.Comma))
                {
                    if (TakeKeyword("and"))
                    {
                        all = true;
                    }
                    else if (!TakeKeyword("or"))
                    {
                        throw Error(Current, "expected 'and' or 'or' (whether every word must match)");
                    }
                }
                result = new RqlMethod(RqlMethodKind.Search, field, value, all, token.Position);
                break;
            }
            case "exists":
                result = new RqlMethod(RqlMethodKind.Exists, ParseOperand(), null, false, token.Position);
                break;
            case "exact":
                result = new RqlExact(ParseUnary(), token.Position);
                break;
            default:
                throw Error(token, $"unknown method '{token.Text}'; expected startsWith, endsWith, search, regex, proximity, exists, exact or id");
        }
        Expect(RqlTokenKind.CloseParen, $"')' to close {token.Text}(");
        return result;
    }

    private RqlExpression ParseComparison(RqlOperand operand)
    {
        var token = Current;
        RqlComparisonOperator? op = token.Kind switch
        {
            RqlTokenKind.Equal => RqlComparisonOperator.Equal,
            RqlTokenKind.NotEqual => RqlComparisonOperator.NotEqual,
            RqlTokenKind.Less => RqlComparisonOperator.Less,
            RqlTokenKind.LessOrEqual => RqlComparisonOperator.LessOrEqual,
            RqlTokenKind.Greater => RqlComparisonOperator.Greater,
            RqlTokenKind.GreaterOrEqual => RqlComparisonOperator.GreaterOrEqual,
            _ => null,
        };
        if (op is { } comparison)
        {
            _next++;
            return new RqlComparison(operand, comparison, ParseValue("a value to compare with"), operand.Position);
        }
        if (token.Is("between"))
        {
            _next++;
            var low = ParseValue("the low end of the range");
            ExpectKeyword("and");
            return new RqlBetween(operand, low, ParseValue("the high end of the range"), operand.Position);
        }
        var all = TakeKeyword("all");
        if (TakeKeyword("in"))
        {
            Expect(RqlTokenKind.OpenParen, "'(' and the values");
            var values = new List<RqlValue>();
            do
                values.Add(ParseValue("a value"));
            while (Take(RqlTokenKind.Comma));
            Expect(RqlTokenKind.CloseParen, "')' to close the list of values");
            return new RqlIn(operand, values, all, operand.Position);
        }
        throw Error(Current, all ? "expected 'in' after 'all'" : $"expected a comparison after {operand}: =, !=, <, <=, >, >=, between or in");
    }

    private RqlOperand ParseOperand()
    {
        var token = Current;
        if (token.Is("id") && Peek(1).Kind == RqlTokenKind.OpenParen)
        {
            _next += 2;
            Expect(RqlTokenKind.CloseParen, "')' after id(");
            return new RqlOperand(null, token.Position);
        }
        return new RqlOperand(ParsePath(), token.Position);
    }

    private RqlPath ParsePath()
    {
        var start = Current;
        var segments = new List<RqlPathSegment>();
        while (true)
        {
            var token = Current;
            if (token.Kind is not (RqlTokenKind.Identifier or RqlTokenKind.String) || (token.Kind == RqlTokenKind.Identifier && segments.Count == 0 && IsClause(token)))
            {
                throw Error(token, segments.Count == 0 ? "expected a field name" : "expected a field name after '.'");
            }
            _next++;
            var array = false;
            if (Current.Kind == RqlTokenKind.OpenBracket)
            {
                _next++;
                Expect(RqlTokenKind.CloseBracket, "']' (array elements are written name[])");
                array = true;
            }
            segments.Add(new RqlPathSegment(token.Text, array));
            if (!Take(RqlTokenKind.Dot))
            {
                return new RqlPath(segments, start.Position);
            }
        }
    }

    private RqlOrder ParseOrder()
    {
        var token = Current;
        RqlPath? path = null;
        var isId = false;
        if (token.Is("score") && Peek(1).Kind == RqlTokenKind.OpenParen)
        {
            _next += 2;
            Expect(RqlTokenKind.CloseParen, "')' after score(");
        }
        else if (token.Is("id") && Peek(1).Kind == RqlTokenKind.OpenParen)
        {
            _next += 2;
            Expect(RqlTokenKind.CloseParen, "')' after id(");
            isId = true;
        }
        else
        {
            path = ParsePath();
        }

        string? type = null;
        if (TakeKeyword("as"))
        {
            var kind = Current;
            if (!(kind.Is("long") || kind.Is("double") || kind.Is("alphaNumeric") || kind.Is("string")))
            {
                throw Error(kind, "expected long, double, alphaNumeric or string after 'as'");
            }
            type = kind.Text.ToLowerInvariant() switch { "alphanumeric" => "alphaNumeric", var t => t };
            _next++;
        }
        var descending = false;
        if (TakeKeyword("desc") || TakeKeyword("descending"))
        {
            descending = true;
        }
        else
        {
            _ = TakeKeyword("asc") || TakeKeyword("ascending");
        }
        return new RqlOrder(path, descending, type, token.Position, isId);
    }

    private RqlProjection ParseProjection()
    {
        var token = Current;
        var (path, aggregate) = ParseSelectItem();
        string? alias = null;
        if (TakeKeyword("as"))
        {
            if (Current.Kind is not (RqlTokenKind.Identifier or RqlTokenKind.String))
            {
                throw Error(Current, "expected a name after 'as'");
            }
            alias = Current.Text;
            _next++;
        }
        return new RqlProjection(path, alias, token.Position) { Aggregate = aggregate };
    }

    private RqlValue ParseValue(string what)
    {
        var token = Current;
        RqlValueKind? kind = token.Kind switch
        {
            RqlTokenKind.String => RqlValueKind.String,
            RqlTokenKind.Number => RqlValueKind.Number,
            RqlTokenKind.Parameter => RqlValueKind.Parameter,
            RqlTokenKind.Identifier when token.Is("true") => RqlValueKind.True,
            RqlTokenKind.Identifier when token.Is("false") => RqlValueKind.False,
            RqlTokenKind.Identifier when token.Is("null") => RqlValueKind.Null,
            _ => null,
        };
        if (kind is null)
        {
            throw Error(token, $"expected {what}: a string, a number, true, false, null or a $parameter");
        }
        _next++;
        return new RqlValue(kind.Value, token.Text, token.Position);
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
