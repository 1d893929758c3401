using System.Text.RegularExpressions;
using System.Globalization;
using System.Net;
using System.Text;
using System.Text.Json;
using Jackdaw.Server.Tests.Infrastructure;

namespace Jackdaw.Server.Tests.Indexing;

/// <summary>
/// Random queries over the corpus orders and users, each answered by the real server (through the
/// auto-indexes it makes and widens, waiting for non-stale results) and by LINQ-to-objects over the
/// same documents parsed with System.Text.Json: the same ids, the same order of sort keys where an
/// order is asked, the same totals, the same projected values.
/// </summary>
public sealed class IndexedQueryModelTests(ServerFixture fixture) : IClassFixture<ServerFixture>
{
    private const int PerCollection = 1500;

    private sealed record Doc(string Id, JsonElement Json);

    private HttpClient Client => fixture.Client;

    private static List<Doc> Load(string name) =>
        Corpus.Lines(name, PerCollection).Select(line =>
        {
            var json = JsonDocument.Parse(line).RootElement.Clone();
            return new Doc(json.GetProperty("@metadata").GetProperty("@id").GetString()!, json);
        }).ToList();

    private async Task<string> SeedAsync(params List<Doc>[] collections)
    {
        var db = await fixture.CreateDatabaseAsync();
        foreach (var docs in collections)
        {
            foreach (var chunk in docs.Chunk(500))
            {
                var commands = string.Join(',', chunk.Select(d => $"{{\"Type\":\"PUT\",\"Id\":{JsonSerializer.Serialize(d.Id)},\"Document\":{d.Json.GetRawText()}}}"));
                using var response = await Client.PostAsync($"/databases/{db}/bulk_docs", Api.Json("{\"Commands\":[" + commands + "]}"));
                Assert.Equal(HttpStatusCode.OK, response.StatusCode);
            }
        }
        return db;
    }

    private async Task<JsonElement> QueryAsync(string db, string rql, Dictionary<string, object?> parameters)
    {
        var body = JsonSerializer.Serialize(new { Query = rql, QueryParameters = parameters, WaitForNonStaleResults = true, WaitForNonStaleResultsTimeout = "00:01:00" });
        using var response = await Client.PostAsync($"/databases/{db}/queries", new StringContent(body, Encoding.UTF8, "application/json"));
        var json = await Api.JsonAsync(response);
        Assert.True(response.StatusCode == HttpStatusCode.OK, $"{rql}: {(int)response.StatusCode} {json}");
        Assert.False(json.GetProperty("IsStale").GetBoolean(), rql);
        return json;
    }

    // ---- The model: the meaning of RQL written again over System.Text.Json ----

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

    private static string? Str(JsonElement e) => e.ValueKind == JsonValueKind.String ? e.GetString()!.ToLowerInvariant() : null;

    private static double? Num(JsonElement e) => e.ValueKind == JsonValueKind.Number ? e.GetDouble() : null;

    private static IEnumerable<string> Words(string text) =>
        text.Split(text.Where(c => !char.IsLetterOrDigit(c) && c != '\'').Distinct().ToArray(), StringSplitOptions.RemoveEmptyEntries).Select(w => w.ToLowerInvariant());

    private sealed record Field(string Path, char Kind); // s: string, n: number, b: bool, d: date string

    private static readonly Field[] OrderFields =
    [
        new("Company", 's'), new("Employee", 's'), new("Freight", 'n'), new("ShipTo.City", 's'), new("ShipTo.Country", 's'),
        new("Valid", 'b'), new("OrderedAt", 'd'), new("ShippedAt", 'd'), new("Lines[].Product", 's'), new("Lines[].Quantity", 'n'),
    ];

    private static readonly Field[] UserFields =
    [
        new("FirstName", 's'), new("LastName", 's'), new("Age", 'n'), new("Active", 'b'), new("City", 's'), new("Country", 's'),
        new("Score", 'n'), new("Registered", 'd'),
    ];

    private sealed class Generator(Random random, List<Doc> docs, Field[] fields)
    {
        public Dictionary<string, object?> Parameters { get; } = new();

        private string Value(object? value)
        {
            // Half the values travel as $parameters.
            if (random.Next(2) == 0)
            {
                var name = "p" + Parameters.Count;
                Parameters[name] = value;
                return "$" + name;
            }
            return value switch
            {
                null => "null",
                bool b => b ? "true" : "false",
                double d => d.ToString("R", CultureInfo.InvariantCulture),
                string s => "'" + s.Replace("\\", "\\\\", StringComparison.Ordinal).Replace("'", "\\'", StringComparison.Ordinal) + "'",
                _ => throw new InvalidOperationException(),
            };
        }

        private JsonElement SampleValue(Field field)
        {
            for (var attempt = 0; attempt < 20; attempt++)
            {
                var values = At(docs[random.Next(docs.Count)].Json, field.Path);
                if (values.Count > 0)
                {
                    return values[random.Next(values.Count)];
                }
            }
            return default;
        }

        public (string Rql, Func<JsonElement, bool> Model) Predicate(int depth)
        {
            if (depth > 0 && random.Next(3) == 0)
            {
                var (l, lm) = Predicate(depth - 1);
                var (r, rm) = Predicate(depth - 1);
                return random.Next(2) == 0 ? ($"({l} and {r})", d => lm(d) && rm(d)) : ($"({l} or {r})", d => lm(d) || rm(d));
            }
            if (depth > 0 && random.Next(6) == 0)
            {
                var (inner, im) = Predicate(depth - 1);
                return ($"not ({inner})", d => !im(d));
            }
            var field = fields[random.Next(fields.Length)];
            var path = field.Path;
            var sample = SampleValue(field);
            switch (field.Kind)
            {
                case 'n' when sample.ValueKind == JsonValueKind.Number:
                {
                    var x = sample.GetDouble();
                    switch (random.Next(6))
                    {
                        case 0: return ($"{path} = {Value(x)}", d => At(d, path).Any(e => Num(e) == x));
                        case 1: return ($"{path} < {Value(x)}", d => At(d, path).Any(e => Num(e) < x));
                        case 2: return ($"{path} >= {Value(x)}", d => At(d, path).Any(e => Num(e) >= x));
                        case 3: return ($"{path} != {Value(x)}", d => !At(d, path).Any(e => Num(e) == x));
                        case 4:
                        {
                            var y = x + Math.Round(random.NextDouble() * 50, 2);
                            return ($"{path} between {Value(x)} and {Value(y)}", d => At(d, path).Any(e => Num(e) >= x && Num(e) <= y));
                        }
                        default:
                        {
                            var other = SampleValue(field).GetDouble();
                            return ($"{path} in ({Value(x)}, {Value(other)})", d => At(d, path).Any(e => Num(e) == x || Num(e) == other));
                        }
                    }
                }
                case 'b':
                {
                    var b = random.Next(2) == 0;
                    return ($"{path} = {Value(b)}", d => At(d, path).Any(e => e.ValueKind == (b ? JsonValueKind.True : JsonValueKind.False)));
                }
                case 'd' when random.Next(4) == 0:
                    return random.Next(2) == 0
                        ? ($"{path} = null", d => At(d, path).Any(e => e.ValueKind == JsonValueKind.Null))
                        : ($"exists({path})", d => At(d, path).Count > 0);
                case 's' or 'd' when sample.ValueKind == JsonValueKind.String:
                {
                    var s = sample.GetString()!;
                    var lower = s.ToLowerInvariant();
                    // Some values in another casing: Default indexing is case-insensitive.
                    var asked = random.Next(3) == 0 ? s.ToUpperInvariant() : s;
                    switch (random.Next(field.Kind == 'd' ? 3 : 8))
                    {
                        case 0: return ($"{path} = {Value(asked)}", d => At(d, path).Any(e => Str(e) == lower));
                        case 1: return ($"{path} > {Value(s)}", d => At(d, path).Any(e => Str(e) is { } v && string.CompareOrdinal(v, lower) > 0));
                        case 2: return ($"{path} <= {Value(s)}", d => At(d, path).Any(e => Str(e) is { } v && string.CompareOrdinal(v, lower) <= 0));
                        case 3:
                        {
                            var prefix = lower[..Math.Min(lower.Length, 1 + random.Next(3))];
                            return ($"startsWith({path}, {Value(prefix)})", d => At(d, path).Any(e => Str(e)?.StartsWith(prefix, StringComparison.Ordinal) == true));
                        }
                        case 4:
                        {
                            var suffix = lower[Math.Max(0, lower.Length - 1 - random.Next(3))..];
                            return ($"endsWith({path}, {Value(suffix)})", d => At(d, path).Any(e => Str(e)?.EndsWith(suffix, StringComparison.Ordinal) == true));
                        }
                        case 5:
                            return ($"exact({path} = {Value(s)})", d => At(d, path).Any(e => e.ValueKind == JsonValueKind.String && e.GetString() == s));
                        case 7:
                        {
                            // A regular expression: anchored at the start, at the end, or a piece from the middle.
                            var from = random.Next(Math.Max(1, lower.Length - 2));
                            var piece = Regex.Escape(lower.Substring(from, Math.Min(lower.Length - from, 1 + random.Next(4))));
                            var pattern = random.Next(3) switch { 0 => "^" + piece, 1 => piece + "$", _ => piece.ToUpperInvariant() };
                            return ($"regex({path}, {Value(pattern)})", d => At(d, path).Any(e => Str(e) is { } v && Regex.IsMatch(v, pattern, RegexOptions.IgnoreCase | RegexOptions.CultureInvariant)));
                        }
                        default:
                        {
                            var other = SampleValue(field).GetString()!.ToLowerInvariant();
                            return ($"{path} != {Value(s)} and {path} in ({Value(s)}, {Value(other)})",
                                d => !At(d, path).Any(e => Str(e) == lower) && At(d, path).Any(e => Str(e) == lower || Str(e) == other));
                        }
                    }
                }
                default:
                    return ($"exists({path})", d => At(d, path).Count > 0);
            }
        }

        public string? SearchPredicate(out Func<JsonElement, bool> model)
        {
            var name = SampleValue(new Field("Name", 's'));
            var words = name.ValueKind == JsonValueKind.String ? Words(name.GetString()!).Where(w => w.All(char.IsLetter)).ToList() : [];
            model = _ => false;
            if (words.Count == 0)
            {
                return null;
            }
            var word = words[random.Next(words.Count)];
            var other = Words(SampleValue(new Field("Name", 's')).GetString()!).FirstOrDefault(w => w.All(char.IsLetter)) ?? word;
            var all = random.Next(2) == 0;
            model = d => At(d, "Name").Any(e => e.ValueKind == JsonValueKind.String && (all
                ? Words(e.GetString()!).Contains(word) && Words(e.GetString()!).Contains(other)
                : Words(e.GetString()!).Contains(word) || Words(e.GetString()!).Contains(other)));
            return $"search(Name, {Value(word + " " + other)}{(all ? ", and" : "")})";
        }
    }

    // The sort key of one order-by field, as the server sorts: the first value; numbers as numbers,
    // strings lowercased by ordinal; missing and null first.
    private static IComparable? Key(JsonElement doc, Field field)
    {
        var first = At(doc, field.Path).FirstOrDefault();
        return field.Kind == 'n' ? Num(first) : Str(first);
    }

    private static int CompareKeys(IComparable? a, IComparable? b) =>
        a is null ? (b is null ? 0 : -1) : b is null ? 1 : a is string sa ? string.CompareOrdinal(sa, (string)b) : a.CompareTo(b);

    [Fact]
    public async Task RandomQueriesAnswerAsTheModel()
    {
        var orders = Load("orders");
        var users = Load("users");
        var db = await SeedAsync(orders, users);
        var random = new Random(18_18);
        var nonEmpty = 0;
        var ordered = 0;
        var filtered = 0;
        const int Rounds = 200;
        for (var round = 0; round < Rounds; round++)
        {
            var isOrders = random.Next(3) != 0;
            var (collection, docs, fields) = isOrders ? ("Orders", orders, OrderFields) : ("Users", users, UserFields);
            var generator = new Generator(random, docs, fields);
            var (where, model) = generator.Predicate(2);
            if (!isOrders && random.Next(4) == 0 && generator.SearchPredicate(out var searchModel) is { } search)
            {
                var previous = model;
                where = $"{search} and {where}";
                model = d => searchModel(d) && previous(d);
            }

            // Order by one or two scalar fields (not through arrays), sometimes typed.
            var orderable = fields.Where(f => !f.Path.Contains("[]", StringComparison.Ordinal) && f.Kind != 'b').ToArray();
            var orderBy = new List<(Field Field, bool Desc)>();
            var orderText = "";
            if (random.Next(3) != 0)
            {
                for (var i = 0; i < 1 + random.Next(2); i++)
                {
                    orderBy.Add((orderable[random.Next(orderable.Length)], random.Next(2) == 0));
                }
                orderText = " order by " + string.Join(", ", orderBy.Select(o =>
                    o.Field.Path + (o.Field.Kind == 'n' && random.Next(2) == 0 ? " as double" : "") + (o.Desc ? " desc" : "")));
            }
            long? limit = random.Next(3) == 0 ? null : random.Next(1, 40);
            long offset = limit is null ? 0 : random.Next(0, 20);
            var paging = limit is null ? "" : $" limit {limit} offset {offset}";
            var project = random.Next(4) == 0;
            var select = project ? (isOrders ? " select Company, ShipTo.City as City" : " select FirstName, Age as Years") : "";
            // Sometimes a filter: tested on the documents the index finds, before paging.
            var filterText = "";
            var whereModel = model;
            if (random.Next(4) == 0)
            {
                var (filter, filterModel) = generator.Predicate(1);
                filterText = " filter " + filter;
                model = d => whereModel(d) && filterModel(d);
            }
            var rql = $"from {collection} where {where}{orderText}{filterText}{select}{paging}";

            var expected = docs.Where(d => model(d.Json)).ToList();
            var answer = await QueryAsync(db, rql, generator.Parameters);
            var results = answer.GetProperty("Results").EnumerateArray().ToList();
            if (results.Count > 1)
            {
                nonEmpty++;
                ordered += orderBy.Count > 0 ? 1 : 0;
            }
            Assert.True(expected.Count == answer.GetProperty("TotalResults").GetInt64(), $"{rql}: model total {expected.Count}, server {answer.GetProperty("TotalResults")}");
            if (filterText.Length > 0)
            {
                // The filter examined each document the where found.
                var scanned = docs.Count(d => whereModel(d.Json));
                Assert.True(scanned == answer.GetProperty("ScannedResults").GetInt64(), $"{rql}: model scanned {scanned}, server {answer.GetProperty("ScannedResults")}");
                filtered++;
            }

            var window = expected;
            var byId = expected.ToDictionary(d => d.Id, StringComparer.OrdinalIgnoreCase);
            string IdOf(JsonElement r) => r.GetProperty("@metadata").GetProperty("@id").GetString()!;
            if (orderBy.Count > 0)
            {
                window = expected.Order(Comparer<Doc>.Create((a, b) =>
                {
                    foreach (var (field, desc) in orderBy)
                    {
                        var c = CompareKeys(Key(a.Json, field), Key(b.Json, field));
                        if (c != 0)
                        {
                            return desc ? -c : c;
                        }
                    }
                    return 0;
                })).ToList();
                // Ties may come in any order: compare the keys position by position.
                var expectedKeys = window.Skip((int)offset).Take((int)(limit ?? int.MaxValue)).Select(d => string.Join("|", orderBy.Select(o => Key(d.Json, o.Field)))).ToList();
                var actualKeys = results.Select(r => string.Join("|", orderBy.Select(o => Key(byId[IdOf(r)].Json, o.Field)))).ToList();
                Assert.True(expectedKeys.SequenceEqual(actualKeys), $"{rql}: sort keys differ\nmodel  {string.Join(", ", expectedKeys.Take(10))}\nserver {string.Join(", ", actualKeys.Take(10))}");
            }
            else
            {
                Assert.Equal(Math.Max(0, Math.Min(limit ?? int.MaxValue, expected.Count - offset)), results.Count);
            }
            Assert.All(results, r => Assert.True(byId.ContainsKey(IdOf(r)), $"{rql}: {IdOf(r)} does not match"));
            Assert.Equal(results.Count, results.Select(IdOf).Distinct(StringComparer.OrdinalIgnoreCase).Count());
            if (limit is null)
            {
                Assert.True(expected.Select(d => d.Id).ToHashSet(StringComparer.OrdinalIgnoreCase).SetEquals(results.Select(IdOf)), rql);
            }
            if (project)
            {
                foreach (var result in results)
                {
                    var source = byId[IdOf(result)].Json;
                    if (isOrders)
                    {
                        Assert.Equal(source.GetProperty("Company").GetString(), result.GetProperty("Company").GetString());
                        Assert.Equal(source.GetProperty("ShipTo").GetProperty("City").GetString(), result.GetProperty("City").GetString());
                    }
                    else
                    {
                        Assert.Equal(source.GetProperty("FirstName").GetString(), result.GetProperty("FirstName").GetString());
                        Assert.Equal(source.GetProperty("Age").GetDouble(), result.GetProperty("Years").GetDouble());
                    }
                }
            }
        }
        // A model test whose queries all come back empty would prove nothing.
        Assert.True(nonEmpty > Rounds / 3 && ordered > Rounds / 6, $"only {nonEmpty} of {Rounds} queries had several results ({ordered} of them ordered)");
        Assert.True(filtered > Rounds / 8, $"only {filtered} of {Rounds} queries had a filter");
    }
}
