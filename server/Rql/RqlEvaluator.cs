using System.Globalization;
using System.Text.Json;
using Jackdaw.Server.Documents;
using Jackdaw.Server.Errors;

namespace Jackdaw.Server.Rql;

/// <summary>
/// Evaluates a <c>where</c> expression on one document, straight from its blittable form, with the
/// meaning the indexes will give it (so subscriptions, which filter without an index, and tests
/// agree with queries):
/// <list type="bullet">
/// <item>a path reaches the values <see cref="DocumentPath"/> gives (its leaf rules: arrays walked
///   wherever met, an object at the end or a number that does not read as a double is present and
///   equal to nothing), read from the path's string form as an auto-index reads its fields;</item>
/// <item>strings compare lowercased (invariant culture) except inside <c>exact()</c> (as they are),
///   by code point: the order of an index's terms (UTF-8 bytes), which differs from UTF-16 ordinal
///   where a character beyond U+FFFF meets one from U+E000; a string longer than
///   <see cref="LongestTerm"/> characters is no term of an index: it equals nothing and is in no range
///   (<c>search()</c> still finds its words);</item>
/// <item>numbers compare as numbers (-0 equals 0); a number never equals a string;</item>
/// <item>a path through an array (<c>Lines[].Product</c>, or any segment that meets an array) matches
///   when any element does; <c>all in</c> needs every listed value among the elements (and an empty
///   list matches nothing, as the index's query of no clauses);</item>
/// <item><c>Field = null</c> finds an explicit null, not a missing field; <c>exists(Field)</c> finds
///   any present value, null included; <c>!=</c> is <c>not =</c> (a missing field is "not equal");</item>
/// <item><c>search</c> splits the text and the words on anything that is not a letter or digit and
///   matches when any word (<c>and</c>: every word) is among the text's words, case-insensitively;
///   <c>proximity(search(...), n)</c> when the words occur in one value with at most <c>n</c> moves
///   between them (the slop of Lucene's phrase query);</item>
/// <item><c>regex</c> matches when the .NET regular expression finds a match in a value
///   (<see cref="RqlRegex"/>: case-insensitive except inside <c>exact()</c>).</item>
/// </list>
/// </summary>
public sealed class RqlEvaluator
{
    /// <summary>
    /// The longest string an index keeps as a term (<c>LuceneFields.MaxTermChars</c> is this one;
    /// Lucene's own limit is 32,766 bytes): a longer string is compared with nothing, here as there.
    /// </summary>
    public const int LongestTerm = 8 * 1024;

    private readonly string _query;
    private readonly IReadOnlyDictionary<string, JsonElement> _parameters;

    // The compiled pattern of each regex() (by node and exactness), made once per evaluator.
    private readonly Dictionary<(RqlMethod, bool), System.Text.RegularExpressions.Regex> _regexes = [];

    /// <param name="query">The query text, for error positions.</param>
    /// <param name="parameters">The values of its <c>$parameters</c>.</param>
    public RqlEvaluator(string query, IReadOnlyDictionary<string, JsonElement>? parameters = null)
    {
        _query = query;
        _parameters = parameters ?? new Dictionary<string, JsonElement>();
    }

    /// <summary>Whether the document (<paramref name="id"/>, its blittable) matches <paramref name="expression"/>.</summary>
    /// <exception cref="InvalidQueryException">A parameter the expression uses is not given.</exception>
    public bool Matches(RqlExpression? expression, string id, ReadOnlySpan<byte> document) =>
        expression is null || Evaluate(expression, id, document, exact: false);

    private bool Evaluate(RqlExpression expression, string id, ReadOnlySpan<byte> document, bool exact) => expression switch
    {
        RqlBinary { IsAnd: true } b => Evaluate(b.Left, id, document, exact) && Evaluate(b.Right, id, document, exact),
        RqlBinary b => Evaluate(b.Left, id, document, exact) || Evaluate(b.Right, id, document, exact),
        RqlNot n => !Evaluate(n.Operand, id, document, exact),
        RqlExact e => Evaluate(e.Inner, id, document, exact: true),
        RqlComparison c => c.Operator == RqlComparisonOperator.NotEqual
            ? !Any(c.Field, id, document, Resolve(c.Value), (value, target) => Compare(value, target, exact) == 0)
            : Any(c.Field, id, document, Resolve(c.Value), (value, target) => Compare(value, target, exact) is { } order && c.Operator switch
            {
                RqlComparisonOperator.Equal => order == 0,
                RqlComparisonOperator.Less => order < 0,
                RqlComparisonOperator.LessOrEqual => order <= 0,
                RqlComparisonOperator.Greater => order > 0,
                _ => order >= 0,
            }),
        RqlBetween b => Any(b.Field, id, document, (Resolve(b.Low), Resolve(b.High)), (value, range) =>
            Compare(value, range.Item1, exact) >= 0 && Compare(value, range.Item2, exact) <= 0),
        RqlIn { All: false } i => Any(i.Field, id, document, i.Values.SelectMany(ResolveList).ToList(), (value, targets) =>
            targets.Any(t => Compare(value, t, exact) == 0)),
        RqlIn i => AllIn(i, id, document, exact),
        RqlMethod m => EvaluateMethod(m, id, document, exact),
        RqlProximity p => Proximity(p, id, document),
        _ => throw new InvalidQueryException(_query, expression.Position, "this expression cannot be evaluated."),
    };

    private bool AllIn(RqlIn expression, string id, ReadOnlySpan<byte> document, bool exact)
    {
        var values = Values(expression.Field, id, document);
        var any = false;
        foreach (var resolved in expression.Values.SelectMany(ResolveList))
        {
            if (!values.Any(value => Compare(value, resolved, exact) == 0))
            {
                return false;
            }
            any = true;
        }
        return any;
    }

    private bool EvaluateMethod(RqlMethod method, string id, ReadOnlySpan<byte> document, bool exact)
    {
        if (method.Method == RqlMethodKind.Exists)
        {
            return method.Field.IsId || Any(method.Field, id, document, true, static (_, _) => true);
        }
        var target = Resolve(method.Value!);
        if (method.Method == RqlMethodKind.Regex)
        {
            var key = (method, exact);
            if (!_regexes.TryGetValue(key, out var regex))
            {
                _regexes[key] = regex = RqlRegex.Create(_query, method.Value!, target, exact);
            }
            return Any(method.Field, id, document, regex, (value, r) => value.Term is { } s && RqlRegex.IsMatch(_query, method.Value!, r, s));
        }
        if (target.ValueKind != JsonValueKind.String)
        {
            return false;
        }
        var text = target.GetString()!;
        return method.Method switch
        {
            RqlMethodKind.StartsWith => Any(method.Field, id, document, exact ? text : text.ToLowerInvariant(), (value, t) => value.Term is { } s && (exact ? s : s.ToLowerInvariant()).StartsWith(t, StringComparison.Ordinal)),
            RqlMethodKind.EndsWith => Any(method.Field, id, document, exact ? text : text.ToLowerInvariant(), (value, t) => value.Term is { } s && (exact ? s : s.ToLowerInvariant()).EndsWith(t, StringComparison.Ordinal)),
            _ => Search(method, id, document, text),
        };
    }

    private bool Search(RqlMethod method, string id, ReadOnlySpan<byte> document, string text)
    {
        var words = Words(text);
        if (words.Count == 0)
        {
            return false;
        }
        var found = new HashSet<string>(StringComparer.OrdinalIgnoreCase);
        foreach (var value in Values(method.Field, id, document))
        {
            if (value.Kind == PathLeafKind.String)
            {
                found.UnionWith(Words(value.Text!));
            }
        }
        return method.SearchAll ? words.All(found.Contains) : words.Any(found.Contains);
    }

    private bool Proximity(RqlProximity proximity, string id, ReadOnlySpan<byte> document)
    {
        var target = Resolve(proximity.Search.Value!);
        if (target.ValueKind != JsonValueKind.String)
        {
            return false;
        }
        var words = Words(target.GetString()!);
        foreach (var value in Values(proximity.Search.Field, id, document))
        {
            if (value.Kind == PathLeafKind.String && WithinSlop(Words(value.Text!), words, proximity.Distance))
            {
                return true;
            }
        }
        return false;
    }

    /// <summary>
    /// Whether <paramref name="words"/> occur in <paramref name="text"/> with a slop of at most
    /// <paramref name="slop"/>: for positions p<sub>i</sub> of the i-th word, max(p<sub>i</sub> - i) - min(p<sub>i</sub> - i)
    /// (Lucene's sloppy phrase match length; 0 is the exact phrase).
    /// </summary>
    private static bool WithinSlop(List<string> text, List<string> words, int slop)
    {
        return Choose(0, int.MaxValue, int.MinValue);

        bool Choose(int word, int low, int high)
        {
            if (word == words.Count)
            {
                return high - low <= slop;
            }
            for (var position = 0; position < text.Count; position++)
            {
                if (!string.Equals(text[position], words[word], StringComparison.OrdinalIgnoreCase))
                {
                    continue;
                }
                var offset = position - word;
                var newLow = Math.Min(low, offset);
                var newHigh = Math.Max(high, offset);
                if (newHigh - newLow <= slop && Choose(word + 1, newLow, newHigh))
                {
                    return true;
                }
            }
            return false;
        }
    }

    private static List<string> Words(string text) =>
        text.Split(text.Where(c => !char.IsLetterOrDigit(c)).Distinct().ToArray(), StringSplitOptions.RemoveEmptyEntries).ToList();

    /// <summary>Whether some value the operand reaches passes <paramref name="test"/> (the walk stops at the first).</summary>
    private static bool Any<T>(RqlOperand operand, string id, ReadOnlySpan<byte> document, T target, Func<Scalar, T, bool> test)
    {
        if (operand.IsId)
        {
            return test(new Scalar(PathLeafKind.String, 0, id), target);
        }
        var visitor = new FirstMatch<T>(target, test);
        operand.Path!.DocumentPath.Walk(document, ref visitor);
        return visitor.Found;
    }

    /// <summary>Every value a field reaches (arrays walked).</summary>
    private static List<Scalar> Values(RqlOperand operand, string id, ReadOnlySpan<byte> document)
    {
        if (operand.IsId)
        {
            return [new Scalar(PathLeafKind.String, 0, id)];
        }
        var visitor = new AllValues([]);
        operand.Path!.DocumentPath.Walk(document, ref visitor);
        return visitor.Values;
    }

    /// <summary>A value a path reached, as the comparisons read it: its kind, its number or its text.</summary>
    private readonly record struct Scalar(PathLeafKind Kind, double Number, string? Text)
    {
        public static Scalar Of(PathLeaf leaf) => leaf.Kind == PathLeafKind.String
            ? new Scalar(PathLeafKind.String, 0, leaf.GetString())
            : new Scalar(leaf.Kind, leaf.Number, null);

        /// <summary>The string when an index would keep it as a term (see <see cref="LongestTerm"/>), else null.</summary>
        public string? Term => Kind == PathLeafKind.String && Text!.Length <= LongestTerm ? Text : null;
    }

    private struct FirstMatch<T>(T target, Func<Scalar, T, bool> test) : IDocumentPathVisitor
    {
        public bool Found { get; private set; }

        public bool Leaf(PathLeaf leaf)
        {
            Found = test(Scalar.Of(leaf), target);
            return !Found;
        }

        public readonly void EnterArray()
        {
        }

        public readonly void LeaveArray()
        {
        }
    }

    private readonly struct AllValues(List<Scalar> values) : IDocumentPathVisitor
    {
        public List<Scalar> Values => values;

        public bool Leaf(PathLeaf leaf)
        {
            values.Add(Scalar.Of(leaf));
            return true;
        }

        public void EnterArray()
        {
        }

        public void LeaveArray()
        {
        }
    }

    /// <summary>The order of a document's value against a query value; null when they cannot be compared.</summary>
    private static int? Compare(Scalar value, JsonElement target, bool exact) => (value.Kind, target.ValueKind) switch
    {
        (PathLeafKind.Null, JsonValueKind.Null) => 0,
        (PathLeafKind.String, JsonValueKind.String) when value.Term is { } s => Math.Sign(exact ? CompareCodePoints(s, target.GetString()!) : CompareCodePoints(s.ToLowerInvariant(), target.GetString()!.ToLowerInvariant())),
        (PathLeafKind.Number, JsonValueKind.Number) => value.Number.CompareTo(target.GetDouble()),
        (PathLeafKind.True, JsonValueKind.True) or (PathLeafKind.False, JsonValueKind.False) => 0,
        _ => null,
    };

    /// <summary>
    /// Ordinal order by code point, which is the order of UTF-8 bytes and so of an index's terms. It
    /// differs from <see cref="string.CompareOrdinal(string, string)"/> (UTF-16 units) only where a
    /// character beyond U+FFFF (a surrogate pair) meets one from U+E000 to U+FFFF.
    /// </summary>
    public static int CompareCodePoints(string a, string b)
    {
        var common = a.AsSpan().CommonPrefixLength(b);
        if (common == a.Length || common == b.Length)
        {
            return a.Length.CompareTo(b.Length);
        }
        var (x, y) = (a[common], b[common]);
        if (char.IsSurrogate(x) != char.IsSurrogate(y) && (char.IsSurrogate(x) ? y : x) >= '\uE000')
        {
            return char.IsSurrogate(x) ? 1 : -1;
        }
        return x.CompareTo(y);
    }

    /// <summary>The values of an <c>in</c> list entry: a <c>$parameter</c> holding an array gives each element.</summary>
    private IEnumerable<JsonElement> ResolveList(RqlValue value)
    {
        var resolved = Resolve(value);
        return resolved.ValueKind == JsonValueKind.Array ? resolved.EnumerateArray().ToList() : [resolved];
    }

    private JsonElement Resolve(RqlValue value)
    {
        switch (value.Kind)
        {
            case RqlValueKind.Parameter:
                if (!_parameters.TryGetValue(value.Text, out var parameter))
                {
                    throw new InvalidQueryException(_query, value.Position, $"the parameter ${value.Text} is not given in QueryParameters.");
                }
                return parameter;
            case RqlValueKind.String:
                return JsonSerializer.SerializeToElement(value.Text);
            case RqlValueKind.Number:
                return JsonSerializer.SerializeToElement(double.Parse(value.Text, NumberStyles.Float, CultureInfo.InvariantCulture));
            case RqlValueKind.True:
                return JsonSerializer.SerializeToElement(true);
            case RqlValueKind.False:
                return JsonSerializer.SerializeToElement(false);
            default:
                return JsonSerializer.SerializeToElement<object?>(null);
        }
    }
}
