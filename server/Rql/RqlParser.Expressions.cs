using Jackdaw.Server.Errors;

namespace Jackdaw.Server.Rql;

// Expressions: boolean operators, methods, comparisons, operands, paths, order, projection, values.
public sealed partial class RqlParser
{
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
}
