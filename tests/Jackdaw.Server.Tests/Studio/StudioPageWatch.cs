using System.Net;
using System.Text;
using System.Text.Json;
using System.Text.RegularExpressions;
using Jackdaw.Server.Tests.Infrastructure;
using Microsoft.Playwright;

namespace Jackdaw.Server.Tests.Studio;

/// <summary>
/// A studio page in the browser with what every page test asserts at the end: no console error,
/// no uncaught exception, and no request (or WebSocket) to any origin but the server's.
/// </summary>
internal sealed class StudioPageWatch
{
    private readonly List<string> _requests = [];
    private readonly List<string> _errors = [];
    private readonly string _authority;

    private StudioPageWatch(IPage page, string authority)
    {
        Page = page;
        _authority = authority;
        page.Request += (_, request) => { lock (_requests) { _requests.Add(request.Url); } };
        page.WebSocket += (_, socket) => { lock (_requests) { _requests.Add(socket.Url); } };
        page.Console += (_, message) =>
        {
            // The browser asks for /favicon.ico on its own; the studio has none (a 404, not the page's doing).
            if (message.Type == "error" && !message.Location.Contains("/favicon.ico", StringComparison.Ordinal))
            {
                lock (_errors) { _errors.Add(message.Text + " (" + message.Location + ")"); }
            }
        };
        page.PageError += (_, error) => { lock (_errors) { _errors.Add(error); } };
    }

    public IPage Page { get; }

    /// <summary>A page of 1280×800, the size of the screenshots.</summary>
    public static async Task<StudioPageWatch> OpenAsync(IBrowser browser, HttpClient client)
    {
        var page = await browser.NewPageAsync(new() { ViewportSize = new() { Width = 1280, Height = 800 } });
        return new StudioPageWatch(page, client.BaseAddress!.Authority);
    }

    /// <summary>
    /// Asserts the page logged no error and reached nothing off its origin. A page that shows a
    /// server's 4xx on purpose makes the browser log "Failed to load resource" for that response:
    /// <paramref name="expectedStatuses"/> names the statuses such a test provoked.
    /// </summary>
    public void AssertClean(params int[] expectedStatuses)
    {
        lock (_errors)
        {
            var unexpected = _errors.Where(e => !expectedStatuses.Any(s => e.Contains($"status of {s}", StringComparison.Ordinal))).ToList();
            Assert.True(unexpected.Count == 0, "Console errors: " + string.Join(" | ", unexpected));
        }
        lock (_requests)
        {
            Assert.NotEmpty(_requests);
            Assert.All(_requests, url => Assert.Matches($"^(http|ws)://{Regex.Escape(_authority)}/", url));
        }
    }

    /// <summary>With JACKDAW_SCREENSHOTS=1, the page as docs/images/{name}.png (1280×800); otherwise nothing is written.</summary>
    public async Task ScreenshotAsync(string name)
    {
        if (Environment.GetEnvironmentVariable("JACKDAW_SCREENSHOTS") != "1")
        {
            return;
        }
        var path = Path.Combine(RepositoryRoot(), "docs", "images", name + ".png");
        await Page.ScreenshotAsync(new() { Path = path });
        Assert.True(new FileInfo(path).Length > 10_000, "The screenshot is almost empty.");
    }

    public Task CloseAsync() => Page.CloseAsync();

    /// <summary>The first <paramref name="count"/> corpus orders, through <c>POST /bulk_insert</c> (NDJSON).</summary>
    public static async Task ImportOrdersAsync(HttpClient client, string db, int count, int skip = 0)
    {
        var body = new StringBuilder();
        foreach (var line in Corpus.Lines("orders", skip + count).Skip(skip))
        {
            using var document = JsonDocument.Parse(line);
            var id = document.RootElement.GetProperty("@metadata").GetProperty("@id").GetString();
            body.Append("{\"Id\":").Append(JsonSerializer.Serialize(id)).Append(",\"Document\":").Append(line).Append("}\n");
        }
        using var response = await client.PostAsync($"/databases/{db}/bulk_insert", new StringContent(body.ToString(), Encoding.UTF8, "application/x-ndjson"));
        var json = await Api.JsonAsync(response);
        Assert.True(response.StatusCode == HttpStatusCode.OK, $"bulk_insert: {json}");
        Assert.Equal(count, json.GetProperty("Count").GetInt64());
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

    private static string RepositoryRoot()
    {
        for (var dir = new DirectoryInfo(AppContext.BaseDirectory); dir is not null; dir = dir.Parent)
        {
            if (File.Exists(Path.Combine(dir.FullName, "Server.sln")))
            {
                return dir.FullName;
            }
        }
        throw new InvalidOperationException($"No Server.sln above {AppContext.BaseDirectory}.");
    }
}
