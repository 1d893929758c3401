using System.Net;
using Jackdaw.Server.Tests.Infrastructure;
using Microsoft.Playwright;
using static Microsoft.Playwright.Assertions;

namespace Jackdaw.Server.Tests.Studio;

/// <summary>The patch page (<c>/studio/patch</c>) in headless Chromium against the real server and corpus orders.</summary>
public sealed class PatchPageTests(ServerFixture server, BrowserFixture browser)
    : IClassFixture<ServerFixture>, IClassFixture<BrowserFixture>
{
    private HttpClient Client => server.Client;

    private string Origin => Client.BaseAddress!.GetLeftPart(UriPartial.Authority);

    [Fact]
    public async Task ATestOnOneDocumentShowsItBeforeAndAfterThenARunByQueryCompletesAndPatchesEveryMatch()
    {
        var db = await server.CreateDatabaseAsync();
        await StudioData.ImportOrdersAsync(Client, db, 2_000);
        var matches = (await StudioData.QueryAsync(Client, db, "from Orders where Freight > 200")).GetProperty("TotalResults").GetInt64();
        Assert.InRange(matches, 1, 1_999);
        var page = await browser.Browser.NewPageAsync(new() { ViewportSize = new() { Width = 1280, Height = 800 } });
        var watch = PageWatch.Attach(page, Origin);
        try
        {
            await page.GotoAsync($"{Origin}/studio/patch?database={db}");
            await Expect(page.Locator("#editor")).ToBeVisibleAsync();
            await page.Locator("#script").FillAsync("from Orders as o where Freight > 200\nupdate {\n  o.Freight = Math.round(o.Freight * 2);\n  o.Reviewed = true;\n}");

            // The test patches orders/1 in a transaction the server rolls back.
            await page.Locator("#test-id").FillAsync("orders/1");
            await page.Locator("#test").ClickAsync();
            await Expect(page.Locator("#test-status")).ToHaveTextAsync("Patched");
            await Expect(page.Locator("#before")).ToContainTextAsync("\"Freight\": 114.52");
            await Expect(page.Locator("#after")).ToContainTextAsync("\"Freight\": 229");
            var added = await page.Locator("#after .diff-add").AllInnerTextsAsync();
            Assert.Contains(added, line => line.Contains("\"Freight\": 229", StringComparison.Ordinal));
            Assert.Contains(added, line => line.Contains("\"Reviewed\": true", StringComparison.Ordinal));
            Assert.Contains(await page.Locator("#before .diff-del").AllInnerTextsAsync(), line => line.Contains("\"Freight\": 114.52", StringComparison.Ordinal));
            Assert.DoesNotContain(await page.Locator("#before .diff-del").AllInnerTextsAsync(), line => line.Contains("\"Company\"", StringComparison.Ordinal));
            using (var unchanged = await Client.GetAsync($"/databases/{db}/docs?id=orders/1"))
            {
                var text = await unchanged.Content.ReadAsStringAsync();
                Assert.DoesNotContain("Reviewed", text, StringComparison.Ordinal);
                Assert.Contains("114.52", text, StringComparison.Ordinal);
            }

            // The run by query is an operation the page follows to its end.
            await page.Locator("#run").ClickAsync();
            await Expect(page.Locator("#operation-status")).ToHaveAttributeAsync("data-status", "Completed", new() { Timeout = 60_000 });
            await Expect(page.Locator("#operation-result")).ToHaveAttributeAsync("data-total", matches.ToString(System.Globalization.CultureInfo.InvariantCulture));
            await Expect(page.Locator("#operation-result")).ToContainTextAsync("documents patched");
            await Expect(page.Locator("#api-bar")).ToContainTextAsync("-X PATCH");
            var reviewed = await StudioData.QueryAsync(Client, db, "from Orders where Reviewed = true");
            Assert.Equal(matches, reviewed.GetProperty("TotalResults").GetInt64());
            Assert.All(reviewed.GetProperty("Results").EnumerateArray(), o => Assert.True(o.GetProperty("Freight").GetDouble() >= 400));
            await watch.ScreenshotAsync("studio-patch.png");
            watch.AssertClean();
        }
        finally
        {
            await page.CloseAsync();
        }
    }

    [Fact]
    public async Task AScriptThatDoesNotParseIsMarkedAtItsLineAndABodyPatchesOneDocument()
    {
        var db = await server.CreateDatabaseAsync();
        await StudioData.ImportOrdersAsync(Client, db, 10);
        var page = await browser.Browser.NewPageAsync(new() { ViewportSize = new() { Width = 1280, Height = 800 } });
        var watch = PageWatch.Attach(page, Origin);
        try
        {
            await page.GotoAsync($"{Origin}/studio/patch?database={db}&id=orders/2");
            await Expect(page.Locator("#test-id")).ToHaveValueAsync("orders/2");

            // A JavaScript body: the parse error's line and column are marked.
            await page.Locator("#script").FillAsync("this.Checked = true;\nthis.Freight = * 2;");
            await page.Locator("#test").ClickAsync();
            await Expect(page.Locator("#message")).ToContainTextAsync("line 2");
            var caret = page.Locator("#caret");
            await Expect(caret).ToBeVisibleAsync();
            var lines = (await caret.InnerTextAsync()).Split('\n');
            Assert.Equal("this.Freight = * 2;", lines[1]);
            Assert.Equal(lines[1].IndexOf('*', StringComparison.Ordinal), lines[2].IndexOf('^', StringComparison.Ordinal));

            // An RQL script whose query is wrong: the query's position is marked.
            await page.Locator("#script").FillAsync("from Orders where Freight >\nupdate { this.Checked = true; }");
            await page.Locator("#run").ClickAsync();
            await Expect(page.Locator("#message")).ToContainTextAsync("InvalidQueryException");
            await Expect(caret).ToBeVisibleAsync();

            // A body with an id, run: that document alone is patched.
            await page.Locator("#script").FillAsync("this.Checked = true;");
            await page.Locator("#run").ClickAsync();
            await Expect(page.Locator("#message")).ToContainTextAsync("'orders/2': Patched.");
            using var checkedOne = await Client.GetAsync($"/databases/{db}/docs?id=orders/2");
            Assert.Contains("\"Checked\":true", await checkedOne.Content.ReadAsStringAsync(), StringComparison.Ordinal);
            var all = await StudioData.QueryAsync(Client, db, "from Orders where Checked = true");
            Assert.Equal(1, all.GetProperty("TotalResults").GetInt64());

            // A missing document is said so.
            await page.Locator("#test-id").FillAsync("orders/999999");
            await page.Locator("#test").ClickAsync();
            await Expect(page.Locator("#message")).ToContainTextAsync("There is no document 'orders/999999'");
            watch.Expect(400, 404);
            watch.AssertClean();
        }
        finally
        {
            await page.CloseAsync();
        }
    }
}
