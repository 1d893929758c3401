using System.Globalization;
using System.Text.Json;
using Jackdaw.Server.Errors;
using Jackdaw.Storage.Blittable;

namespace Jackdaw.Server.Rql;

/// <summary>
/// Evaluates a <c>where</c> expression on one document, straight from its blittable form, with the
/// meaning the indexes will give it (so subscriptions, which filter without an index, and tests
/// agree with queries):
/// <list type="bullet">
/// <item>strings compare lowercased (invariant culture), by ordinal, except inside <c>exact()</c>
///   (ordinal as they are): the order of an index's lowercased terms;</item>
/// <item>numbers compare as numbers; a number never equals a string;</item>
/// <item>a path through an array (<c>Lines[].Product</c>, or any segment that meets an array) matches
///   when any element does; <c>all in</c> needs every listed value among the elements;</item>
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
        expression is null || Evaluate(expression, id, BlittableReader.Open(document), exact: false);

    private bool Evaluate(RqlExpression expression, string id, BlittableObject document, bool exact) => expression switch
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

    private bool AllIn(RqlIn expression, string id, BlittableObject document, bool exact)
    {
        var values = Values(expression.Field, id, document);
        foreach (var resolved in expression.Values.SelectMany(ResolveList))
        {
            if (!values.Any(value => Compare(value, resolved, exact) == 0))
                return false;
        }
        return true;
    }

    private bool EvaluateMethod(RqlMethod method, string id, BlittableObject document, bool exact)
    {
        if (method.Method == RqlMethodKind.Exists)
            return method.Field.IsId || Collect(method.Field.Path!, document).Count > 0;
        var target = Resolve(method.Value!);
        if (method.Method == RqlMethodKind.Regex)
        {
            var key = (method, exact);
            if (!_regexes.TryGetValue(key, out var regex))
                _regexes[key] = regex = RqlRegex.Create(_query, method.Value!, target, exact);
            return Any(method.Field, id, document, regex, (value, r) => value is string s && RqlRegex.IsMatch(_query, method.Value!, r, s));
        }
        if (target.ValueKind != JsonValueKind.String)
            return false;
        var text = target.GetString()!;
        return method.Method switch
        {
            RqlMethodKind.StartsWith => Any(method.Field, id, document, exact ? text : text.ToLowerInvariant(), (value, t) => value is string s && (exact ? s : s.ToLowerInvariant()).StartsWith(t, StringComparison.Ordinal)),
            RqlMethodKind.EndsWith => Any(method.Field, id, document, exact ? text : text.ToLowerInvariant(), (value, t) => value is string s && (exact ? s : s.ToLowerInvariant()).EndsWith(t, StringComparison.Ordinal)),
            _ => Search(method, id, document, text),
        };
    }

    private bool Search(RqlMethod method, string id, BlittableObject document, string text)
    {
        var words = Words(text);
        if (words.Count == 0)
            return false;
        var found = new HashSet<string>(StringComparer.OrdinalIgnoreCase);
        foreach (var value in Values(method.Field, id, document))
        {
            if (value is string s)
                found.UnionWith(Words(s));
        }
        return method.SearchAll ? words.All(found.Contains) : words.Any(found.Contains);
    }

    private bool Proximity(RqlProximity proximity, string id, BlittableObject document)
    {
        var target = Resolve(proximity.Search.Value!);
        if (target.ValueKind != JsonValueKind.String)
            return false;
        var words = Words(target.GetString()!);
        foreach (var value in Values(proximity.Search.Field, id, document))
        {
            if (value is string s && WithinSlop(Words(s), words, proximity.Distance))
                return true;
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
                return high - low <= slop;
            for (var position = 0; position < text.Count; position++)
            {
                if (!string.Equals(text[position], words[word], StringComparison.OrdinalIgnoreCase))
                    continue;
                var offset = position - word;
                var newLow = Math.Min(low, offset);
                var newHigh = Math.Max(high, offset);
                if (newHigh - newLow <= slop && Choose(word + 1, newLow, newHigh))
                    return true;
            }
            return false;
        }
    }

    private static List<string> Words(string text) =>
        text.Split(text.Where(c => !char.IsLetterOrDigit(c)).Distinct().ToArray(), StringSplitOptions.RemoveEmptyEntries).ToList();

    private bool Any<T>(RqlOperand operand, string id, BlittableObject document, T target, Func<object?, T, bool> test)
    {
        foreach (var value in Values(operand, id, document))
        {
            if (test(value, target))
                return true;
        }
        return false;
    }

    /// <summary>The values a field reaches (arrays walked), as string, double, bool or null.</summary>
    private static List<object?> Values(RqlOperand operand, string id, BlittableObject document) =>
        operand.IsId ? [id] : Collect(operand.Path!, document);

    private static List<object?> Collect(RqlPath path, BlittableObject document)
    {
        var values = new List<object?>();
        Walk(document, path.Segments, 0, values);
        return values;
    }

    private static void Walk(BlittableObject current, IReadOnlyList<RqlPathSegment> segments, int depth, List<object?> values)
    {
        if (current.TryGet(segments[depth].Name, out var value))
            Visit(value, segments, depth + 1, values);
    }

    private static void Visit(BlittableValue value, IReadOnlyList<RqlPathSegment> segments, int depth, List<object?> values)
    {
        switch (value.Type)
        {
            case BlittableToken.Array:
                var array = value.GetArray();
                for (var i = 0; i < array.Length; i++)
                    Visit(array[i], segments, depth, values);
                return;
            case BlittableToken.Object when depth < segments.Count:
                Walk(value.GetObject(), segments, depth, values);
                return;
        }
        if (depth < segments.Count)
            return;
        values.Add(value.Type switch
        {
            BlittableToken.Null => null,
            BlittableToken.True => true,
            BlittableToken.False => false,
            BlittableToken.Integer or BlittableToken.Double => value.TryGetDouble(out var d) ? d : null,
            BlittableToken.String => value.GetString(),
            _ => Unmatchable.Instance,
        });
    }

    /// <summary>An object or array where a scalar was expected: present, equal to nothing.</summary>
    private sealed class Unmatchable
    {
        public static readonly Unmatchable Instance = new();
    }

    /// <summary>The order of a document's value against a query value; null when they cannot be compared.</summary>
    private static int? Compare(object? value, JsonElement target, bool exact) => (value, target.ValueKind) switch
    {
        (null, JsonValueKind.Null) => 0,
        (string s, JsonValueKind.String) => Math.Sign(exact ? string.CompareOrdinal(s, target.GetString()) : string.CompareOrdinal(s.ToLowerInvariant(), target.GetString()!.ToLowerInvariant())),
        (double d, JsonValueKind.Number) => d.CompareTo(target.GetDouble()),
        (bool b, JsonValueKind.True) => b ? 0 : null,
        (bool b, JsonValueKind.False) => b ? null : 0,
        _ => null,
    };


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
                    throw new InvalidQueryException(_query, value.Position, $"the parameter ${value.Text} is not given in QueryParameters.");
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
