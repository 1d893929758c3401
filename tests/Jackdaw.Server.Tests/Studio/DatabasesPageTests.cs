using System.Net;
using System.Text.Json;
using Jackdaw.Server.Tests.Infrastructure;
using Microsoft.Playwright;
using static Microsoft.Playwright.Assertions;

namespace Jackdaw.Server.Tests.Studio;

/// <summary>The Databases page (<c>/studio/</c>) in headless Chromium: create, the counts of each database, open, delete with the name typed.</summary>
public sealed class DatabasesPageTests(ServerFixture server, BrowserFixture browser)
    : IClassFixture<ServerFixture>, IClassFixture<BrowserFixture>
{
    private HttpClient Client => server.Client;

    private string Origin => Client.BaseAddress!.GetLeftPart(UriPartial.Authority);

    [Fact]
    public async Task ADatabaseCreatedInThePageShowsItsDocumentsSizeAndIndexesAndOpensItsDocuments()
    {
        var page = await browser.Browser.NewPageAsync(new() { ViewportSize = new() { Width = 1280, Height = 800 } });
        var watch = PageWatch.Attach(page, Origin);
        try
        {
            await page.GotoAsync(Origin + "/studio/");
            await page.FillAsync("#new-name", "Shop");
            await page.ClickAsync("#create");
            var row = page.Locator("tr[data-database='Shop']");
            await Expect(row).ToBeVisibleAsync();
            await Expect(row.Locator(".documents")).ToHaveTextAsync("0");
            await Expect(page.Locator("#message")).ToContainTextAsync("Created the database 'Shop'");
            using (var list = await Client.GetAsync("/databases?namesOnly=true"))
            {
                Assert.Contains("Shop", (await Api.JsonAsync(list)).GetProperty("Databases").EnumerateArray().Select(n => n.GetString()));
            }

            // The same name again is the server's refusal, shown as it says it.
            await page.FillAsync("#new-name", "Shop");
            watch.Expect(409);
            await page.ClickAsync("#create");
            await Expect(page.Locator("#message")).ToContainTextAsync("DatabaseAlreadyExistsException");

            // Orders and two indexes through the API, one of which fails on every order.
            await StudioData.ImportOrdersAsync(Client, "Shop", 2_000);
            var definitions = JsonSerializer.Serialize(new
            {
                Indexes = new object[]
                {
                    new { Name = "Orders/ByCompany", Maps = new[] { "map('Orders', o => ({ Company: o.Company }))" } },
                    new { Name = "Orders/Broken", Maps = new[] { "map('Orders', o => ({ Total: o.NoSuchThing.Length }))" } },
                },
            });
            using (var put = await Client.PutAsync("/databases/Shop/admin/indexes", Api.Json(definitions)))
            {
                Assert.Equal(HttpStatusCode.Created, put.StatusCode);
            }
            await Poll.UntilAsync(async () =>
            {
                using var stats = await Client.GetAsync("/databases/Shop/indexes/stats?name=Orders/Broken");
                var json = await Api.JsonAsync(stats);
                return json.GetProperty("Results")[0].GetProperty("ErrorsCount").GetInt64() > 0 || json.GetProperty("Results")[0].GetProperty("State").GetString() == "Error";
            }, TimeSpan.FromSeconds(30), "the broken index's errors");

            await page.ReloadAsync();
            await Expect(row.Locator(".documents")).ToHaveTextAsync("2,000");
            await Expect(row.Locator(".size")).ToHaveTextAsync(new System.Text.RegularExpressions.Regex(@"^\d+(\.\d)? (KiB|MiB|GiB)$"));
            await Expect(row.Locator(".indexes .count")).ToHaveTextAsync("2");
            await Expect(row.Locator(".indexes .badge.bad")).ToHaveTextAsync("1 errored");

            await watch.ScreenshotAsync("studio-databases.png");

            await row.Locator("a.open").ClickAsync();
            await page.WaitForURLAsync("**/studio/documents?database=Shop");
            await Expect(page.Locator("#collections a[data-collection='Orders'] .count")).ToHaveTextAsync("2,000");
            watch.AssertClean();
        }
        finally
        {
            await page.CloseAsync();
        }
    }

    [Fact]
    public async Task ADatabaseIsDeletedOnlyOnceItsNameIsTyped()
    {
        var db = await server.CreateDatabaseAsync();
        await StudioData.PutAsync(Client, db, "notes/1", """{"Text":"kept until deleted","@metadata":{"@collection":"Notes"}}""");
        var page = await browser.Browser.NewPageAsync();
        var watch = PageWatch.Attach(page, Origin);
        try
        {
            await page.GotoAsync(Origin + "/studio/");
            var row = page.Locator($"tr[data-database='{db}']");
            await Expect(row.Locator(".documents")).ToHaveTextAsync("1");

            // Cancelled: nothing happens.
            await row.Locator("button.delete").ClickAsync();
            var dialog = page.Locator("dialog.confirm");
            await Expect(dialog).ToBeVisibleAsync();
            await dialog.Locator("button", new() { HasText = "Cancel" }).ClickAsync();
            await Expect(dialog).ToHaveCountAsync(0);
            await Expect(row).ToBeVisibleAsync();

            await row.Locator("button.delete").ClickAsync();
            var delete = dialog.Locator("button.danger");
            await dialog.Locator("input").FillAsync(db + "x");
            await Expect(delete).ToBeDisabledAsync();
            await dialog.Locator("input").FillAsync(db);
            await Expect(delete).ToBeEnabledAsync();
            await delete.ClickAsync();
            await Expect(row).ToHaveCountAsync(0);
            await Expect(page.Locator("#message")).ToContainTextAsync($"Deleted the database '{db}'");
            await Expect(page.Locator("#api-bar")).ToContainTextAsync($"curl -s -X DELETE '{Origin}/admin/databases?name={db}'");

            using var stats = await Client.GetAsync($"/databases/{db}/stats");
            Assert.Equal(HttpStatusCode.ServiceUnavailable, stats.StatusCode);
            watch.AssertClean();
        }
        finally
        {
            await page.CloseAsync();
        }
    }
}
