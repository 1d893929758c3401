using System.Net;
using Jackdaw.Server.Tests.Infrastructure;
using Microsoft.Playwright;
using static Microsoft.Playwright.Assertions;

namespace Jackdaw.Server.Tests.Studio;

/// <summary>
/// The Documents page (<c>/studio/documents</c>) in headless Chromium over 2,000 corpus orders: the
/// collections with their counts, a grid paged on the server newest change first, the columns the
/// user chose (kept per collection), opening a document and deleting selected ones.
/// </summary>
public sealed class DocumentsPageTests(ServerFixture server, BrowserFixture browser)
    : IClassFixture<ServerFixture>, IClassFixture<BrowserFixture>
{
    private HttpClient Client => server.Client;

    private string Origin => Client.BaseAddress!.GetLeftPart(UriPartial.Authority);

    private async Task<string> ShopAsync()
    {
        var db = await server.CreateDatabaseAsync();
        await StudioData.ImportOrdersAsync(Client, db, 2_000);
        for (var i = 1; i <= 3; i++)
        {
            await StudioData.PutAsync(Client, db, $"companies/{i}", $$$"""{"Name":"Company {{{i}}}","@metadata":{"@collection":"Companies"}}""");
        }
        return db;
    }

    [Fact]
    public async Task AnOrderIsFoundByPagingTheGridWithTheColumnsChosen()
    {
        var db = await ShopAsync();
        var page = await browser.Browser.NewPageAsync(new() { ViewportSize = new() { Width = 1280, Height = 800 } });
        var watch = PageWatch.Attach(page, Origin);
        try
        {
            await page.GotoAsync($"{Origin}/studio/documents?database={db}");
            await Expect(page.Locator("#collections a[data-collection=''] .count")).ToHaveTextAsync("2,003");
            await Expect(page.Locator("#collections a[data-collection='Companies'] .count")).ToHaveTextAsync("3");
            // All documents, newest change first: the companies written last.
            await Expect(page.Locator("#grid tbody tr").First).ToHaveAttributeAsync("data-key", "companies/3");

            await page.ClickAsync("#collections a[data-collection='Orders']");
            var rows = page.Locator("#grid tbody tr");
            await Expect(rows).ToHaveCountAsync(50);
            await Expect(rows.First).ToHaveAttributeAsync("data-key", "orders/2000");
            await Expect(page.Locator("#range")).ToHaveTextAsync("1–50 of 2,000");
            Assert.Contains("collection=Orders", page.Url, StringComparison.Ordinal);
            // The default columns: the first properties of the page's orders.
            await Expect(page.Locator("#grid thead th")).ToHaveTextAsync(["", "Id", "Company", "Employee", "OrderedAt", "RequireAt", "ShippedAt"]);

            // Freight instead of Employee and RequireAt, kept for the next visit.
            await page.ClickAsync("#choose-columns");
            await page.Locator("#column-chooser label", new() { HasText = "Employee" }).Locator("input").UncheckAsync();
            await page.Locator("#column-chooser label", new() { HasText = "RequireAt" }).Locator("input").UncheckAsync();
            await page.Locator("#column-chooser label", new() { HasText = "Freight" }).Locator("input").CheckAsync();
            await Expect(page.Locator("#grid thead th")).ToHaveTextAsync(["", "Id", "Company", "OrderedAt", "ShippedAt", "Freight"]);

            // orders/1900 is the 101st newest: the first row of the third page of 50.
            await page.ClickAsync("#next");
            await Expect(page.Locator("#range")).ToHaveTextAsync("51–100 of 2,000");
            await page.ClickAsync("#next");
            await Expect(rows.First).ToHaveAttributeAsync("data-key", "orders/1900");
            await Expect(page.Locator("#previous")).ToBeEnabledAsync();
            var freight = (await StudioData.GetAsync(Client, db, "orders/1900")).GetProperty("Freight").GetDouble().ToString(System.Globalization.CultureInfo.InvariantCulture);
            await Expect(rows.First.Locator("td").Last).ToHaveTextAsync(freight);
            Assert.Contains(watch.Requests, r => r.EndsWith($"/databases/{db}/collections/docs?name=Orders&start=100&pageSize=50", StringComparison.Ordinal));

            // A larger page from the same place.
            await page.SelectOptionAsync("#page-size", "100");
            await Expect(rows).ToHaveCountAsync(100);
            await Expect(page.Locator("#range")).ToHaveTextAsync("101–200 of 2,000");

            await page.ReloadAsync();
            await Expect(page.Locator("#grid thead th")).ToHaveTextAsync(["", "Id", "Company", "OrderedAt", "ShippedAt", "Freight"]);
            await Expect(rows.First).ToHaveAttributeAsync("data-key", "orders/1900");
            // Other collections keep their own columns.
            await page.ClickAsync("#collections a[data-collection='Companies']");
            await Expect(page.Locator("#grid thead th")).ToHaveTextAsync(["", "Id", "Name"]);
            await page.ClickAsync("#collections a[data-collection='Orders']");
            await Expect(page.Locator("#grid thead th")).ToHaveTextAsync(["", "Id", "Company", "OrderedAt", "ShippedAt", "Freight"]);
            await watch.ScreenshotAsync("studio-documents.png");

            // Oldest first, from the start of the collection; then newest first again.
            await page.SelectOptionAsync("#order", "asc");
            await Expect(rows.First).ToHaveAttributeAsync("data-key", "orders/1");
            await Expect(rows.Nth(1)).ToHaveAttributeAsync("data-key", "orders/2");
            await Expect(page.Locator("#range")).ToHaveTextAsync("1–100 of 2,000");
            Assert.Contains("order=asc", page.Url, StringComparison.Ordinal);
            await page.SelectOptionAsync("#order", "desc");
            await Expect(rows.First).ToHaveAttributeAsync("data-key", "orders/2000");

            // A click on a row opens its document.
            await rows.Nth(2).Locator("td").Nth(2).ClickAsync();
            await page.WaitForURLAsync($"**/studio/document?database={db}&id=orders%2F1998");
            await Expect(page.Locator("#title")).ToHaveTextAsync("orders/1998");
            watch.AssertClean();
        }
        finally
        {
            await page.CloseAsync();
        }
    }

    [Fact]
    public async Task AnUnknownOrMissingDatabaseIsSaidOnTheDocumentsAndDocumentPages()
    {
        var page = await browser.Browser.NewPageAsync();
        var watch = PageWatch.Attach(page, Origin);
        watch.Expect(503);
        try
        {
            await page.GotoAsync($"{Origin}/studio/documents?database=no-such-database");
            await Expect(page.Locator("#message")).ToContainTextAsync("There is no database 'no-such-database'");
            await Expect(page.Locator("#layout")).ToBeHiddenAsync();
            await page.GotoAsync($"{Origin}/studio/document?database=no-such-database&id=orders/1");
            await Expect(page.Locator("#message")).ToContainTextAsync("There is no database 'no-such-database'");
            await Expect(page.Locator("#editor")).ToBeHiddenAsync();
            await page.GotoAsync($"{Origin}/studio/documents");
            await Expect(page.Locator("#message")).ToContainTextAsync("?database=");
            watch.AssertClean();
        }
        finally
        {
            await page.CloseAsync();
        }
    }

    [Fact]
    public async Task SelectedDocumentsAreDeletedInOneBatch()
    {
        var db = await ShopAsync();
        var page = await browser.Browser.NewPageAsync();
        var watch = PageWatch.Attach(page, Origin);
        try
        {
            await page.GotoAsync($"{Origin}/studio/documents?database={db}&collection=Orders&pageSize=25");
            var rows = page.Locator("#grid tbody tr");
            await Expect(rows).ToHaveCountAsync(25);
            await Expect(page.Locator("#delete-selected")).ToBeDisabledAsync();
            await rows.Nth(0).Locator("input[type=checkbox]").CheckAsync();
            await rows.Nth(3).Locator("input[type=checkbox]").CheckAsync();
            await Expect(page.Locator("#delete-selected")).ToHaveTextAsync("Delete selected (2)");
            await page.ClickAsync("#delete-selected");
            await page.Locator("dialog.confirm button.danger").ClickAsync();

            await Expect(page.Locator("#message")).ToContainTextAsync("Deleted 2 documents.");
            await Expect(page.Locator("#collections a[data-collection='Orders'] .count")).ToHaveTextAsync("1,998");
            await Expect(rows.First).ToHaveAttributeAsync("data-key", "orders/1999");
            await Expect(page.Locator("#range")).ToHaveTextAsync("1–25 of 1,998");
            Assert.Single(watch.Requests, r => r.StartsWith("POST ", StringComparison.Ordinal));
            Assert.Contains(watch.Requests, r => r == $"POST {Origin}/databases/{db}/bulk_docs");
            foreach (var id in new[] { "orders/2000", "orders/1997" })
            {
                using var response = await Client.GetAsync($"/databases/{db}/docs?id={id}");
                Assert.Equal(HttpStatusCode.NotFound, response.StatusCode);
            }

            // A new document starts in the collection shown.
            await page.ClickAsync("#new-document");
            await page.WaitForURLAsync($"**/studio/document?database={db}&new=1&collection=Orders");
            await Expect(page.Locator("#new-collection")).ToHaveValueAsync("Orders");
            watch.AssertClean();
        }
        finally
        {
            await page.CloseAsync();
        }
    }
}
