using System.Globalization;
using System.Net;
using System.Text;
using System.Text.Json;
using System.Text.RegularExpressions;
using Jackdaw.Server.Tests.Infrastructure;
using Microsoft.Playwright;
using static Microsoft.Playwright.Assertions;

namespace Jackdaw.Server.Tests.Studio;

/// <summary>
/// The indexing performance page (<c>/studio/indexing-performance</c>) in headless Chromium, against
/// the real server indexing corpus orders with two static indexes and an auto-index.
/// </summary>
public sealed partial class IndexingPerformancePageTests(ServerFixture server, BrowserFixture browser)
    : IClassFixture<ServerFixture>, IClassFixture<BrowserFixture>
{
    private const string Totals = "Orders/Totals";
    private const string ByShipCountry = "Orders/ByShipCountry";
    // Auto-indexes of one collection are widened into one, so the third index is over Orders
    // through a query and the others are static.
    private const string ByFreight = "Auto/Orders/ByFreight";
    private static readonly string[] IndexNames = [ByFreight, ByShipCountry, Totals];

    private HttpClient Client => server.Client;

    private string Origin => Client.BaseAddress!.GetLeftPart(UriPartial.Authority);

    [Fact]
    public async Task TheRouteAnswersHtmlThatLoadsNothingFromOutside()
    {
        using var response = await Client.GetAsync("/studio/indexing-performance?database=anything");
        Assert.Equal(HttpStatusCode.OK, response.StatusCode);
        Assert.Equal("text/html", response.Content.Headers.ContentType?.MediaType);
        Assert.Equal("utf-8", response.Content.Headers.ContentType?.CharSet);
        Assert.Contains("default-src 'none'", response.Headers.GetValues("Content-Security-Policy").Single(), StringComparison.Ordinal);
        var html = await response.Content.ReadAsStringAsync();

        Assert.StartsWith("<!doctype html>", html, StringComparison.OrdinalIgnoreCase);
        Assert.Empty(OutsideReference().Matches(html).Select(m => m.Value));
        Assert.DoesNotMatch(@"<(iframe|object|embed|img)\b", html);
        // Its script and style are the studio's own files (StudioFilesTests checks every one).
        Assert.Contains(@"<script src=""/studio/indexing-performance.js"" defer></script>", html, StringComparison.Ordinal);
        Assert.Empty(AbsoluteUrl().Matches(html).Select(m => m.Value));
    }

    [Fact]
    public async Task WithoutADatabaseOrWithAnUnknownOneThePageSaysWhat()
    {
        var page = await browser.Browser.NewPageAsync();
        try
        {
            await page.GotoAsync(Origin + "/studio/indexing-performance");
            await Expect(page.Locator("#message")).ToBeVisibleAsync();
            await Expect(page.Locator("#message")).ToContainTextAsync("?database=");

            await page.GotoAsync(Origin + "/studio/indexing-performance?database=no-such-database");
            await Expect(page.Locator("#message")).ToBeVisibleAsync();
            await Expect(page.Locator("#message")).ToContainTextAsync("no-such-database");
            await Expect(page.Locator("#timeline")).ToBeHiddenAsync();
        }
        finally
        {
            await page.CloseAsync();
        }
    }

    [Fact]
    public async Task TheTimelineDrawsALanePerIndexWithBarsAndTooltipsAndAddsBatchesLive()
    {
        var db = await server.CreateDatabaseAsync();
        await PutOrdersAsync(db, Corpus.Lines("orders", 2_000));
        await DefineIndexesAsync(db);
        await WaitForNonStaleAsync(db);
        var history = await HistoryAsync(db, 2_000);

        var page = await browser.Browser.NewPageAsync(new() { ViewportSize = new() { Width = 1280, Height = 600 } });
        var requested = new List<string>();
        page.Request += (_, request) => requested.Add(request.Url);
        page.WebSocket += (_, socket) => requested.Add(socket.Url);
        try
        {
            await page.GotoAsync($"{Origin}/studio/indexing-performance?database={db}");
            await Expect(page.Locator("#status")).ToHaveAttributeAsync("data-state", "live");

            // A lane per index, labelled with its name, each with bars.
            await Expect(page.Locator(".lane-label")).ToHaveTextAsync(IndexNames);
            await page.SelectOptionAsync("#window", "all");
            foreach (var name in IndexNames)
            {
                Assert.True(await page.Locator($".batch[data-index='{name}']").CountAsync() > 0, $"No bar in the lane of {name}.");
            }
            Assert.Equal(7, await page.Locator("#legend li").CountAsync());

            // Hovering the longest batch of Orders/Totals shows its counts and operations.
            var longest = history[Totals].MaxBy(b => b.GetProperty("DurationInMs").GetDouble());
            var id = longest.GetProperty("Id").GetInt64();
            await page.Locator($".batch[data-index='{Totals}'][data-id='{id}']").HoverAsync();
            var tooltip = page.Locator("#tooltip");
            await Expect(tooltip).ToBeVisibleAsync();
            await Expect(tooltip.Locator("h2")).ToHaveTextAsync($"{Totals} · batch {id}");
            var rows = (await tooltip.Locator("dt").AllInnerTextsAsync()).Zip(await tooltip.Locator("dd").AllInnerTextsAsync()).ToDictionary(r => r.First, r => r.Second);
            Assert.Equal(Count(longest, "InputCount"), rows["Input"]);
            Assert.Equal(Count(longest, "OutputCount"), rows["Output"]);
            Assert.Equal(Count(longest, "FailedCount"), rows["Failed"]);
            Assert.Equal(longest.GetProperty("Started").GetString(), rows["Started"]);
            Assert.EndsWith(" ms", rows["Duration"], StringComparison.Ordinal);
            Assert.Matches(@"^\d+(\.\d+)? (B|KiB|MiB|GiB)$", rows["Allocated"]);
            await Expect(tooltip).ToContainTextAsync("Map/Orders");
            await Expect(tooltip).ToContainTextAsync("Storage/Read");

            // Orders written after the page loaded: each index's batch that maps them comes over the WebSocket.
            var before = history.ToDictionary(h => h.Key, h => h.Value.Max(b => b.GetProperty("Id").GetInt64()));
            await PutOrdersAsync(db, Corpus.Lines("orders", 2_100).Skip(2_000));
            foreach (var name in IndexNames)
            {
                var batch = await WaitForBatchAsync(db, name, b => b.GetProperty("Id").GetInt64() > before[name] && b.GetProperty("InputCount").GetInt32() > 0);
                await Expect(page.Locator($".batch[data-index='{name}'][data-id='{batch.GetProperty("Id").GetInt64()}'][data-live]")).ToHaveCountAsync(1);
            }

            Assert.All(requested, url => Assert.Matches($"^(http|ws)://{Regex.Escape(Client.BaseAddress!.Authority)}/", url));
            Assert.Contains(requested, url => url.StartsWith("ws://", StringComparison.Ordinal));
        }
        finally
        {
            await page.CloseAsync();
        }
    }

    /// <summary>
    /// Orders written while the page watches three indexes map them, every batch arriving live. With
    /// JACKDAW_UPDATE_SCREENSHOTS=1 it writes 20,000 (about 20 s here) and saves the screenshot as
    /// docs/images/indexing-performance.png; otherwise 4,000, the screenshot in the test's folder.
    /// </summary>
    [Fact]
    public async Task OrdersWrittenWhileThePageIsOpenArriveLiveInEveryLane()
    {
        var updateScreenshot = Environment.GetEnvironmentVariable("JACKDAW_UPDATE_SCREENSHOTS") == "1";
        var orders = updateScreenshot ? 20_000 : 4_000;
        var db = await server.CreateDatabaseAsync();
        await DefineIndexesAsync(db);
        var page = await browser.Browser.NewPageAsync(new() { ViewportSize = new() { Width = 1280, Height = 600 } });
        using var folder = new TempFolder("jackdaw-studio");
        try
        {
            await page.GotoAsync($"{Origin}/studio/indexing-performance?database={db}");
            await Expect(page.Locator("#status")).ToHaveAttributeAsync("data-state", "live");
            await page.SelectOptionAsync("#window", "all");

            await PutOrdersAsync(db, Corpus.Lines("orders", orders));
            await WaitForNonStaleAsync(db);
            var history = await HistoryAsync(db, orders);

            await Expect(page.Locator(".lane-label")).ToHaveTextAsync(IndexNames);
            foreach (var name in IndexNames)
            {
                // Every batch that mapped orders came live (the history was empty when the page loaded).
                foreach (var batch in history[name].Where(b => b.GetProperty("InputCount").GetInt32() > 0))
                {
                    await Expect(page.Locator($".batch[data-index='{name}'][data-id='{batch.GetProperty("Id").GetInt64()}'][data-live]")).ToHaveCountAsync(1);
                }
                Assert.Equal(orders, history[name].Sum(b => b.GetProperty("InputCount").GetInt32()));
            }

            var longest = history[Totals].MaxBy(b => b.GetProperty("DurationInMs").GetDouble());
            await page.Locator($".batch[data-index='{Totals}'][data-id='{longest.GetProperty("Id").GetInt64()}']").HoverAsync();
            await Expect(page.Locator("#tooltip")).ToBeVisibleAsync();
            var path = updateScreenshot
                ? Path.Combine(RepositoryRoot(), "docs", "images", "indexing-performance.png")
                : Path.Combine(folder.Path, "indexing-performance.png");
            Directory.CreateDirectory(Path.GetDirectoryName(path)!);
            await page.ScreenshotAsync(new() { Path = path });
            Assert.True(new FileInfo(path).Length > 10_000, "The screenshot is almost empty.");
        }
        finally
        {
            await page.CloseAsync();
        }
    }

    private async Task PutOrdersAsync(string db, IEnumerable<string> lines)
    {
        foreach (var chunk in lines.Chunk(1_000))
        {
            var body = new StringBuilder("{\"Commands\":[");
            for (var i = 0; i < chunk.Length; i++)
            {
                using var document = JsonDocument.Parse(chunk[i]);
                var id = document.RootElement.GetProperty("@metadata").GetProperty("@id").GetString();
                body.Append(i == 0 ? "" : ",").Append("{\"Type\":\"PUT\",\"Id\":").Append(JsonSerializer.Serialize(id)).Append(",\"Document\":").Append(chunk[i]).Append('}');
            }
            body.Append("]}");
            using var response = await Client.PostAsync($"/databases/{db}/bulk_docs", Api.Json(body.ToString()));
            Assert.True(response.IsSuccessStatusCode, $"bulk_docs: {(int)response.StatusCode} {await response.Content.ReadAsStringAsync()}");
        }
    }

    private async Task DefineIndexesAsync(string db)
    {
        var definitions = JsonSerializer.Serialize(new
        {
            Indexes = new object[]
            {
                new { Name = Totals, Maps = new[] { "map('Orders', o => ({ Company: o.Company, Total: o.Lines.reduce((s, l) => s + l.Quantity * l.PricePerUnit, 0) }))" } },
                new { Name = ByShipCountry, Maps = new[] { "map('Orders', o => ({ Country: o.ShipTo.Country, City: o.ShipTo.City, Freight: o.Freight }))" } },
            },
        });
        using (var put = await Client.PutAsync($"/databases/{db}/admin/indexes", Api.Json(definitions)))
        {
            Assert.Equal(HttpStatusCode.Created, put.StatusCode);
        }
        await QueryAsync(db, "from Orders where Freight > 10", wait: false);
    }

    private async Task WaitForNonStaleAsync(string db)
    {
        await QueryAsync(db, $"from index '{Totals}' where Total > 0", wait: true);
        await QueryAsync(db, $"from index '{ByShipCountry}' where Freight > 0", wait: true);
        await QueryAsync(db, "from Orders where Freight > 10", wait: true);
    }

    private async Task<JsonElement> QueryAsync(string db, string rql, bool wait)
    {
        var body = JsonSerializer.Serialize(new { Query = rql + " limit 1", WaitForNonStaleResults = wait, WaitForNonStaleResultsTimeout = "00:01:00" });
        using var response = await Client.PostAsync($"/databases/{db}/queries", Api.Json(body));
        var json = await Api.JsonAsync(response);
        Assert.True(response.StatusCode == HttpStatusCode.OK, $"{rql}: {(int)response.StatusCode} {json}");
        if (wait)
        {
            Assert.False(json.GetProperty("IsStale").GetBoolean(), $"{rql} is still stale.");
        }
        return json;
    }

    private async Task<Dictionary<string, JsonElement[]>> PerformanceAsync(string db)
    {
        using var response = await Client.GetAsync($"/databases/{db}/indexes/performance");
        var json = await Api.JsonAsync(response);
        return json.GetProperty("Results").EnumerateArray().ToDictionary(
            r => r.GetProperty("Name").GetString()!,
            r => r.GetProperty("Performance").EnumerateArray().ToArray());
    }

    /// <summary>
    /// The performance history once every index's batches account for <paramref name="orders"/>
    /// documents: a query that waits for non-stale results returns when the last batch is
    /// searchable, and the index records that batch in its history just after.
    /// </summary>
    private async Task<Dictionary<string, JsonElement[]>> HistoryAsync(string db, int orders)
    {
        using var timeout = new CancellationTokenSource(TimeSpan.FromSeconds(30));
        while (true)
        {
            var history = await PerformanceAsync(db);
            if (IndexNames.All(name => history.TryGetValue(name, out var batches) && batches.Sum(b => b.GetProperty("InputCount").GetInt32()) >= orders) || timeout.IsCancellationRequested)
            {
                return history;
            }
            await Task.Delay(50, CancellationToken.None);
        }
    }

    private async Task<JsonElement> WaitForBatchAsync(string db, string index, Func<JsonElement, bool> match)
    {
        using var timeout = new CancellationTokenSource(TimeSpan.FromSeconds(30));
        while (true)
        {
            var found = (await PerformanceAsync(db))[index].FirstOrDefault(match);
            if (found.ValueKind != JsonValueKind.Undefined)
            {
                return found;
            }
            if (timeout.IsCancellationRequested)
            {
                throw new TimeoutException($"No new batch of {index} mapped the new orders within 30 s.");
            }
            await Task.Delay(50, CancellationToken.None);
        }
    }

    private static string Count(JsonElement batch, string property) =>
        batch.GetProperty(property).GetInt64().ToString("N0", CultureInfo.InvariantCulture);

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

    // src=, href=, action=, @import or url( naming a scheme (http:, https:, data: is allowed) or a
    // protocol-relative //host.
    [GeneratedRegex(@"(?:\b(?:src|href|action)\s*=\s*[""']?|@import\s+(?:url\()?[""']?|url\(\s*[""']?)\s*(?!data:)(?:[a-z][a-z0-9+.-]*:|//)", RegexOptions.IgnoreCase)]
    private static partial Regex OutsideReference();

    [GeneratedRegex(@"\b(?:https?|wss?):(?://)?[^\s""'`<>)]+", RegexOptions.IgnoreCase)]
    private static partial Regex AbsoluteUrl();
}
