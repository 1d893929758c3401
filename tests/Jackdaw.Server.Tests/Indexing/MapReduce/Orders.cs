using System.Net;
using System.Text;
using System.Text.Json;
using Jackdaw.Server.Tests.Infrastructure;

namespace Jackdaw.Server.Tests.Indexing.MapReduce;

/// <summary>
/// The orders the map-reduce tests write and the indexes they define over them, with the model
/// the results are checked against: LINQ <c>GroupBy</c> over the same orders in memory. Prices and
/// quantities are whole numbers, so every sum is exact in doubles whatever order the reduce tree
/// adds them in.
/// </summary>
internal static class Orders
{
    public const string ByCompany = "Orders/ByCompany";
    public const string ByCompanyMonth = "Orders/ByCompanyAndMonth";
    public const string LinesByCompany = "Lines/ByCompany";

    public const string ByCompanyMap = "map('Orders', o => ({ Company: o.Company, Count: 1, Total: o.Lines.reduce((s, l) => s + l.PricePerUnit * l.Quantity, 0) }))";
    public const string ByCompanyReduce = "groupBy(r => r.Company).aggregate(g => ({ Company: g.key, Count: g.values.reduce((c, r) => c + r.Count, 0), Total: g.values.reduce((t, r) => t + r.Total, 0) }))";
    public const string ByCompanyMonthMap = "map('Orders', o => ({ Company: o.Company, Month: o.Month, Count: 1, Total: o.Lines.reduce((s, l) => s + l.PricePerUnit * l.Quantity, 0) }))";
    public const string ByCompanyMonthReduce = "groupBy(r => ({ Company: r.Company, Month: r.Month })).aggregate(g => ({ Company: g.key.Company, Month: g.key.Month, Count: g.values.reduce((c, r) => c + r.Count, 0), Total: g.values.reduce((t, r) => t + r.Total, 0) }))";

    // One entry per line: a document has several entries of one key, and an update moves some of them.
    public const string LinesByCompanyMap = "map('Orders', o => o.Lines.map(l => ({ Company: o.Company, Count: 1, Total: l.PricePerUnit * l.Quantity })))";

    public sealed record Line(int PricePerUnit, int Quantity);

    public sealed record Order(string Company, string Month, IReadOnlyList<Line> Lines)
    {
        public long Total => Lines.Sum(l => (long)l.PricePerUnit * l.Quantity);

        public string Json() =>
            $"{{\"Company\":\"{Company}\",\"Month\":\"{Month}\",\"Lines\":[{string.Join(',', Lines.Select(l => $"{{\"PricePerUnit\":{l.PricePerUnit},\"Quantity\":{l.Quantity}}}"))}],\"@metadata\":{{\"@collection\":\"Orders\"}}}}";
    }

    /// <summary>An order as the server stored it.</summary>
    public static Order Parse(JsonElement json) => new(
        json.GetProperty("Company").GetString()!,
        json.GetProperty("Month").GetString()!,
        json.GetProperty("Lines").EnumerateArray().Select(l => new Line(l.GetProperty("PricePerUnit").GetInt32(), l.GetProperty("Quantity").GetInt32())).ToList());

    public static Order Random(Random random, string company)
    {
        var lines = random.Next(20) == 0 ? 0 : random.Next(1, 5);
        return new Order(company, $"2024-{random.Next(1, 13):00}", Enumerable.Range(0, lines).Select(_ => new Line(random.Next(1, 100), random.Next(1, 20))).ToList());
    }

    public static string Index(string name, string[] maps, string reduce, object? extra = null)
    {
        var definition = new Dictionary<string, object?> { ["Name"] = name, ["Maps"] = maps, ["Reduce"] = reduce };
        if (extra is not null)
        {
            foreach (var property in JsonSerializer.SerializeToElement(extra).EnumerateObject())
            {
                definition[property.Name] = property.Value;
            }
        }
        return JsonSerializer.Serialize(definition);
    }

    public static string Definitions(params string[] indexes) => "{\"Indexes\":[" + string.Join(',', indexes) + "]}";

    public static async Task PutIndexesAsync(HttpClient client, string db, params string[] indexes)
    {
        using var response = await client.PutAsync($"/databases/{db}/admin/indexes", Api.Json(Definitions(indexes)));
        Assert.True(response.StatusCode == HttpStatusCode.Created, $"{(int)response.StatusCode} {await response.Content.ReadAsStringAsync()}");
    }

    /// <summary>Puts (an order) or deletes (null) each id, in transactions of 1,000 commands.</summary>
    public static async Task WriteAsync(HttpClient client, string db, IEnumerable<(string Id, Order? Order)> changes)
    {
        foreach (var chunk in changes.Chunk(1000))
        {
            var commands = string.Join(',', chunk.Select(c => c.Order is { } order
                ? $"{{\"Type\":\"PUT\",\"Id\":\"{c.Id}\",\"Document\":{order.Json()}}}"
                : $"{{\"Type\":\"DELETE\",\"Id\":\"{c.Id}\"}}"));
            using var response = await client.PostAsync($"/databases/{db}/bulk_docs", Api.Json("{\"Commands\":[" + commands + "]}"));
            Assert.True(response.StatusCode == HttpStatusCode.OK, $"{(int)response.StatusCode} {await response.Content.ReadAsStringAsync()}");
        }
    }

    /// <summary>Puts many orders at once through RavenDB's bulk insert.</summary>
    public static async Task BulkInsertAsync(HttpClient client, string db, IEnumerable<(string Id, Order Order)> orders)
    {
        using var next = await client.GetAsync($"/databases/{db}/operations/next-operation-id");
        var id = (await Api.JsonAsync(next)).GetProperty("Id").GetInt64();
        var body = new StringBuilder("[");
        foreach (var (orderId, order) in orders)
        {
            if (body.Length > 1)
            {
                body.Append(',');
            }
            body.Append("{\"Id\":\"").Append(orderId).Append("\",\"Type\":\"PUT\",\"Document\":").Append(order.Json()).Append('}');
        }
        body.Append(']');
        using var response = await client.PostAsync($"/databases/{db}/bulk_insert?id={id}", Api.Json(body.ToString()));
        Assert.True(response.IsSuccessStatusCode, $"{(int)response.StatusCode} {await response.Content.ReadAsStringAsync()}");
    }

    public static async Task<JsonElement> QueryAsync(HttpClient client, string db, string rql, object? parameters = null, HttpStatusCode status = HttpStatusCode.OK)
    {
        var body = JsonSerializer.Serialize(new { Query = rql, QueryParameters = parameters ?? new { }, WaitForNonStaleResults = true, WaitForNonStaleResultsTimeout = "00:03:00" });
        using var response = await client.PostAsync($"/databases/{db}/queries", Api.Json(body));
        var json = await Api.JsonAsync(response);
        Assert.True(status == response.StatusCode, $"{rql}: {(int)response.StatusCode} {json}");
        if (status == HttpStatusCode.OK)
        {
            Assert.False(json.GetProperty("IsStale").GetBoolean(), $"{rql}: stale after waiting");
        }
        return json;
    }

    public static List<JsonElement> Rows(JsonElement answer) => answer.GetProperty("Results").EnumerateArray().ToList();

    /// <summary>Every result row of a map-reduce index, once it is non-stale, as key → (Count, Total).</summary>
    public static async Task<Dictionary<string, (long Count, long Total)>> ResultsAsync(HttpClient client, string db, string index, Func<JsonElement, string> keyOf)
    {
        var answer = await QueryAsync(client, db, $"from index '{index}' limit 100000");
        var results = new Dictionary<string, (long, long)>(StringComparer.Ordinal);
        foreach (var row in Rows(answer))
        {
            var key = keyOf(row);
            Assert.True(results.TryAdd(key, (row.GetProperty("Count").GetInt64(), (long)row.GetProperty("Total").GetDouble())), $"{index}: two rows for key {key}");
        }
        Assert.Equal(results.Count, answer.GetProperty("TotalResults").GetInt64());
        return results;
    }

    public static string CompanyOf(JsonElement row) => row.GetProperty("Company").GetString()!;

    public static string CompanyMonthOf(JsonElement row) => row.GetProperty("Company").GetString() + "|" + row.GetProperty("Month").GetString();

    // ---- The model ----

    public static Dictionary<string, (long Count, long Total)> ExpectedByCompany(IReadOnlyDictionary<string, Order> model) =>
        model.Values.GroupBy(o => o.Company).ToDictionary(g => g.Key, g => ((long)g.Count(), g.Sum(o => o.Total)), StringComparer.Ordinal);

    public static Dictionary<string, (long Count, long Total)> ExpectedByCompanyMonth(IReadOnlyDictionary<string, Order> model) =>
        model.Values.GroupBy(o => o.Company + "|" + o.Month).ToDictionary(g => g.Key, g => ((long)g.Count(), g.Sum(o => o.Total)), StringComparer.Ordinal);

    public static Dictionary<string, (long Count, long Total)> ExpectedLinesByCompany(IReadOnlyDictionary<string, Order> model) =>
        model.Values.SelectMany(o => o.Lines.Select(l => (o.Company, Value: (long)l.PricePerUnit * l.Quantity))).GroupBy(l => l.Company)
            .ToDictionary(g => g.Key, g => ((long)g.Count(), g.Sum(l => l.Value)), StringComparer.Ordinal);

    /// <summary>Asserts the index's results are the model's, naming the first differences and <paramref name="context"/> (the seed, the step).</summary>
    public static void AssertSame(Dictionary<string, (long Count, long Total)> expected, Dictionary<string, (long Count, long Total)> actual, string context)
    {
        var differences = expected.Keys.Union(actual.Keys)
            .Where(k => !expected.TryGetValue(k, out var e) || !actual.TryGetValue(k, out var a) || e != a)
            .Order(StringComparer.Ordinal)
            .Take(5)
            .Select(k => $"{k}: expected {(expected.TryGetValue(k, out var e) ? e.ToString() : "no row")}, got {(actual.TryGetValue(k, out var a) ? a.ToString() : "no row")}")
            .ToList();
        Assert.True(differences.Count == 0, $"{context}: {expected.Count} keys expected, {actual.Count} found; {string.Join("; ", differences)}");
    }
}
