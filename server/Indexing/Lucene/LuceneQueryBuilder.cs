using System.Globalization;
using System.Text.Json;
using Jackdaw.Server.Errors;
using Jackdaw.Server.Indexing.Definitions;
using Jackdaw.Server.Rql;
using Lucene.Net.Analysis;
using Lucene.Net.Analysis.TokenAttributes;
using Lucene.Net.Index;
using Lucene.Net.Search;

namespace Jackdaw.Server.Indexing.Lucene;

/// <summary>
/// Turns an RQL <c>where</c> into a Lucene query over an index's fields (<see cref="LuceneFields"/>),
/// with the meaning <see cref="RqlEvaluator"/> gives it on documents: strings compare lowercased
/// (as they are inside <c>exact()</c>), numbers as doubles, a number never equals a string,
/// <c>= null</c> finds explicit nulls, <c>exists</c> any present value, <c>!=</c> is <c>not =</c>.
/// </summary>
public sealed class LuceneQueryBuilder
{
    private readonly string _text;
    private readonly IReadOnlyDictionary<string, JsonElement> _parameters;
    private readonly Func<RqlPath, FieldIndexing, int, FieldPlan> _resolve;
    private readonly Func<string, bool> _multiValued;

    static LuceneQueryBuilder()
    {
        // "in (...)" with many values: one clause each.
        BooleanQuery.MaxClauseCount = 64 * 1024;
    }

    /// <param name="resolve">The plan of a path as a query uses it (Default, Exact inside exact(), Search in search()); throws for a field the index does not have.</param>
    /// <param name="multiValued">Whether a Lucene field has entries with several values (its ranges are not folded).</param>
    public LuceneQueryBuilder(string text, IReadOnlyDictionary<string, JsonElement> parameters, Func<RqlPath, FieldIndexing, int, FieldPlan> resolve, Func<string, bool>? multiValued = null)
    {
        _text = text;
        _parameters = parameters;
        _resolve = resolve;
        _multiValued = multiValued ?? (_ => true);
    }

    /// <summary>The fields an auto-index needs for <paramref name="query"/>: those its where and order by use.</summary>
    public static List<AutoIndexField> NeededFields(RqlQuery query)
    {
        var fields = new List<AutoIndexField>();
        if (query.Where is not null)
        {
            Collect(query.Where, exact: false, fields);
        }
        foreach (var order in query.OrderBy)
        {
            if (order.Path is not null)
            {
                fields.Add(new AutoIndexField(order.Path.ToString(), FieldIndexing.Default));
            }
        }
        return fields.Distinct().ToList();
    }

    private static void Collect(RqlExpression expression, bool exact, List<AutoIndexField> fields)
    {
        switch (expression)
        {
            case RqlBinary b:
                Collect(b.Left, exact, fields);
                Collect(b.Right, exact, fields);
                break;
            case RqlNot n:
                Collect(n.Operand, exact, fields);
                break;
            case RqlExact e:
                Collect(e.Inner, exact: true, fields);
                break;
            case RqlComparison { Field.IsId: false } c:
                fields.Add(new AutoIndexField(c.Field.Path!.ToString(), exact ? FieldIndexing.Exact : FieldIndexing.Default));
                break;
            case RqlBetween { Field.IsId: false } b:
                fields.Add(new AutoIndexField(b.Field.Path!.ToString(), exact ? FieldIndexing.Exact : FieldIndexing.Default));
                break;
            case RqlIn { Field.IsId: false } i:
                fields.Add(new AutoIndexField(i.Field.Path!.ToString(), exact ? FieldIndexing.Exact : FieldIndexing.Default));
                break;
            case RqlMethod { Field.IsId: false } m:
                fields.Add(new AutoIndexField(m.Field.Path!.ToString(), m.Method == RqlMethodKind.Search ? FieldIndexing.Search : exact ? FieldIndexing.Exact : FieldIndexing.Default));
                break;
            case RqlProximity p:
                Collect(p.Search, exact, fields);
                break;
        }
    }

    /// <summary>Whether the query needs no index: no order by and a where on id() only (or none).</summary>
    public static bool OnIdOnly(RqlExpression? expression) => expression switch
    {
        null => true,
        RqlBinary b => OnIdOnly(b.Left) && OnIdOnly(b.Right),
        RqlNot n => OnIdOnly(n.Operand),
        RqlExact e => OnIdOnly(e.Inner),
        RqlComparison c => c.Field.IsId,
        RqlIn i => i.Field.IsId,
        RqlBetween b => b.Field.IsId,
        RqlMethod m => m.Field.IsId && m.Method is RqlMethodKind.StartsWith or RqlMethodKind.EndsWith or RqlMethodKind.Regex,
        _ => false,
    };

    public Query Build(RqlExpression? where) => where is null ? new MatchAllDocsQuery() : Translate(where, exact: false);

    private Query Translate(RqlExpression expression, bool exact)
    {
        switch (expression)
        {
            case RqlBinary b:
            {
                var query = new BooleanQuery();
                var occur = b.IsAnd ? Occur.MUST : Occur.SHOULD;
                var operands = new List<RqlExpression>();
                Flatten(b, b.IsAnd, operands);
                if (b.IsAnd)
                {
                    operands = FoldRanges(operands, query, exact);
                }
                foreach (var operand in operands)
                {
                    query.Add(Translate(operand, exact), occur);
                }
                return query;
            }
            case RqlNot n:
                return Not(Translate(n.Operand, exact));
            case RqlExact e:
                return Translate(e.Inner, exact: true);
            case RqlComparison c:
                return Comparison(c, exact);
            case RqlBetween b:
            {
                var target = Target(b.Field, exact, b.Position);
                return Range(target, new Bound(Resolve(b.Low), true), new Bound(Resolve(b.High), true));
            }
            case RqlIn i:
            {
                var target = Target(i.Field, exact, i.Position);
                var query = new BooleanQuery();
                var values = i.Values.SelectMany(ResolveList).ToList();
                foreach (var value in values)
                {
                    query.Add(Equal(target, value), i.All ? Occur.MUST : Occur.SHOULD);
                }
                return values.Count == 0 ? new BooleanQuery() : query;
            }
            case RqlMethod m:
                return Method(m, exact);
            case RqlProximity p:
                return Proximity(p, exact);
            default:
                throw new InvalidQueryException(_text, expression.Position, "this expression cannot be used in a where clause.");
        }
    }

    // a and b and c → one BooleanQuery of three clauses (and not nested ones).
    private static void Flatten(RqlExpression expression, bool isAnd, List<RqlExpression> operands)
    {
        if (expression is RqlBinary inner && inner.IsAnd == isAnd)
        {
            Flatten(inner.Left, isAnd, operands);
            Flatten(inner.Right, isAnd, operands);
            return;
        }
        operands.Add(expression);
    }

    /// <summary>
    /// <c>F &gt;= a and F &lt; b</c> on one single-valued field becomes one range (as <c>between</c>
    /// gives), not two half-open ranges each matching about half the index and then intersected. Returns the
    /// operands left; the folded ranges are added to <paramref name="query"/>.
    /// </summary>
    private List<RqlExpression> FoldRanges(List<RqlExpression> operands, BooleanQuery query, bool exact)
    {
        var left = new List<RqlExpression>(operands.Count);
        var bounds = new Dictionary<string, List<RqlComparison>>(StringComparer.Ordinal);
        foreach (var operand in operands)
        {
            if (operand is RqlComparison { Field.IsId: false, Operator: not (RqlComparisonOperator.Equal or RqlComparisonOperator.NotEqual) } c)
            {
                var key = c.Field.Path!.ToString();
                if (!bounds.TryGetValue(key, out var list))
                {
                    bounds[key] = list = [];
                }
                list.Add(c);
            }
            else
            {
                left.Add(operand);
            }
        }
        foreach (var group in bounds.Values)
        {
            var lower = group.Where(c => c.Operator is RqlComparisonOperator.Greater or RqlComparisonOperator.GreaterOrEqual).ToList();
            var upper = group.Where(c => c.Operator is RqlComparisonOperator.Less or RqlComparisonOperator.LessOrEqual).ToList();
            if (lower.Count != 1 || upper.Count != 1)
            {
                left.AddRange(group);
                continue;
            }
            var low = Resolve(lower[0].Value);
            var high = Resolve(upper[0].Value);
            if (low is null || high is null || low.GetType() != high.GetType() || low is bool)
            {
                left.AddRange(group);
                continue;
            }
            var target = Target(lower[0].Field, exact, lower[0].Position);
            // With several values in one entry, "some value >= a and some value < b" is not one range.
            if (_multiValued(target.Name))
            {
                left.AddRange(group);
                continue;
            }
            query.Add(Range(target, new Bound(low, lower[0].Operator == RqlComparisonOperator.GreaterOrEqual), new Bound(high, upper[0].Operator == RqlComparisonOperator.LessOrEqual)), Occur.MUST);
        }
        return left;
    }

    private static Query Not(Query inner) => new BooleanQuery
    {
        { new MatchAllDocsQuery(), Occur.MUST },
        { inner, Occur.MUST_NOT },
    };

    /// <summary>A field as a query reaches it: its Lucene name, whether its string terms are lowercased, and the analyzer its options name (null: the default).</summary>
    private readonly record struct FieldTarget(string Name, bool IsId, bool LowerStrings, FieldIndexing Indexing, Analyzer? Analyzer = null);

    private FieldTarget Target(RqlOperand operand, bool exact, int position, FieldIndexing wanted = FieldIndexing.Default)
    {
        if (operand.IsId)
        {
            return new FieldTarget(LuceneFields.Id, true, true, FieldIndexing.Default);
        }
        var plan = _resolve(operand.Path!, wanted == FieldIndexing.Default && exact ? FieldIndexing.Exact : wanted, position);
        return new FieldTarget(plan.LuceneName, false, plan.Indexing != FieldIndexing.Exact, plan.Indexing, plan.Analyzer);
    }

    private Query Comparison(RqlComparison comparison, bool exact)
    {
        var target = Target(comparison.Field, exact, comparison.Position);
        var value = Resolve(comparison.Value);
        return comparison.Operator switch
        {
            RqlComparisonOperator.Equal => Equal(target, value),
            RqlComparisonOperator.NotEqual => Not(Equal(target, value)),
            RqlComparisonOperator.Less => Range(target, null, new Bound(value, false)),
            RqlComparisonOperator.LessOrEqual => Range(target, null, new Bound(value, true)),
            RqlComparisonOperator.Greater => Range(target, new Bound(value, false), null),
            _ => Range(target, new Bound(value, true), null),
        };
    }

    private static Query Equal(FieldTarget target, object? value) => value switch
    {
        null when target.IsId => new BooleanQuery(),
        null => new TermQuery(new Term(LuceneFields.Null, target.Name)),
        string s => new TermQuery(new Term(target.Name, target.LowerStrings ? LuceneFields.Lower(s) : s)),
        double d when !target.IsId => NumericRangeQuery.NewDoubleRange(target.Name + LuceneFields.NumberSuffix, LuceneFields.NumberPrecisionStep, LowBound(d, true), HighBound(d, true), true, true),
        bool b when !target.IsId => new TermQuery(new Term(target.Name + LuceneFields.BooleanSuffix, b ? "true" : "false")),
        _ => new BooleanQuery(),
    };

    /// <summary>One end of a range: a query value (null is the value null) and whether the range includes it.</summary>
    private readonly record struct Bound(object? Value, bool Inclusive);

    // A range between two bounds of one kind, or with one open end (a null Bound?). A string bound
    // ranges over strings, a number over numbers. Null and booleans have no order: an inclusive
    // bound of one matches what equals it (both bounds, when two, the same value), any other range
    // nothing, as the evaluator compares them (F >= null finds the nulls, F between true and false nothing).
    private static Query Range(FieldTarget target, Bound? low, Bound? high)
    {
        if (low is { } l && high is { } h && l.Value?.GetType() != h.Value?.GetType())
        {
            return new BooleanQuery();
        }
        var bound = (low ?? high)!.Value;
        switch (bound.Value)
        {
            case string:
            {
                var from = low?.Value is string lowText ? (target.LowerStrings ? LuceneFields.Lower(lowText) : lowText) : null;
                var to = high?.Value is string highText ? (target.LowerStrings ? LuceneFields.Lower(highText) : highText) : null;
                return TermRangeQuery.NewStringRange(target.Name, from, to, low?.Inclusive ?? false, high?.Inclusive ?? false);
            }
            case double when !target.IsId:
                return NumericRangeQuery.NewDoubleRange(target.Name + LuceneFields.NumberSuffix, LuceneFields.NumberPrecisionStep,
                    LowBound(low?.Value as double?, low?.Inclusive ?? false), HighBound(high?.Value as double?, high?.Inclusive ?? false), low?.Inclusive ?? false, high?.Inclusive ?? false);
            case null or bool when (low is null || low.Value.Inclusive) && (high is null || high.Value.Inclusive) && (low is null || high is null || Equals(low.Value.Value, high.Value.Value)):
                return Equal(target, bound.Value);
            default:
                return new BooleanQuery();
        }
    }

    // Lucene's numeric terms order -0 just before 0 (their bits differ), and an index may hold either
    // (a JavaScript map's -0; an auto-index built before its walk read -0 as 0). RQL knows one zero:
    // a bound at zero takes in both zeros, or neither.
    private static double? LowBound(double? value, bool inclusive) => value == 0 ? (inclusive ? -0.0 : 0.0) : value;

    private static double? HighBound(double? value, bool inclusive) => value == 0 ? (inclusive ? 0.0 : -0.0) : value;

    private Query Method(RqlMethod method, bool exact)
    {
        if (method.Method == RqlMethodKind.Exists)
        {
            if (method.Field.IsId)
            {
                return new MatchAllDocsQuery();
            }
            var existing = Target(method.Field, exact, method.Position);
            return new TermQuery(new Term(LuceneFields.Exists, existing.Name));
        }
        var value = Resolve(method.Value!);
        if (method.Method == RqlMethodKind.Regex)
        {
            var regexTarget = Target(method.Field, exact, method.Position);
            var pattern = value as string ?? throw new InvalidQueryException(_text, method.Value!.Position, "regex() takes the pattern as a string.");
            return new RegexTermsQuery(regexTarget.Name, RqlRegex.Create(_text, method.Value!, pattern, exact: !regexTarget.LowerStrings), _text, method.Value!);
        }
        if (value is not string text)
        {
            return new BooleanQuery();
        }
        if (method.Method == RqlMethodKind.Search)
        {
            return Search(Target(method.Field, exact, method.Position, FieldIndexing.Search), text, method);
        }
        var target = Target(method.Field, exact, method.Position);
        var term = target.LowerStrings ? LuceneFields.Lower(text) : text;
        return method.Method == RqlMethodKind.StartsWith
            ? new PrefixQuery(new Term(target.Name, term))
            : new WildcardQuery(new Term(target.Name, "*" + EscapeWildcard(term)));
    }

    private Query Search(FieldTarget target, string text, RqlMethod method)
    {
        if (target.Indexing != FieldIndexing.Search)
        {
            throw new InvalidQueryException(_text, method.Position, $"search() needs a field indexed for full text; '{method.Field}' is indexed {target.Indexing} in this index (give it \"Indexing\": \"Search\").");
        }
        var query = new BooleanQuery();
        var occur = method.SearchAll ? Occur.MUST : Occur.SHOULD;
        foreach (var word in text.Split((char[]?)null, StringSplitOptions.RemoveEmptyEntries))
        {
            // A word with * or ? is a wildcard over the words of the field, as RavenDB's search allows.
            if (word.AsSpan().IndexOfAny('*', '?') >= 0)
            {
                query.Add(new WildcardQuery(new Term(target.Name, WildcardTerm(target, word))), occur);
                continue;
            }
            var tokens = Analyze(target.Analyzer ?? LuceneFields.SearchAnalyzer, target.Name, word);
            if (target.Analyzer is null || tokens.Count == 1)
            {
                foreach (var (token, _) in tokens)
                {
                    query.Add(new TermQuery(new Term(target.Name, token)), occur);
                }
            }
            else if (tokens.Count > 1)
            {
                // A named analyzer may make several tokens of one word (n-grams, a split word): the
                // word matches where the field has them at the same relative positions, as Lucene's
                // phrase query reads the analyzer's positions (n-grams of one token share one).
                var phrase = new PhraseQuery();
                foreach (var (token, position) in tokens)
                {
                    phrase.Add(new Term(target.Name, token), position);
                }
                query.Add(phrase, occur);
            }
        }
        return query.Clauses.Count == 0 ? new BooleanQuery() : query;
    }

    /// <summary>
    /// <c>proximity(search(F, 'a b'), n)</c>: a phrase query of the analyzed words with slop n. As
    /// RavenDB, it needs at least two words and no wildcards.
    /// </summary>
    private Query Proximity(RqlProximity proximity, bool exact)
    {
        var method = proximity.Search;
        var target = Target(method.Field, exact, method.Position, FieldIndexing.Search);
        if (target.Indexing != FieldIndexing.Search)
        {
            throw new InvalidQueryException(_text, method.Position, $"search() needs a field indexed for full text; '{method.Field}' is indexed {target.Indexing} in this index (give it \"Indexing\": \"Search\").");
        }
        if (Resolve(method.Value!) is not string text)
        {
            return new BooleanQuery();
        }
        if (text.AsSpan().IndexOfAny('*', '?') >= 0)
        {
            throw new InvalidQueryException(_text, proximity.Position, "Proximity search works only on simple string terms, not wildcard or prefix ones.");
        }
        var words = Analyze(target.Analyzer ?? LuceneFields.SearchAnalyzer, target.Name, text);
        if (words.Count < 2)
        {
            throw new InvalidQueryException(_text, proximity.Position, $"Proximity search works only on multiple search terms; '{text}' gives {words.Count}.");
        }
        var phrase = new PhraseQuery { Slop = proximity.Distance };
        foreach (var (word, position) in words)
        {
            phrase.Add(new Term(target.Name, word), position);
        }
        return phrase;
    }

    // The default analyzer drops * and ?, so a wildcard word is lowercased as its terms are. A named
    // analyzer that keeps the word as one token (whitespace or keyword based) gives the term as its
    // field's terms are made (folded, or with its case); otherwise the word is lowercased too.
    private static string WildcardTerm(FieldTarget target, string word)
    {
        if (target.Analyzer is { } analyzer && Analyze(analyzer, target.Name, word) is [var (token, _)] && token.AsSpan().IndexOfAny('*', '?') >= 0)
        {
            return token;
        }
        return LuceneFields.Lower(word);
    }

    /// <summary>The tokens the analyzer makes of <paramref name="text"/>, each with its position (from 0).</summary>
    private static List<(string Token, int Position)> Analyze(Analyzer analyzer, string field, string text)
    {
        var tokens = new List<(string, int)>();
        using var stream = analyzer.GetTokenStream(field, new StringReader(text));
        var term = stream.AddAttribute<ICharTermAttribute>();
        var increment = stream.AddAttribute<IPositionIncrementAttribute>();
        stream.Reset();
        var position = -1;
        while (stream.IncrementToken())
        {
            position += increment.PositionIncrement;
            tokens.Add((term.ToString(), Math.Max(position, 0)));
        }
        stream.End();
        return tokens;
    }

    private static string EscapeWildcard(string text) =>
        text.Replace("\\", "\\\\", StringComparison.Ordinal).Replace("*", "\\*", StringComparison.Ordinal).Replace("?", "\\?", StringComparison.Ordinal);

    /// <summary>A literal or parameter as a query value: string, double, bool or null.</summary>
    public object? Resolve(RqlValue value)
    {
        switch (value.Kind)
        {
            case RqlValueKind.String:
                return value.Text;
            case RqlValueKind.Number:
                return double.Parse(value.Text, NumberStyles.Float, CultureInfo.InvariantCulture);
            case RqlValueKind.True:
                return true;
            case RqlValueKind.False:
                return false;
            case RqlValueKind.Null:
                return null;
        }
        var parameter = Parameter(value);
        return parameter.ValueKind == JsonValueKind.Array
            ? throw new InvalidQueryException(_text, value.Position, $"the parameter ${value.Text} is an array; use it in 'in (${value.Text})'.")
            : FromJson(parameter);
    }

    private IEnumerable<object?> ResolveList(RqlValue value)
    {
        if (value.Kind == RqlValueKind.Parameter && Parameter(value) is { ValueKind: JsonValueKind.Array } array)
        {
            return array.EnumerateArray().Select(FromJson).ToList();
        }
        return [Resolve(value)];
    }

    private JsonElement Parameter(RqlValue value) =>
        _parameters.TryGetValue(value.Text, out var parameter)
            ? parameter
            : throw new InvalidQueryException(_text, value.Position, $"the parameter ${value.Text} is not given in QueryParameters.");

    private static object? FromJson(JsonElement element) => element.ValueKind switch
    {
        JsonValueKind.String => element.GetString(),
        JsonValueKind.Number => element.GetDouble(),
        JsonValueKind.True => true,
        JsonValueKind.False => false,
        JsonValueKind.Null or JsonValueKind.Undefined => null,
        _ => element.GetRawText(),
    };
}
