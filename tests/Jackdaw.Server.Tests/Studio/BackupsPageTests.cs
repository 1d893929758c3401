using System.Net;
using System.Text.Json;
using Jackdaw.Server.Tests.Infrastructure;
using Microsoft.Playwright;
using static Microsoft.Playwright.Assertions;

namespace Jackdaw.Server.Tests.Studio;

/// <summary>
/// The backups page (<c>/studio/backups?database=</c>) in headless Chromium: a periodic task
/// created, run now and edited in the page; its chain restored into a new database and verified;
/// a one-time backup; a refused one.
/// </summary>
public sealed class BackupsPageTests(ServerFixture server, BrowserFixture browser)
    : IClassFixture<ServerFixture>, IClassFixture<BrowserFixture>, IDisposable
{
    private readonly TempFolder _backups = new("jackdaw-studio-backups");

    private HttpClient Client => server.Client;

    private string Origin => Client.BaseAddress!.GetLeftPart(UriPartial.Authority);

    public void Dispose() => _backups.Dispose();

    [Fact]
    public async Task ATaskCreatedAndRunInThePageIsRestoredIntoANewDatabaseAndVerified()
    {
        var db = await server.CreateDatabaseAsync();
        await StudioData.ImportOrdersAsync(Client, db, 1_000);
        var restored = db + "-restored";

        var page = await browser.Browser.NewPageAsync(new() { ViewportSize = new() { Width = 1280, Height = 800 } });
        var watch = PageWatch.Attach(page, Origin);
        watch.Expect(400, 409);
        try
        {
            await page.GotoAsync($"{Origin}/studio/backups?database={db}");
            await Expect(page.Locator("#no-tasks")).ToBeVisibleAsync();

            // A task made in the page.
            await page.ClickAsync("#new-task");
            await page.FillAsync("#task-name", "nightly");
            await page.SelectOptionAsync("#task-type", "Snapshot");
            await page.FillAsync("#task-folder", _backups.Path);
            await page.FillAsync("#task-full", "0 2 * * *");
            await page.FillAsync("#task-incremental", "*/15 * * * *");
            await page.ClickAsync("#task-save");
            await Expect(page.Locator("#message.ok")).ToContainTextAsync("created");
            var row = page.Locator("tr[data-key='1']");
            await Expect(row.Locator("td.name")).ToContainTextAsync("nightly");
            await Expect(row.Locator("td.type")).ToHaveTextAsync("Snapshot");
            await Expect(row.Locator("td.last-full")).ToHaveTextAsync("never");
            await Expect(row.Locator("td.result")).ToHaveTextAsync("never run");
            await Expect(row.Locator("td.next")).ToContainTextAsync("(full)");

            // Run now: the operation is followed to its end, and the task shows its last run.
            await row.Locator("button[data-action='run-full']").ClickAsync();
            await Expect(page.Locator("#task-operation")).ToHaveAttributeAsync("data-state", "Completed", new() { Timeout = 60_000 });
            await Expect(row.Locator("td.result .badge")).ToHaveTextAsync("ok");
            await Expect(row.Locator("td.last-full")).Not.ToHaveTextAsync("never");
            var status = await StatusAsync(db, 1);
            Assert.NotEqual(JsonValueKind.Null, status.GetProperty("LastFullBackup").ValueKind);
            var chain = status.GetProperty("LocalBackup").GetProperty("BackupDirectory").GetString()!;
            await Expect(row.Locator("td.result code.chain")).ToHaveTextAsync(chain);

            // Restore that chain into a new database: it holds the orders.
            await row.Locator("button[data-action='restore']").ClickAsync();
            await Expect(page.Locator("#restore-folder")).ToHaveValueAsync(chain);
            await page.FillAsync("#restore-name", restored);
            await page.ClickAsync("#restore-run");
            await Expect(page.Locator("#restore-operation")).ToHaveAttributeAsync("data-state", "Completed", new() { Timeout = 60_000 });
            await Expect(page.Locator("#restore-operation a.restored")).ToHaveAttributeAsync("href", $"/studio/documents?database={restored}");
            using (var stats = await Client.GetAsync($"/databases/{restored}/stats"))
            {
                Assert.Equal(1_000, (await Api.JsonAsync(stats)).GetProperty("CountOfDocuments").GetInt64());
            }

            // Restoring into the same name again is refused at once, with the server's reason.
            await page.ClickAsync("#restore-run");
            await Expect(page.Locator("#message.error")).ToContainTextAsync("DatabaseAlreadyExistsException");

            // Verify it.
            await row.Locator("button[data-action='verify']").ClickAsync();
            await Expect(page.Locator("#verify-folder")).ToHaveValueAsync(chain);
            await page.ClickAsync("#verify-run");
            await Expect(page.Locator("#verify-operation")).ToHaveAttributeAsync("data-state", "Completed", new() { Timeout = 60_000 });

            await watch.ScreenshotAsync("studio-backups.png");

            // Edit: the form comes filled with the stored configuration; the change is stored.
            await row.Locator("button[data-action='edit']").ClickAsync();
            await Expect(page.Locator("#task-folder")).ToHaveValueAsync(_backups.Path);
            await Expect(page.Locator("#task-full")).ToHaveValueAsync("0 2 * * *");
            await page.FillAsync("#task-full", "0 3 * * *");
            await page.ClickAsync("#task-save");
            await Expect(page.Locator("#message.ok")).ToContainTextAsync("saved");
            using (var configuration = await Client.GetAsync($"/periodic-backup?name={db}&taskId=1"))
            {
                Assert.Equal("0 3 * * *", (await Api.JsonAsync(configuration)).GetProperty("FullBackupFrequency").GetString());
            }

            // A one-time backup, and one the server refuses.
            await page.FillAsync("#once-folder", "relative/folder");
            await page.ClickAsync("#once-run");
            await Expect(page.Locator("#message.error")).ToContainTextAsync("LocalSettings.FolderPath");
            var once = Path.Combine(_backups.Path, "once");
            await page.FillAsync("#once-folder", once);
            await page.ClickAsync("#once-run");
            await Expect(page.Locator("#once-operation")).ToHaveAttributeAsync("data-state", "Completed", new() { Timeout = 60_000 });
            Assert.NotEmpty(Directory.EnumerateFiles(once));

            // Delete the task (typed confirmation).
            await row.Locator("button[data-action='delete']").ClickAsync();
            await page.Locator("dialog.confirm input").FillAsync("nightly");
            await page.Locator("dialog.confirm button.danger").ClickAsync();
            await Expect(page.Locator("#no-tasks")).ToBeVisibleAsync();
            Assert.Equal(JsonValueKind.Null, (await StatusAsync(db, 1)).ValueKind);

            watch.AssertClean();
        }
        finally
        {
            await page.CloseAsync();
        }
    }

    private async Task<JsonElement> StatusAsync(string db, long taskId)
    {
        using var response = await Client.GetAsync($"/databases/{db}/periodic-backup/status?taskId={taskId}");
        Assert.Equal(HttpStatusCode.OK, response.StatusCode);
        return (await Api.JsonAsync(response)).GetProperty("Status");
    }
}
