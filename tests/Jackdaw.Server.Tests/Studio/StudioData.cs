using System.Net;
using System.Text;
using System.Text.Json;
using Jackdaw.Server.Tests.Infrastructure;

namespace Jackdaw.Server.Tests.Studio;

/// <summary>Data the studio's page tests put in through the HTTP API, and where their screenshots go.</summary>
internal static class StudioData
{
    /// <summary>The first <paramref name="count"/> corpus orders (orders/1 to orders/count, in that order), in one NDJSON bulk insert.</summary>
    public static async Task ImportOrdersAsync(HttpClient client, string db, int count)
    {
        var body = new StringBuilder();
        foreach (var line in Corpus.Lines("orders", count))
        {
            using var document = JsonDocument.Parse(line);
            var id = document.RootElement.GetProperty("@metadata").GetProperty("@id").GetString();
            body.Append("{\"Id\":").Append(JsonSerializer.Serialize(id)).Append(",\"Document\":").Append(line).Append("}\n");
        }
        using var content = new StringContent(body.ToString(), Encoding.UTF8, "application/x-ndjson");
        using var response = await client.PostAsync($"/databases/{db}/bulk_insert", content);
        Assert.True(response.StatusCode == HttpStatusCode.OK, $"bulk_insert: {(int)response.StatusCode} {await response.Content.ReadAsStringAsync()}");
        Assert.Equal(count, (await Api.JsonAsync(response)).GetProperty("Count").GetInt32());
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

    /// <summary>docs/images/{name} when JACKDAW_SCREENSHOTS=1, else a file in <paramref name="folder"/>: tests write into the repository only when asked.</summary>
    public static string ScreenshotPath(string name, TempFolder folder)
    {
        if (Environment.GetEnvironmentVariable("JACKDAW_SCREENSHOTS") != "1")
        {
            return Path.Combine(folder.Path, name);
        }
        for (var dir = new DirectoryInfo(AppContext.BaseDirectory); dir is not null; dir = dir.Parent)
        {
            if (File.Exists(Path.Combine(dir.FullName, "Server.sln")))
            {
                var path = Path.Combine(dir.FullName, "docs", "images", name);
                Directory.CreateDirectory(Path.GetDirectoryName(path)!);
                return path;
            }
        }
        throw new InvalidOperationException($"No Server.sln above {AppContext.BaseDirectory}.");
    }
}
