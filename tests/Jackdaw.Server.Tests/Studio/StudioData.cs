using System.Net;
using System.Text;
using System.Text.Json;
using Jackdaw.Server.Tests.Infrastructure;

namespace Jackdaw.Server.Tests.Studio;

/// <summary>Data the studio's page tests put in and read back through the HTTP API.</summary>
internal static class StudioData
{
    /// <summary>
    /// The corpus orders from number <paramref name="skip"/> + 1 on, <paramref name="count"/> of them,
    /// in one NDJSON <c>POST /bulk_insert</c>; returns them as parsed.
    /// </summary>
    public static async Task<IReadOnlyList<JsonElement>> ImportOrdersAsync(HttpClient client, string db, int count, int skip = 0)
    {
        var orders = new List<JsonElement>(count);
        var body = new StringBuilder();
        foreach (var line in Corpus.Lines("orders", skip + count).Skip(skip))
        {
            var document = JsonDocument.Parse(line).RootElement.Clone();
            orders.Add(document);
            var id = document.GetProperty("@metadata").GetProperty("@id").GetString();
            body.Append("{\"Id\":").Append(JsonSerializer.Serialize(id)).Append(",\"Document\":").Append(line).Append("}\n");
        }
        using var content = new StringContent(body.ToString(), Encoding.UTF8, "application/x-ndjson");
        using var response = await client.PostAsync($"/databases/{db}/bulk_insert", content);
        Assert.True(response.StatusCode == HttpStatusCode.OK, $"bulk_insert: {(int)response.StatusCode} {await response.Content.ReadAsStringAsync()}");
        Assert.Equal(count, (await Api.JsonAsync(response)).GetProperty("Count").GetInt64());
        return orders;
    }

    public static async Task<string> PutAsync(HttpClient client, string db, string id, string json)
    {
        using var response = await client.PutAsync($"/databases/{db}/docs?id={Uri.EscapeDataString(id)}", Api.Json(json));
        Assert.True(response.StatusCode == HttpStatusCode.Created, $"PUT {id}: {(int)response.StatusCode} {await response.Content.ReadAsStringAsync()}");
        return (await Api.JsonAsync(response)).GetProperty("ChangeVector").GetString()!;
    }

    public static async Task<JsonElement> GetAsync(HttpClient client, string db, string id)
    {
        using var response = await client.GetAsync($"/databases/{db}/docs?id={Uri.EscapeDataString(id)}");
        Assert.True(response.StatusCode == HttpStatusCode.OK, $"GET {id}: {(int)response.StatusCode}");
        return (await Api.JsonAsync(response)).GetProperty("Results")[0];
    }

    /// <summary>Runs a query through the API (waiting for non-stale results) and returns its answer.</summary>
    public static async Task<JsonElement> QueryAsync(HttpClient client, string db, string rql)
    {
        var body = JsonSerializer.Serialize(new { Query = rql, WaitForNonStaleResults = true, WaitForNonStaleResultsTimeout = "00:01:00" });
        using var response = await client.PostAsync($"/databases/{db}/queries", Api.Json(body));
        var json = await Api.JsonAsync(response);
        Assert.True(response.StatusCode == HttpStatusCode.OK, $"{rql}: {(int)response.StatusCode} {json}");
        return json;
    }
}
