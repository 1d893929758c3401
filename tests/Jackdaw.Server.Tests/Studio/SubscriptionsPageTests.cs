using System.Globalization;
using System.Net;
using System.Text.Json;
using Jackdaw.Server.Tests.Infrastructure;
using Jackdaw.Server.Tests.Subscriptions;
using Microsoft.Playwright;
using static Microsoft.Playwright.Assertions;

namespace Jackdaw.Server.Tests.Studio;

/// <summary>
/// The subscriptions page (<c>/studio/subscriptions?database=</c>) in headless Chromium: a
/// subscription created in the page, a worker connecting, acknowledging and being dropped, as the
/// page shows it while it refreshes; disable, enable, delete.
/// </summary>
public sealed class SubscriptionsPageTests(ServerFixture server, BrowserFixture browser)
    : IClassFixture<ServerFixture>, IClassFixture<BrowserFixture>
{
    private HttpClient Client => server.Client;

    private string Origin => Client.BaseAddress!.GetLeftPart(UriPartial.Authority);

    [Fact]
    public async Task ASubscriptionCreatedInThePageShowsItsWorkerPositionAndPendingDocuments()
    {
        var db = await server.CreateDatabaseAsync();
        var orders = await StudioData.ImportOrdersAsync(Client, db, 1_000);
        var matching = orders.Count(o => o.GetProperty("Freight").GetDouble() > 10);
        Assert.InRange(matching, 201, 999);

        var page = await browser.Browser.NewPageAsync(new() { ViewportSize = new() { Width = 1280, Height = 800 } });
        var watch = PageWatch.Attach(page, Origin);
        watch.Expect(400);
        try
        {
            await page.GotoAsync($"{Origin}/studio/subscriptions?database={db}");
            await Expect(page.Locator("#empty")).ToBeVisibleAsync();

            // A query the server refuses shows its message.
            await page.FillAsync("#create-name", "Broken");
            await page.FillAsync("#create-query", "from index 'Orders/ByCompany'");
            await page.ClickAsync("#create-button");
            await Expect(page.Locator("#message.error")).ToContainTextAsync("(HTTP 400)");

            await page.FillAsync("#create-name", "Freighted");
            await page.FillAsync("#create-query", "from Orders where Freight > 10");
            await page.ClickAsync("#create-button");
            await Expect(page.Locator("#message.ok")).ToContainTextAsync("Subscription 'Freighted' created");
            var row = page.Locator("tr[data-key='Freighted']");
            await Expect(row.Locator("td.pending")).ToHaveTextAsync(matching.ToString(CultureInfo.InvariantCulture));
            await Expect(row.Locator("td.workers")).ToHaveTextAsync("none");
            await Expect(row.Locator("td.position")).ToContainTextAsync("etag 0");
            await Expect(page.Locator("#api-bar")).ToContainTextAsync($"/databases/{db}/subscriptions");

            // A worker connects: the next refresh shows it.
            var (worker, status) = await SubscriptionWorker.ConnectAsync(Client.BaseAddress!, db, "Freighted", maxDocs: 100);
            await using var workerScope = worker;
            Assert.Equal("Accepted", status.GetProperty("Status").GetString());
            await Expect(row.Locator("td.state")).ToHaveTextAsync("connected");
            await Expect(row.Locator("td.workers li.worker")).ToHaveCountAsync(1);
            await Expect(row.Locator("td.workers")).ToContainTextAsync("OpenIfFree");

            // It acknowledges a batch: the position moves to its last etag, 100 fewer are pending.
            var batch = await worker.BatchAsync();
            Assert.Equal(100, batch.GetProperty("Items").GetArrayLength());
            await worker.AckAndConfirmAsync(batch);
            var lastEtag = batch.GetProperty("LastEtag").GetInt64();
            await Expect(row.Locator("td.position .etag")).ToHaveTextAsync("etag " + lastEtag.ToString("N0", CultureInfo.InvariantCulture));
            await Expect(row.Locator("td.pending")).ToHaveTextAsync((matching - 100).ToString("N0", CultureInfo.InvariantCulture));
            await Expect(row.Locator("td.acked")).Not.ToHaveTextAsync("never");
            var state = await StateAsync(db, "Freighted");
            Assert.Equal(lastEtag, state.GetProperty("AckedEtag").GetInt64());
            await Expect(row.Locator("td.position code")).ToHaveTextAsync(state.GetProperty("ChangeVectorForNextBatchStartingPoint").GetString()!);

            await watch.ScreenshotAsync("studio-subscriptions.png");

            // Drop: the worker is told, and the page shows no worker.
            await row.Locator("button[data-action='drop']").ClickAsync();
            var closed = await ReceiveStatusAsync(worker);
            Assert.Equal("Closed", closed.GetProperty("Status").GetString());
            await Expect(row.Locator("td.workers")).ToHaveTextAsync("none");
            await Expect(row.Locator("td.state")).ToHaveTextAsync("idle");

            // Disable, then enable.
            await row.Locator("button[data-action='disable']").ClickAsync();
            await Expect(row.Locator("td.state")).ToHaveTextAsync("disabled");
            Assert.True((await StateAsync(db, "Freighted")).GetProperty("Disabled").GetBoolean());
            await row.Locator("button[data-action='enable']").ClickAsync();
            await Expect(row.Locator("td.state")).ToHaveTextAsync("idle");
            Assert.False((await StateAsync(db, "Freighted")).GetProperty("Disabled").GetBoolean());

            // Delete needs the name typed.
            await row.Locator("button[data-action='delete']").ClickAsync();
            var dialog = page.Locator("dialog.confirm");
            await Expect(dialog.Locator("button.danger")).ToBeDisabledAsync();
            await dialog.Locator("input").FillAsync("Freighted");
            await dialog.Locator("button.danger").ClickAsync();
            await Expect(row).ToHaveCountAsync(0);
            await Expect(page.Locator("#empty")).ToBeVisibleAsync();
            using (var gone = await Client.GetAsync($"/databases/{db}/subscriptions/state?name=Freighted"))
            {
                Assert.Equal(HttpStatusCode.NotFound, gone.StatusCode);
            }

            watch.AssertClean();
        }
        finally
        {
            await page.CloseAsync();
        }
    }

    [Fact]
    public async Task WithoutADatabaseThePageSaysWhatItNeeds()
    {
        var page = await browser.Browser.NewPageAsync();
        var watch = PageWatch.Attach(page, Origin);
        try
        {
            await page.GotoAsync($"{Origin}/studio/subscriptions");
            await Expect(page.Locator("#message")).ToContainTextAsync("?database=");
            await Expect(page.Locator("#list")).ToBeHiddenAsync();
            watch.AssertClean();
        }
        finally
        {
            await page.CloseAsync();
        }
    }

    private async Task<JsonElement> StateAsync(string db, string name)
    {
        using var response = await Client.GetAsync($"/databases/{db}/subscriptions/state?name={name}");
        Assert.Equal(HttpStatusCode.OK, response.StatusCode);
        return await Api.JsonAsync(response);
    }

    /// <summary>The next <c>ConnectionStatus</c> message, skipping the batch prepared meanwhile.</summary>
    private static async Task<JsonElement> ReceiveStatusAsync(SubscriptionWorker worker)
    {
        while (true)
        {
            var message = await worker.ReceiveAsync(TimeSpan.FromSeconds(30)) ?? throw new InvalidOperationException("Closed without a status.");
            if (message.GetProperty("Type").GetString() == "ConnectionStatus")
            {
                return message;
            }
        }
    }
}
