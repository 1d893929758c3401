using System.Globalization;
using System.Text;
using System.Text.Json;
using System.Text.RegularExpressions;

namespace Jackdaw.Server.Tests.Infrastructure;

/// <summary>
/// Random documents and random <c>where</c> clauses over them, for tests that answer one question
/// two ways. Documents nest objects and arrays (arrays of arrays too) under a few shared property
/// names, so random paths reach values often; their leaves are every kind a stored document holds:
/// integers (up to the long range and beyond 2^53), other numbers written in several ways
/// (<c>-0</c>, <c>1.0</c>, <c>1e3</c>, integers beyond a long), <c>null</c>, booleans, strings in
/// mixed case (empty, with non-ASCII letters, beyond the BMP), objects, and missing properties.
/// Half the values of a clause travel as <c>$parameters</c> (as in IndexedQueryModelTests).
/// </summary>
public sealed class RandomDocuments(Random random)
{
    /// <summary>Property names; "x y" must be quoted in a path.</summary>
    private static readonly string[] Names = ["A", "B", "C", "x y"];

    /// <summary>Number texts, written so in documents, RQL literals and parameters.</summary>
    private static readonly string[] Numbers =
    [
        "0", "1", "-1", "2", "3", "10", "42", "-7", "1.5", "-2.5", "2.50", "1.0", "0.0", "-0", "-0.0", "1e3", "1E-2", "1000",
        "9007199254740993", "9007199254740992", "9223372036854775807", "-9223372036854775808", "12345678901234567890", "1e308", "-1e308",
    ];

    private static readonly string[] Words = ["alpha", "Alpha", "ALPHA", "beta", "Beta", "gamma", "delta", "a", "b", "Émile", "éclair", "straße", "zeta"];

    private static readonly string[] Strings = ["", "10", "true", "null", "x", "X", "😀 smile", "ｱ"];

    // Non-ASCII text as it is, not as \u escapes.
    private static readonly JsonSerializerOptions Options = new() { Encoder = System.Text.Encodings.Web.JavaScriptEncoder.UnsafeRelaxedJsonEscaping };

    public Dictionary<string, object?> Parameters { get; } = new();

    /// <summary>A document as JSON text (numbers exactly as written in <see cref="Numbers"/>).</summary>
    public string Document(string collection)
    {
        var text = new StringBuilder();
        text.Append('{');
        foreach (var name in Names)
        {
            if (random.Next(4) == 0)
            {
                continue;
            }
            text.Append(JsonSerializer.Serialize(name)).Append(':');
            AppendValue(text, depth: 0);
            text.Append(',');
        }
        text.Append("\"@metadata\":{\"@collection\":").Append(JsonSerializer.Serialize(collection)).Append("}}");
        return text.ToString();
    }

    private void AppendValue(StringBuilder text, int depth)
    {
        var nested = depth < 3 ? 6 - (2 * depth) : 0;
        var choice = random.Next(10 + nested);
        switch (choice)
        {
            case 0:
                text.Append("null");
                return;
            case 1:
                text.Append(random.Next(2) == 0 ? "true" : "false");
                return;
            case 2 or 3 or 4:
                text.Append(Numbers[random.Next(Numbers.Length)]);
                return;
            case 5 or 6 or 7 or 8:
                text.Append(JsonSerializer.Serialize(StringValue(), Options));
                return;
            case 9:
                // Now and then a string longer than an index term may be (8 K characters).
                text.Append(JsonSerializer.Serialize(random.Next(8) == 0 ? new string('q', 9000) : Pick(Words)));
                return;
        }
        if (random.Next(2) == 0)
        {
            text.Append('{');
            var first = true;
            foreach (var name in Names)
            {
                if (random.Next(2) == 0)
                {
                    continue;
                }
                text.Append(first ? "" : ",").Append(JsonSerializer.Serialize(name)).Append(':');
                first = false;
                AppendValue(text, depth + 1);
            }
            text.Append('}');
            return;
        }
        text.Append('[');
        var count = random.Next(4);
        for (var i = 0; i < count; i++)
        {
            text.Append(i == 0 ? "" : ",");
            AppendValue(text, depth + 1);
        }
        text.Append(']');
    }

    private string StringValue() => random.Next(3) switch
    {
        0 => Pick(Strings),
        1 => Pick(Words) + " " + Pick(Words),
        _ => Pick(Words),
    };

    private string Pick(string[] values) => values[random.Next(values.Length)];

    /// <summary>
    /// The paths clauses use: one to three names, a quoted one, segments marked as arrays or not.
    /// A fixed few, so that the one auto-index that covers them all keeps a name the server can
    /// store (every path is indexed up to three ways, and the name lists them all).
    /// </summary>
    private static readonly string[] Paths = ["A", "B", "'x y'", "A.B", "A[].B", "B.C.A", "C[].A[]", "'x y'.A", "A.A"];

    public string Path() => Pick(Paths);

    /// <summary>A random where clause of at most <paramref name="depth"/> levels of and/or/not.</summary>
    public string Where(int depth)
    {
        if (depth > 0 && random.Next(3) == 0)
        {
            return $"({Where(depth - 1)} {(random.Next(2) == 0 ? "and" : "or")} {Where(depth - 1)})";
        }
        if (depth > 0 && random.Next(6) == 0)
        {
            return $"not ({Where(depth - 1)})";
        }
        var path = Path();
        switch (random.Next(18))
        {
            case 0 or 1 or 2:
                return $"{path} = {Literal(AnyValue())}";
            case 3:
                return $"{path} != {Literal(AnyValue())}";
            case 4 or 5:
            {
                var op = Pick(["<", "<=", ">", ">="]);
                return $"{path} {op} {Literal(random.Next(6) == 0 ? AnyValue() : random.Next(2) == 0 ? NumberValue() : StringValue())}";
            }
            case 6:
            {
                var (low, high) = random.Next(4) switch
                {
                    0 or 1 => ((object?)NumberValue(), (object?)NumberValue()),
                    2 => (StringValue(), StringValue()),
                    _ => (AnyValue(), AnyValue()),
                };
                return $"{path} between {Literal(low)} and {Literal(high)}";
            }
            case 7:
                return In(path, all: false);
            case 8:
                return In(path, all: true);
            case 9:
                return $"exists({path})";
            case 10:
            {
                var value = StringValue();
                var prefix = value[..Math.Min(value.Length, random.Next(4))];
                return $"startsWith({path}, {Literal(random.Next(3) == 0 ? prefix.ToUpperInvariant() : prefix)})";
            }
            case 11:
            {
                var value = StringValue();
                return $"endsWith({path}, {Literal(value[Math.Max(0, value.Length - 1 - random.Next(3))..])})";
            }
            case 12:
                return $"exact({path} {Pick(["=", "=", ">", "<="])} {Literal(StringValue())})";
            case 13:
            {
                var value = StringValue();
                var from = random.Next(Math.Max(1, value.Length));
                var piece = Regex.Escape(value.Substring(from, Math.Min(value.Length - from, 1 + random.Next(3))));
                return $"regex({path}, {Literal(random.Next(3) switch { 0 => "^" + piece, 1 => piece + "$", _ => piece.ToUpperInvariant() })})";
            }
            case 14:
                return $"search({path}, {Literal(Pick(Words) + " " + Pick(Words))}{(random.Next(2) == 0 ? ", and" : "")})";
            case 15:
                return $"{path} = {Literal(null)}";
            case 16:
            {
                // Two bounds on one path: the index folds them into one range where no entry has
                // several values for it.
                var (low, high) = random.Next(2) == 0 ? ((object?)NumberValue(), (object?)NumberValue()) : (StringValue(), StringValue());
                return $"({path} {Pick([">", ">="])} {Literal(low)} and {path} {Pick(["<", "<="])} {Literal(high)})";
            }
            default:
                return random.Next(2) == 0
                    ? $"id() = {Literal("DOCS/" + random.Next(400))}"
                    : $"startsWith(id(), {Literal("docs/" + random.Next(1, 40))})";
        }
    }

    private string In(string path, bool all)
    {
        var values = Enumerable.Range(0, random.Next(4)).Select(_ => AnyValue()).ToList();
        if (random.Next(2) == 0)
        {
            // The whole list as one array parameter (possibly empty).
            var name = "p" + Parameters.Count;
            Parameters[name] = values.Select(ParameterOf).ToList();
            return $"{path} {(all ? "all in" : "in")} (${name})";
        }
        if (values.Count == 0)
        {
            values.Add(AnyValue());
        }
        return $"{path} {(all ? "all in" : "in")} ({string.Join(", ", values.Select(Literal))})";
    }

    private object? AnyValue() => random.Next(8) switch
    {
        0 => null,
        1 => random.Next(2) == 0,
        2 or 3 or 4 => NumberValue(),
        _ => StringValue(),
    };

    private Number NumberValue() => new(Pick(Numbers));

    /// <summary>A number kept as the text a document or query writes for it.</summary>
    public sealed record Number(string Text);

    private static object? ParameterOf(object? value) => value is Number n ? JsonDocument.Parse(n.Text).RootElement.Clone() : value;

    /// <summary>The value in RQL: a literal or, half the time, a <c>$parameter</c>.</summary>
    private string Literal(object? value)
    {
        if (random.Next(2) == 0)
        {
            var name = "p" + Parameters.Count;
            Parameters[name] = ParameterOf(value);
            return "$" + name;
        }
        return value switch
        {
            null => "null",
            bool b => b ? "true" : "false",
            Number n => n.Text,
            string s => "'" + s.Replace("\\", "\\\\", StringComparison.Ordinal).Replace("'", "\\'", StringComparison.Ordinal) + "'",
            _ => throw new InvalidOperationException(Convert.ToString(value, CultureInfo.InvariantCulture)),
        };
    }
}
