using System.Net;
using System.Text.Json;
using System.Text.RegularExpressions;
using Jackdaw.Server.Tests.Infrastructure;
using Jackdaw.Server.Tests.Readme;
using Microsoft.Playwright;
using static Microsoft.Playwright.Assertions;

namespace Jackdaw.Server.Tests.Studio;

/// <summary>A server whose slow-query log keeps every query.</summary>
public sealed class SlowQueryServerFixture : ServerFixture
{
    protected override string[] Args => [.. base.Args, "--Queries:SlowQueryThresholdMs=0"];
}

/// <summary>
/// The traffic page (<c>/studio/traffic</c>) in headless Chromium: requests made through the API
/// appear live over the traffic-watch WebSocket, filtered, paused and bounded in the page; the
/// slow-query section reads and clears a database's log.
/// </summary>
public sealed class TrafficPageTests(SlowQueryServerFixture server, BrowserFixture browser)
    : IClassFixture<SlowQueryServerFixture>, IClassFixture<BrowserFixture>
{
    private static readonly TimeSpan Wait = TimeSpan.FromSeconds(30);

    private HttpClient Client => server.Client;

    private string Origin => Client.BaseAddress!.GetLeftPart(UriPartial.Authority);

    private static string Row(string method, string uri) => $"#requests tbody tr[data-method='{method}'][data-uri='{uri}']";

    /// <summary>Opens the page and waits until its WebSocket is registered (a request made then is seen).</summary>
    private async Task<(IPage Page, List<string> Requested, List<string> Errors)> OpenAsync(string query = "")
    {
        var page = await browser.Browser.NewPageAsync(new() { ViewportSize = new() { Width = 1280, Height = 800 } });
        var requested = new List<string>();
        var errors = new List<string>();
        page.Request += (_, request) => requested.Add(request.Url);
        page.WebSocket += (_, socket) => requested.Add(socket.Url);
        page.Console += (_, message) =>
        {
            // Chromium asks for /favicon.ico once per browser, whatever the page; the studio has none.
            if (message.Type == "error" && !message.Location.Contains("/favicon.ico", StringComparison.Ordinal))
            {
                errors.Add(message.Text + " (" + message.Location + ")");
            }
        };
        page.PageError += (_, error) => errors.Add(error);
        var response = await page.GotoAsync(Origin + "/studio/traffic" + query);
        Assert.NotNull(response);
        Assert.Equal(200, response.Status);
        var policy = await response.HeaderValueAsync("content-security-policy");
        Assert.Contains("default-src 'none'", policy, StringComparison.Ordinal);
        Assert.Contains("script-src 'self';", policy, StringComparison.Ordinal);
        await Expect(page.Locator("#status")).ToHaveAttributeAsync("data-state", "live");
        // The upgrade is answered before the server registers the watcher: ask until a marker shows.
        var marker = 0;
        await Poll.UntilAsync(async () =>
        {
            var uri = $"/build/version?marker={++marker}";
            using (await Client.GetAsync(uri))
            {
            }
            return await page.Locator(Row("GET", uri)).CountAsync() > 0;
        }, Wait, "the page's traffic watch to show a request");
        return (page, requested, errors);
    }

    private void AssertSameOriginAndNoErrors(List<string> requested, List<string> errors)
    {
        Assert.All(requested, url => Assert.Matches($"^(http|ws)://{Regex.Escape(Client.BaseAddress!.Authority)}/", url));
        Assert.True(errors.Count == 0, string.Join("\n", errors));
    }

    [Fact]
    public async Task RequestsMadeThroughTheApiAppearAndTheFiltersPauseAndClearWork()
    {
        var db = await server.CreateDatabaseAsync();
        var other = await server.CreateDatabaseAsync();
        var (page, requested, errors) = await OpenAsync($"?database={db}");
        try
        {
            await Expect(page.Locator("#watch-url")).ToHaveTextAsync($"ws://{Client.BaseAddress!.Authority}/admin/traffic-watch");
            await Expect(page.Locator("#api-bar")).ToContainTextAsync("no curl equivalent");
            await Expect(page.Locator("#reconnect")).ToBeHiddenAsync();
            await Expect(page.Locator("#dropped")).ToBeHiddenAsync();

            using (var put = await Client.PutAsync($"/databases/{db}/docs?id=orders/1", Api.Json("{\"Freight\":3,\"@metadata\":{\"@collection\":\"Orders\"}}")))
            {
                Assert.Equal(HttpStatusCode.Created, put.StatusCode);
            }
            using (var missing = await Client.GetAsync($"/databases/{other}/docs?id=orders/404"))
            {
                Assert.Equal(HttpStatusCode.NotFound, missing.StatusCode);
            }
            using (var delete = await Client.DeleteAsync($"/databases/{db}/docs?id=orders/1"))
            {
                Assert.Equal(HttpStatusCode.NoContent, delete.StatusCode);
            }

            var putRow = page.Locator(Row("PUT", $"/databases/{db}/docs?id=orders/1"));
            var missingRow = page.Locator(Row("GET", $"/databases/{other}/docs?id=orders/404"));
            var deleteRow = page.Locator(Row("DELETE", $"/databases/{db}/docs?id=orders/1"));
            await Expect(putRow).ToBeVisibleAsync();
            await Expect(missingRow).ToBeVisibleAsync();
            await Expect(deleteRow).ToBeVisibleAsync();
            var cells = await putRow.Locator("td").AllInnerTextsAsync();
            Assert.Equal("PUT", cells[1]);
            Assert.Equal($"/databases/{db}/docs?id=orders/1", cells[2]);
            Assert.Equal("201", cells[3]);
            Assert.EndsWith(" ms", cells[4], StringComparison.Ordinal);
            Assert.Equal(db, cells[5]);
            Assert.Equal("Documents", cells[6]);
            // Newest first.
            Assert.True(await page.Locator("#requests tbody tr").First.GetAttributeAsync("data-method") is "DELETE");

            await page.SelectOptionAsync("#filter-database", other);
            await Expect(missingRow).ToBeVisibleAsync();
            await Expect(putRow).ToBeHiddenAsync();
            await Expect(page.Locator("#requests tbody tr:not([hidden])")).ToHaveCountAsync(1);

            await page.SelectOptionAsync("#filter-database", "");
            await page.SelectOptionAsync("#filter-method", "DELETE");
            await Expect(deleteRow).ToBeVisibleAsync();
            await Expect(putRow).ToBeHiddenAsync();
            await Expect(page.Locator("#requests tbody tr:not([hidden])")).ToHaveCountAsync(1);

            await page.SelectOptionAsync("#filter-method", "");
            await page.SelectOptionAsync("#filter-status", "4");
            await Expect(missingRow).ToBeVisibleAsync();
            await Expect(putRow).ToBeHiddenAsync();
            await Expect(deleteRow).ToBeHiddenAsync();

            await page.SelectOptionAsync("#filter-status", "");
            await page.FillAsync("#filter-path", "ORDERS/1");
            await Expect(putRow).ToBeVisibleAsync();
            await Expect(deleteRow).ToBeVisibleAsync();
            await Expect(missingRow).ToBeHiddenAsync();
            await Expect(page.Locator("#counts")).ToContainTextAsync("2 shown of");
            await page.FillAsync("#filter-path", "");

            // Paused, the list stands still and says what arrived meanwhile; resumed, it shows it.
            await page.ClickAsync("#pause");
            await Expect(page.Locator("#status")).ToHaveAttributeAsync("data-state", "paused");
            using (await Client.GetAsync($"/databases/{db}/docs?id=while-paused"))
            {
            }
            await Expect(page.Locator("#counts")).ToContainTextAsync("1 arrived while paused");
            var pausedRow = page.Locator(Row("GET", $"/databases/{db}/docs?id=while-paused"));
            await Expect(pausedRow).ToHaveCountAsync(0);
            await page.ClickAsync("#pause");
            await Expect(pausedRow).ToBeVisibleAsync();

            if (Environment.GetEnvironmentVariable("JACKDAW_SCREENSHOTS") == "1")
            {
                await page.ScreenshotAsync(new() { Path = Path.Combine(ReadmeDocument.RepositoryRoot, "docs", "images", "studio-traffic.png") });
            }

            await page.ClickAsync("#clear");
            await Expect(page.Locator("#requests tbody tr")).ToHaveCountAsync(0);
            AssertSameOriginAndNoErrors(requested, errors);
        }
        finally
        {
            await page.CloseAsync();
        }
    }

    [Fact]
    public async Task TheListKeepsTheLastThousandRequests()
    {
        var db = await server.CreateDatabaseAsync();
        var (page, requested, errors) = await OpenAsync();
        try
        {
            await page.ClickAsync("#clear");
            for (var i = 0; i < 1_050; i++)
            {
                using var response = await Client.GetAsync($"/databases/{db}/docs?id=n/{i}");
                Assert.Equal(HttpStatusCode.NotFound, response.StatusCode);
            }
            await Expect(page.Locator(Row("GET", $"/databases/{db}/docs?id=n/1049"))).ToBeVisibleAsync();
            await Expect(page.Locator("#requests tbody tr")).ToHaveCountAsync(1_000);
            await Expect(page.Locator(Row("GET", $"/databases/{db}/docs?id=n/50"))).ToHaveCountAsync(1);
            await Expect(page.Locator(Row("GET", $"/databases/{db}/docs?id=n/49"))).ToHaveCountAsync(0);
            await Expect(page.Locator("#counts")).ToContainTextAsync("1,000 shown of 1,000 kept");
            AssertSameOriginAndNoErrors(requested, errors);
        }
        finally
        {
            await page.CloseAsync();
        }
    }

    [Fact]
    public async Task TheSlowQueriesSectionShowsTheLogWithoutParameterValuesAndClearsIt()
    {
        const string secret = "hush-4c1d";
        var db = await server.CreateDatabaseAsync();
        using (var put = await Client.PutAsync($"/databases/{db}/docs?id=orders/1", Api.Json("{\"Freight\":3,\"@metadata\":{\"@collection\":\"Orders\"}}")))
        {
            Assert.Equal(HttpStatusCode.Created, put.StatusCode);
        }
        using (var query = await Client.PostAsync($"/databases/{db}/queries", Api.Json(JsonSerializer.Serialize(new { Query = "from Orders where Freight = $freight", QueryParameters = new { freight = secret }, WaitForNonStaleResults = true }))))
        {
            Assert.Equal(HttpStatusCode.OK, query.StatusCode);
        }

        var (page, requested, errors) = await OpenAsync($"?database={db}");
        try
        {
            var entry = page.Locator("table.slow-queries tbody tr");
            await Expect(entry).ToHaveCountAsync(1);
            await Expect(entry.Locator("td").Nth(2)).ToHaveTextAsync("from Orders where Freight = $freight");
            await Expect(entry.Locator("td").Nth(3)).ToHaveTextAsync("$freight = <redacted>");
            await Expect(entry.Locator("td").Nth(4)).ToContainTextAsync("Auto/Orders");
            await Expect(page.Locator("#slow-summary")).ToContainTextAsync("at least 0");
            await Expect(page.Locator("#api-bar")).ToContainTextAsync($"/databases/{db}/queries/slow");
            Assert.DoesNotContain(secret, await page.ContentAsync(), StringComparison.Ordinal);

            await page.ClickAsync("#slow-clear");
            await Expect(page.Locator("#slow-results")).ToHaveTextAsync("No slow query yet.");
            await Expect(page.Locator("#api-bar")).ToContainTextAsync($"curl -s -X DELETE '{Origin}/databases/{db}/queries/slow'");

            // Another database, chosen here, is read and kept in the address.
            var other = await server.CreateDatabaseAsync();
            await page.ReloadAsync();
            await page.SelectOptionAsync("#slow-database", other);
            await page.WaitForURLAsync($"**/studio/traffic?database={other}");
            await Expect(page.Locator("#slow-results")).ToHaveTextAsync("No slow query yet.");

            await page.GotoAsync(Origin + "/studio/traffic?database=no-such-database");
            await Expect(page.Locator("#slow-message")).ToContainTextAsync("DatabaseDoesNotExistException");
            AssertSameOriginAndNoErrors(requested, errors.Where(e => !e.Contains("503", StringComparison.Ordinal)).ToList());
        }
        finally
        {
            await page.CloseAsync();
        }
    }
}
