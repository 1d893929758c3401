using System.Text.RegularExpressions;
using System.Globalization;
using System.Text.Json;
using Jackdaw.Server.Errors;
using Jackdaw.Server.Rql;
using Jackdaw.Server.Tests.Infrastructure;
using Jackdaw.Storage.Blittable;

namespace Jackdaw.Server.Tests.Rql;

/// <summary>
/// The evaluator on blittable documents against a model: the same meaning written again with LINQ
/// over System.Text.Json, on the orders of the corpus, for random predicates.
/// </summary>
public sealed class RqlEvaluatorTests
{
    private sealed record Doc(string Id, JsonElement Json, byte[] Blittable);

    private static readonly Lazy<List<Doc>> Orders = new(() =>
    {
        using var context = new JsonOperationContext();
        return Corpus.Lines("orders", 1500).Select(line =>
        {
            var json = JsonDocument.Parse(line).RootElement.Clone();
            var blittable = context.Parse(System.Text.Encoding.UTF8.GetBytes(line), BlittableMode.Disk).ToArray();
            context.Reset();
            return new Doc(json.GetProperty("@metadata").GetProperty("@id").GetString()!, json, blittable);
        }).ToList();
    });

    private static List<string> Query(string rql, Dictionary<string, JsonElement>? parameters = null)
    {
        var parsed = RqlParser.Parse(rql);
        var evaluator = new RqlEvaluator(rql, parameters);
        return Orders.Value.Where(d => evaluator.Matches(parsed.Where, d.Id, d.Blittable)).Select(d => d.Id).ToList();
    }

    private static List<string> Model(Func<Doc, bool> predicate) => Orders.Value.Where(predicate).Select(d => d.Id).ToList();

    // The model's reading of a path: every value reached, arrays walked.
    private static List<JsonElement> At(JsonElement json, string path)
    {
        IEnumerable<JsonElement> current = [json];
        foreach (var segment in path.Replace("[]", "", StringComparison.Ordinal).Split('.'))
        {
            current = current.SelectMany(Flatten).Where(e => e.ValueKind == JsonValueKind.Object)
                .SelectMany(e => e.TryGetProperty(segment, out var v) ? [v] : Array.Empty<JsonElement>());
        }
        return current.SelectMany(Flatten).ToList();
    }

    private static IEnumerable<JsonElement> Flatten(JsonElement e) => e.ValueKind == JsonValueKind.Array ? e.EnumerateArray().SelectMany(Flatten) : [e];

    private static bool StringIs(JsonElement e, string value) => e.ValueKind == JsonValueKind.String && string.Equals(e.GetString(), value, StringComparison.OrdinalIgnoreCase);

    private static double? Number(JsonElement e) => e.ValueKind == JsonValueKind.Number ? e.GetDouble() : null;

    [Fact]
    public void HandWrittenPredicatesMatchTheModel()
    {
        var first = Orders.Value[0].Json;
        var company = first.GetProperty("Company").GetString()!;
        var city = first.GetProperty("ShipTo").GetProperty("City").GetString()!;
        var product = first.GetProperty("Lines")[0].GetProperty("Product").GetString()!;

        Assert.Equal(Model(d => At(d.Json, "Company").Any(e => StringIs(e, company))), Query($"from Orders where Company = '{company.ToUpperInvariant()}'"));
        Assert.Empty(Query($"from Orders where exact(Company = '{company.ToUpperInvariant()}')"));
        Assert.Equal(Model(d => At(d.Json, "Company").Any(e => StringIs(e, company))), Query($"from Orders where exact(Company = '{company}')"));
        Assert.Equal(Model(d => At(d.Json, "Freight").Any(e => Number(e) > 100 && Number(e) <= 200)), Query("from Orders where Freight > 100 and Freight <= 200"));
        Assert.Equal(Model(d => At(d.Json, "Freight").Any(e => Number(e) >= 10 && Number(e) <= 20)), Query("from Orders where Freight between 10 and 20"));
        Assert.Equal(Model(d => At(d.Json, "ShipTo.City").Any(e => StringIs(e, city))), Query("from Orders where ShipTo.City = $city", new() { ["city"] = JsonSerializer.SerializeToElement(city) }));
        Assert.Equal(Model(d => At(d.Json, "Lines[].Product").Any(e => StringIs(e, product))), Query($"from Orders where Lines[].Product = '{product}'"));
        Assert.Equal(Model(d => At(d.Json, "Lines.Product").Any(e => StringIs(e, product))), Query($"from Orders where Lines.Product = '{product}'"));
        Assert.Equal(Model(d => At(d.Json, "Valid").Any(e => e.ValueKind == JsonValueKind.False)), Query("from Orders where Valid = false"));
        Assert.Equal(Model(d => !At(d.Json, "Valid").Any(e => e.ValueKind == JsonValueKind.False)), Query("from Orders where Valid != false"));
        Assert.Equal(Model(d => At(d.Json, "ShippedAt").Any(e => e.ValueKind == JsonValueKind.Null)), Query("from Orders where ShippedAt = null"));
        Assert.Equal(Model(d => At(d.Json, "ShippedAt").Count > 0), Query("from Orders where exists(ShippedAt)"));
        Assert.Equal(Model(d => At(d.Json, "NoSuchField").Count > 0), Query("from Orders where exists(NoSuchField)"));
        Assert.Equal(Model(d => At(d.Json, "Company").Any(e => e.GetString()!.StartsWith("companies/1", StringComparison.OrdinalIgnoreCase))), Query("from Orders where startsWith(Company, 'COMPANIES/1')"));
        Assert.Equal(Model(d => At(d.Json, "Company").Any(e => e.GetString()!.EndsWith("7", StringComparison.Ordinal))), Query("from Orders where endsWith(Company, '7')"));
        Assert.Equal(Model(d => string.Equals(d.Id, "orders/3", StringComparison.OrdinalIgnoreCase) || string.Equals(d.Id, "orders/9", StringComparison.OrdinalIgnoreCase)), Query("from Orders where id() in ('ORDERS/3', 'orders/9')"));
        Assert.Equal(Model(d => At(d.Json, "Lines[].ProductName").Any(e => e.GetString()!.Split(' ').Contains("Chair", StringComparer.OrdinalIgnoreCase))), Query("from Orders where search(Lines[].ProductName, 'chair')"));
        Assert.Equal(
            Model(d => new[] { "Chair", "Tuna" }.All(w => At(d.Json, "Lines[].ProductName").Any(e => e.GetString()!.Split(' ').Contains(w, StringComparer.OrdinalIgnoreCase)))),
            Query("from Orders where search(Lines[].ProductName, 'chair tuna', and)"));
        var two = Orders.Value.Take(2).Select(d => d.Json.GetProperty("Lines")[0].GetProperty("Product").GetString()!).ToArray();
        Assert.Equal(Model(d => two.All(p => At(d.Json, "Lines[].Product").Any(e => StringIs(e, p)))), Query($"from Orders where Lines[].Product all in ('{two[0]}', '{two[1]}')"));
        // A number never equals a string.
        Assert.Empty(Query("from Orders where Freight = '10'"));

        // regex(): .NET patterns, found anywhere in the value, case-insensitive except inside exact().
        Assert.Equal(Model(d => At(d.Json, "Company").Any(e => Regex.IsMatch(e.GetString()!, "^companies/1[0-9]$"))), Query("from Orders where regex(Company, '^COMPANIES/1[0-9]$')"));
        Assert.Empty(Query("from Orders where exact(regex(Company, '^COMPANIES/'))"));
        Assert.Equal(Model(d => At(d.Json, "Lines[].ProductName").Any(e => e.GetString()!.Contains("chai", StringComparison.OrdinalIgnoreCase))), Query("from Orders where regex(Lines[].ProductName, 'chai')"));
        Assert.Equal(Model(d => Regex.IsMatch(d.Id, "/[12]$")), Query("from Orders where regex(id(), '/[12]$')"));
        Assert.Empty(Query("from Orders where regex(Freight, '1')"));
        var invalid = Assert.Throws<InvalidQueryException>(() => Query("from Orders where regex(Company, '(')"));
        Assert.Contains("is not a valid regular expression", invalid.Message, StringComparison.Ordinal);

        // proximity(): the words in one value, at most n moves apart (Lucene's phrase slop).
        static List<string> Words(JsonElement e) => e.GetString()!.Split(' ').Select(w => w.ToLowerInvariant()).ToList();
        var names = Orders.Value.SelectMany(d => At(d.Json, "Lines[].ProductName")).Select(Words).First(w => w.Count >= 2);
        var (w0, w1) = (names[0], names[1]);
        // Positions i of the first word and j of the second with j - i within [low, high].
        bool Near(Doc d, string first, string second, int low, int high) => At(d.Json, "Lines[].ProductName").Select(Words).Any(w =>
            Enumerable.Range(0, w.Count).Any(i => w[i] == first && Enumerable.Range(0, w.Count).Any(j => w[j] == second && j - i >= low && j - i <= high)));
        Assert.Equal(Model(d => Near(d, w0, w1, 1, 1)), Query($"from Orders where proximity(search(Lines[].ProductName, '{w0} {w1}'), 0)"));
        Assert.NotEmpty(Model(d => Near(d, w0, w1, 1, 1)));
        // Reversed: '{w1} {w0}' with slop s matches when the offsets p(w1) - 0 and p(w0) - 1 are at most s apart.
        Assert.Equal(Model(d => Near(d, w1, w0, -1, 3)), Query($"from Orders where proximity(search(Lines[].ProductName, '{w1} {w0}'), 2)"));
        Assert.Equal(Model(d => Near(d, w1, w0, 0, 2)), Query($"from Orders where proximity(search(Lines[].ProductName, '{w1} {w0}'), 1)"));
    }

    [Fact]
    public void RandomPredicatesMatchTheModel()
    {
        var random = new Random(18_2026);
        var docs = Orders.Value;
        for (var round = 0; round < 300; round++)
        {
            var (rql, model) = RandomPredicate(random, docs, 3);
            var expected = Model(model);
            var actual = Query("from Orders where " + rql);
            Assert.True(expected.SequenceEqual(actual), $"{rql}: model {expected.Count}, evaluator {actual.Count}");
        }
    }

    private static (string Rql, Func<Doc, bool> Model) RandomPredicate(Random random, List<Doc> docs, int depth)
    {
        if (depth > 0 && random.Next(3) == 0)
        {
            var (l, lm) = RandomPredicate(random, docs, depth - 1);
            var (r, rm) = RandomPredicate(random, docs, depth - 1);
            return random.Next(2) == 0 ? ($"({l} and {r})", d => lm(d) && rm(d)) : ($"({l} or {r})", d => lm(d) || rm(d));
        }
        if (depth > 0 && random.Next(5) == 0)
        {
            var (inner, im) = RandomPredicate(random, docs, depth - 1);
            return ($"not {inner}", d => !im(d));
        }
        var sample = docs[random.Next(docs.Count)].Json;
        switch (random.Next(5))
        {
            case 0:
            {
                var company = sample.GetProperty("Company").GetString()!;
                return ($"Company = {Quote(company)}", d => At(d.Json, "Company").Any(e => StringIs(e, company)));
            }
            case 1:
            {
                var freight = Math.Round(random.NextDouble() * 300, 2);
                var op = new[] { "<", "<=", ">", ">=" }[random.Next(4)];
                Func<double, bool> test = op switch
                {
                    "<" => v => v < freight,
                    "<=" => v => v <= freight,
                    ">" => v => v > freight,
                    _ => v => v >= freight,
                };
                return ($"Freight {op} {freight.ToString(CultureInfo.InvariantCulture)}", d => At(d.Json, "Freight").Any(e => Number(e) is { } v && test(v)));
            }
            case 2:
            {
                var product = sample.GetProperty("Lines")[0].GetProperty("Product").GetString()!;
                return ($"Lines[].Product = {Quote(product)}", d => At(d.Json, "Lines[].Product").Any(e => StringIs(e, product)));
            }
            case 3:
            {
                var quantity = random.Next(1, 60);
                return ($"Lines[].Quantity between {quantity} and {quantity + 10}", d => At(d.Json, "Lines[].Quantity").Any(e => Number(e) >= quantity && Number(e) <= quantity + 10));
            }
            default:
            {
                var country = sample.GetProperty("ShipTo").GetProperty("Country").GetString()!;
                return ($"ShipTo.Country in ({Quote(country)}, 'Nowhere')", d => At(d.Json, "ShipTo.Country").Any(e => StringIs(e, country) || StringIs(e, "Nowhere")));
            }
        }
    }

    private static string Quote(string text) => "'" + text.Replace("\\", "\\\\", StringComparison.Ordinal).Replace("'", "\\'", StringComparison.Ordinal) + "'";

    private static bool Matches(byte[] document, string where, Dictionary<string, JsonElement>? parameters = null)
    {
        var rql = "from Docs where " + where;
        return new RqlEvaluator(rql, parameters).Matches(RqlParser.Parse(rql).Where, "docs/1", document);
    }

    private static byte[] Blittable(string json)
    {
        using var context = new JsonOperationContext();
        return context.Parse(System.Text.Encoding.UTF8.GetBytes(json), BlittableMode.Disk).ToArray();
    }

    [Fact]
    public void ValuesAreReadAsAnAutoIndexReadsThem()
    {
        // A number that does not read as a double (only a document written by other means than JSON
        // holds one: the text of 1.5 is overwritten) is present and equal to nothing, as the index
        // keeps it; it used to be null here.
        var bad = Blittable("""{"A":1.5}""");
        var at = bad.AsSpan().IndexOf("\u00031.5"u8);
        "1x5"u8.CopyTo(bad.AsSpan(at + 1));
        Assert.True(Matches(bad, "exists(A)"));
        Assert.False(Matches(bad, "A = null"));
        Assert.False(Matches(bad, "A = 1.5"));
        Assert.True(Matches(bad, "A != null"));

        // An object at the end of the path: present, equal to nothing.
        var nested = Blittable("""{"A":{"B":null}}""");
        Assert.True(Matches(nested, "exists(A)"));
        Assert.False(Matches(nested, "A = null"));
        Assert.True(Matches(nested, "A.B = null"));

        // One zero.
        var zero = Blittable("""{"A":-0.0}""");
        Assert.True(Matches(zero, "A = 0"));
        Assert.True(Matches(zero, "A >= 0 and A <= -0"));
        Assert.False(Matches(zero, "A < 0 or A > 0"));

        // The string form of the path is read, as an auto-index reads its field: a quoted name
        // holding a '.' is two names.
        var dotted = Blittable("""{"a":{"b":1},"a.b":2}""");
        Assert.True(Matches(dotted, "'a.b' = 1"));
        Assert.False(Matches(dotted, "'a.b' = 2"));
    }

    [Fact]
    public void AStringLongerThanAnIndexTermIsComparedWithNothingButSearched()
    {
        var text = "word " + new string('q', RqlEvaluator.LongestTerm);
        var document = Blittable($$"""{"A":"{{text}}","B":"short"}""");
        var parameters = new Dictionary<string, JsonElement> { ["t"] = JsonSerializer.SerializeToElement(text) };
        Assert.True(Matches(document, "exists(A)"));
        Assert.False(Matches(document, "A = $t", parameters));
        Assert.False(Matches(document, "exact(A = $t)", parameters));
        Assert.False(Matches(document, "A > 'a'"));
        Assert.False(Matches(document, "startsWith(A, 'word')"));
        Assert.False(Matches(document, "endsWith(A, 'q')"));
        Assert.False(Matches(document, "regex(A, 'word')"));
        Assert.True(Matches(document, "A != $t", parameters));
        Assert.True(Matches(document, "search(A, 'word')"));
        Assert.True(Matches(document, "startsWith(B, 'sh')"));
    }

    [Fact]
    public void StringsCompareByCodePointAsIndexTermsDo()
    {
        // U+1F600 (a surrogate pair in UTF-16) is after U+FF71 by code point and in UTF-8, before it by UTF-16 unit.
        var document = Blittable("""{"A":"😀 smile"}""");
        Assert.True(Matches(document, "A > 'ｱ'"));
        Assert.False(Matches(document, "A < 'ｱ'"));
        Assert.True(Matches(document, "exact(A between 'ｱ' and '😁')"));
        Assert.True(RqlEvaluator.CompareCodePoints("\uD83D\uDE00", "\uFF71") > 0);
        Assert.True(RqlEvaluator.CompareCodePoints("\uD7FF", "\uD83D\uDE00") < 0);
        Assert.True(RqlEvaluator.CompareCodePoints("ab", "abc") < 0);
        Assert.Equal(0, RqlEvaluator.CompareCodePoints("ab", "ab"));
    }

    [Fact]
    public void AllInAnEmptyListMatchesNothing()
    {
        var document = Blittable("""{"A":[1,2]}""");
        Assert.False(Matches(document, "A all in ($list)", new() { ["list"] = JsonSerializer.SerializeToElement(Array.Empty<int>()) }));
        Assert.True(Matches(document, "A all in ($list)", new() { ["list"] = JsonSerializer.SerializeToElement(new[] { 2, 1 }) }));
        Assert.False(Matches(document, "A in ($list)", new() { ["list"] = JsonSerializer.SerializeToElement(Array.Empty<int>()) }));
    }

    [Fact]
    public void AMissingParameterIsAnInvalidQueryNamingIt()
    {
        var error = Assert.Throws<InvalidQueryException>(() => Query("from Orders where Company = $company"));
        Assert.Contains("$company", error.Message, StringComparison.Ordinal);
        Assert.Equal(28, error.Position);
    }
}
