using System.Net;
using System.Text;
using System.Text.Json;
using Jackdaw.Server.Tests.Infrastructure;

namespace Jackdaw.Server.Tests.Studio;

/// <summary>The first orders of the corpus, written through <c>bulk_docs</c> in chunks of 1,000.</summary>
internal static class OrdersImport
{
    /// <summary>Writes the first <paramref name="count"/> orders; returns them as parsed.</summary>
    public static async Task<List<JsonElement>> ImportAsync(HttpClient client, string db, int count)
    {
        var orders = new List<JsonElement>(count);
        foreach (var chunk in Corpus.Lines("orders", count).Chunk(1_000))
        {
            var body = new StringBuilder("{\"Commands\":[");
            for (var i = 0; i < chunk.Length; i++)
            {
                var document = JsonDocument.Parse(chunk[i]).RootElement.Clone();
                orders.Add(document);
                var id = document.GetProperty("@metadata").GetProperty("@id").GetString();
                body.Append(i == 0 ? "" : ",").Append("{\"Type\":\"PUT\",\"Id\":").Append(JsonSerializer.Serialize(id)).Append(",\"Document\":").Append(chunk[i]).Append('}');
            }
            body.Append("]}");
            using var response = await client.PostAsync($"/databases/{db}/bulk_docs", Api.Json(body.ToString()));
            Assert.True(response.StatusCode == HttpStatusCode.OK, $"bulk_docs: {(int)response.StatusCode} {await response.Content.ReadAsStringAsync()}");
        }
        return orders;
    }
}
