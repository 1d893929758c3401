using System.Net;
using System.Text.RegularExpressions;
using Jackdaw.Server.Tests.Infrastructure;
using Microsoft.Playwright;
using static Microsoft.Playwright.Assertions;

namespace Jackdaw.Server.Tests.Studio;

/// <summary>The query page (<c>/studio/query</c>) in headless Chromium against the real server and corpus orders.</summary>
public sealed partial class QueryPageTests(ServerFixture server, BrowserFixture browser)
    : IClassFixture<ServerFixture>, IClassFixture<BrowserFixture>
{
    private HttpClient Client => server.Client;

    private string Origin => Client.BaseAddress!.GetLeftPart(UriPartial.Authority);

    [Fact]
    public async Task AQueryMakesAnAutoIndexAndThePageShowsItStaleThenNotStale()
    {
        var db = await server.CreateDatabaseAsync();
        await StudioData.ImportOrdersAsync(Client, db, 2_000);
        var page = await browser.Browser.NewPageAsync(new() { ViewportSize = new() { Width = 1280, Height = 800 } });
        var watch = PageWatch.Attach(page, Origin);
        var queries = 0;
        page.Request += (_, request) =>
        {
            if (request.Url.Contains("/queries", StringComparison.Ordinal))
            {
                Interlocked.Increment(ref queries);
            }
        };
        try
        {
            using var response = await Client.GetAsync($"/studio/query?database={db}");
            Assert.Contains("default-src 'none'", response.Headers.GetValues("Content-Security-Policy").Single(), StringComparison.Ordinal);
            await page.GotoAsync($"{Origin}/studio/query?database={db}");
            await Expect(page.Locator("#editor")).ToBeVisibleAsync();
            await page.WaitForLoadStateAsync(LoadState.NetworkIdle);
            Assert.Equal(0, queries);

            const string rql = "from Orders where Freight > 200";
            await page.Locator("#rql").FillAsync(rql);
            await page.Locator("#rql").PressAsync("Control+Enter");
            await Expect(page.Locator("#index-name")).ToHaveTextAsync("Auto/Orders/ByFreight");
            var expected = await StudioData.QueryAsync(Client, db, rql);
            await Expect(page.Locator("#total")).ToHaveTextAsync(expected.GetProperty("TotalResults").GetInt64().ToString("N0", System.Globalization.CultureInfo.InvariantCulture));
            await Expect(page.Locator("#timings")).ToContainTextAsync("Optimizer");
            var first = expected.GetProperty("Results")[0].GetProperty("@metadata").GetProperty("@id").GetString()!;
            var link = page.Locator("#table tbody tr").First.Locator("a");
            await Expect(link).ToHaveTextAsync(first);
            await Expect(link).ToHaveAttributeAsync("href", $"/studio/document?database={db}&id={Uri.EscapeDataString(first)}");

            // Indexing stopped and new orders written: the same query answers stale.
            using (var stop = await Client.PostAsync($"/databases/{db}/indexes/stop?name=Auto/Orders/ByFreight", null))
            {
                Assert.Equal(HttpStatusCode.NoContent, stop.StatusCode);
            }
            await StudioData.ImportOrdersAsync(Client, db, 500, skip: 2_000);
            await page.Locator("#run").ClickAsync();
            await Expect(page.Locator("#stale")).ToHaveAttributeAsync("data-stale", "true");
            await Expect(page.Locator("#stale")).ToHaveTextAsync("stale");

            // Started again, waiting for non-stale results: the answer has every order.
            using (var start = await Client.PostAsync($"/databases/{db}/indexes/start?name=Auto/Orders/ByFreight", null))
            {
                Assert.Equal(HttpStatusCode.NoContent, start.StatusCode);
            }
            await page.Locator("#wait").CheckAsync();
            await page.Locator("#run").ClickAsync();
            await Expect(page.Locator("#stale")).ToHaveAttributeAsync("data-stale", "false");
            await Expect(page.Locator("#stale")).ToHaveTextAsync("not stale");
            var all = await StudioData.QueryAsync(Client, db, rql);
            Assert.True(all.GetProperty("TotalResults").GetInt64() > expected.GetProperty("TotalResults").GetInt64());
            await Expect(page.Locator("#total")).ToHaveTextAsync(all.GetProperty("TotalResults").GetInt64().ToString("N0", System.Globalization.CultureInfo.InvariantCulture));
            await Expect(page.Locator("#api-bar")).ToContainTextAsync("timings=true");
            await watch.ScreenshotAsync("studio-query.png");
            watch.AssertClean();
        }
        finally
        {
            await page.CloseAsync();
        }
    }

    [Fact]
    public async Task ABadQueryShowsTheServersMessageAndMarksItsPosition()
    {
        var db = await server.CreateDatabaseAsync();
        var page = await browser.Browser.NewPageAsync(new() { ViewportSize = new() { Width = 1280, Height = 800 } });
        var watch = PageWatch.Attach(page, Origin);
        try
        {
            await page.GotoAsync($"{Origin}/studio/query?database={db}");
            const string rql = "from Orders\nwhere Freight > 5 and\n  ShipTo.City = 'Paris' )";
            await page.Locator("#rql").FillAsync(rql);
            await page.Locator("#run").ClickAsync();
            var message = page.Locator("#message");
            await Expect(message).ToContainTextAsync("InvalidQueryException");
            var match = Position().Match(await message.InnerTextAsync());
            Assert.True(match.Success, await message.InnerTextAsync());
            var offset = int.Parse(match.Groups[1].Value, System.Globalization.CultureInfo.InvariantCulture);
            Assert.Equal(rql.IndexOf(')', StringComparison.Ordinal), offset);
            Assert.Equal("3", match.Groups[2].Value);

            // The position is selected in the editor and shown with a caret under its line.
            Assert.Equal(offset, await page.Locator("#rql").EvaluateAsync<int>("t => t.selectionStart"));
            var caret = page.Locator("#caret");
            await Expect(caret).ToBeVisibleAsync();
            var lines = (await caret.InnerTextAsync()).Split('\n');
            Assert.Equal("  ShipTo.City = 'Paris' )", lines[1]);
            Assert.Equal(lines[1].IndexOf(')', StringComparison.Ordinal), lines[2].IndexOf('^', StringComparison.Ordinal));

            // Typing clears the mark.
            await page.Locator("#rql").PressAsync("End");
            await page.Locator("#rql").PressAsync("Backspace");
            await Expect(caret).ToBeHiddenAsync();
            watch.Expect(400);
            watch.AssertClean();
        }
        finally
        {
            await page.CloseAsync();
        }
    }

    [Fact]
    public async Task ResultsShowAsATableOrJsonArePagedOnTheServerAndTheQueriesAreKept()
    {
        var db = await server.CreateDatabaseAsync();
        await StudioData.ImportOrdersAsync(Client, db, 120);
        var page = await browser.Browser.NewPageAsync(new() { ViewportSize = new() { Width = 1280, Height = 800 } });
        var watch = PageWatch.Attach(page, Origin);
        try
        {
            await page.GotoAsync($"{Origin}/studio/query?database={db}");
            await page.Locator("#rql").FillAsync("from Orders");
            await page.Locator("#run").ClickAsync();
            await Expect(page.Locator("#page-info")).ToHaveTextAsync("1–50 of 120");
            await Expect(page.Locator("#table tbody tr")).ToHaveCountAsync(50);
            var headers = await page.Locator("#table thead th").AllInnerTextsAsync();
            Assert.Equal(["Id", "Company", "Employee", "OrderedAt"], headers.Take(4));
            Assert.Contains("ShipTo", headers);

            await page.Locator("#view-json").ClickAsync();
            await Expect(page.Locator("#table")).ToBeHiddenAsync();
            await Expect(page.Locator("#json")).ToBeVisibleAsync();
            await Expect(page.Locator("#json")).ToContainTextAsync("\"@collection\": \"Orders\"");
            await page.Locator("#view-table").ClickAsync();
            await Expect(page.Locator("#table")).ToBeVisibleAsync();

            // Page 2 is the server's page 2.
            using var second = await Client.PostAsync($"/databases/{db}/queries?start=50&pageSize=50", Api.Json("""{"Query":"from Orders"}"""));
            var secondIds = (await Api.JsonAsync(second)).GetProperty("Results").EnumerateArray().Select(r => r.GetProperty("@metadata").GetProperty("@id").GetString()).ToArray();
            await page.Locator("#next").ClickAsync();
            await Expect(page.Locator("#page-info")).ToHaveTextAsync("51–100 of 120");
            await Expect(page.Locator("#table tbody tr td:first-child")).ToHaveTextAsync(secondIds!);
            await page.Locator("#next").ClickAsync();
            await Expect(page.Locator("#page-info")).ToHaveTextAsync("101–120 of 120");
            await Expect(page.Locator("#next")).ToBeDisabledAsync();
            await page.Locator("#prev").ClickAsync();
            await Expect(page.Locator("#page-info")).ToHaveTextAsync("51–100 of 120");
            await page.Locator("#page-size").SelectOptionAsync("25");
            await Expect(page.Locator("#page-info")).ToHaveTextAsync("1–25 of 120");

            // Each query run is kept, newest first, and comes back with the page.
            await page.Locator("#rql").FillAsync("from Orders where Freight > 100");
            await page.Locator("#run").ClickAsync();
            await Expect(page.Locator("#index-name")).ToHaveTextAsync("Auto/Orders/ByFreight");
            await page.ReloadAsync();
            await Expect(page.Locator("#editor")).ToBeVisibleAsync();
            await Expect(page.Locator("#rql")).ToHaveValueAsync("from Orders where Freight > 100");
            await Expect(page.Locator("#history option")).ToHaveTextAsync(["Recent queries (2)…", "from Orders where Freight > 100", "from Orders"]);
            await page.Locator("#history").SelectOptionAsync("1");
            await Expect(page.Locator("#rql")).ToHaveValueAsync("from Orders");

            // Kept per database.
            var other = await server.CreateDatabaseAsync();
            await page.GotoAsync($"{Origin}/studio/query?database={other}");
            await Expect(page.Locator("#editor")).ToBeVisibleAsync();
            await Expect(page.Locator("#history option")).ToHaveTextAsync(["No recent queries"]);
            watch.AssertClean();
        }
        finally
        {
            await page.CloseAsync();
        }
    }

    [GeneratedRegex(@"position (\d+) \(line (\d+), column (\d+)\)")]
    private static partial Regex Position();
}
