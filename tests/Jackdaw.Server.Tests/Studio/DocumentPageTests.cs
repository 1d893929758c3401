using System.Net;
using System.Text;
using System.Text.Json;
using Jackdaw.Server.Tests.Infrastructure;
using Microsoft.Playwright;
using static Microsoft.Playwright.Assertions;

namespace Jackdaw.Server.Tests.Studio;

/// <summary>
/// The document editor (<c>/studio/document</c>) in headless Chromium: checking and saving JSON with
/// the change vector, the conflict a concurrent change makes, new documents, clones and deletes,
/// related documents, attachments and revisions.
/// </summary>
public sealed class DocumentPageTests(ServerFixture server, BrowserFixture browser)
    : IClassFixture<ServerFixture>, IClassFixture<BrowserFixture>
{
    private HttpClient Client => server.Client;

    private string Origin => Client.BaseAddress!.GetLeftPart(UriPartial.Authority);

    private string DocumentUrl(string db, string id) => $"{Origin}/studio/document?database={db}&id={Uri.EscapeDataString(id)}";

    private static string ChangeVector(JsonElement document) => document.GetProperty("@metadata").GetProperty("@change-vector").GetString()!;

    [Fact]
    public async Task AnEditIsCheckedSavedAndAConcurrentChangeIsAConflictToResolve()
    {
        var db = await server.CreateDatabaseAsync();
        await StudioData.ImportOrdersAsync(Client, db, 2_000);
        var page = await browser.Browser.NewPageAsync(new() { ViewportSize = new() { Width = 1280, Height = 800 } });
        var watch = PageWatch.Attach(page, Origin);
        watch.Expect(409);
        try
        {
            await page.GotoAsync(DocumentUrl(db, "orders/42"));
            await Expect(page.Locator("#title")).ToHaveTextAsync("orders/42");
            var stored = await StudioData.GetAsync(Client, db, "orders/42");
            await Expect(page.Locator("#metadata")).ToContainTextAsync(ChangeVector(stored));
            // The metadata is apart from the JSON being edited.
            Assert.DoesNotContain("@metadata", await page.InputValueAsync("#json"), StringComparison.Ordinal);

            // Bad JSON: the error's line and column, and nothing saved.
            await page.FillAsync("#json", "{\n  \"Company\": \"companies/1\",\n  \"Freight\": 12.5,\n}");
            await page.ClickAsync("#save");
            await Expect(page.Locator("#json-error")).ToHaveTextAsync("Line 4, column 1: expected a property name in double quotes.");
            await Expect(page.Locator("#json")).ToHaveClassAsync(new System.Text.RegularExpressions.Regex("invalid"));
            Assert.Equal(ChangeVector(stored), ChangeVector(await StudioData.GetAsync(Client, db, "orders/42")));

            await page.FillAsync("#json", "{\n  \"Company\": \"companies/1\",\n  \"Freight\": 12.5\n}");
            await Expect(page.Locator("#json-error")).ToBeHiddenAsync();
            await page.ClickAsync("#save");
            await Expect(page.Locator("#message")).ToHaveTextAsync("Saved 'orders/42'.");
            var saved = await StudioData.GetAsync(Client, db, "orders/42");
            Assert.Equal(12.5, saved.GetProperty("Freight").GetDouble());
            Assert.Equal("Orders", saved.GetProperty("@metadata").GetProperty("@collection").GetString());
            Assert.False(saved.TryGetProperty("Lines", out _));
            await Expect(page.Locator("#metadata")).ToContainTextAsync(ChangeVector(saved));
            await Expect(page.Locator("#api-bar")).ToContainTextAsync($"-H 'If-Match: \"{ChangeVector(stored)}\"'");

            // Someone else changes it; the page's save is refused and says what happened.
            var theirs = await StudioData.PutAsync(Client, db, "orders/42", """{"Company":"companies/1","Freight":1,"@metadata":{"@collection":"Orders"}}""");
            await page.FillAsync("#json", "{\n  \"Company\": \"companies/1\",\n  \"Freight\": 77\n}");
            await page.ClickAsync("#save");
            var conflict = page.Locator("#conflict");
            await Expect(conflict).ToBeVisibleAsync();
            await Expect(conflict).ToContainTextAsync("was changed on the server after you opened it");
            await Expect(conflict.Locator("code.mine")).ToHaveTextAsync(ChangeVector(saved));
            await Expect(conflict.Locator("code.theirs")).ToHaveTextAsync(theirs);
            Assert.Equal(1, (await StudioData.GetAsync(Client, db, "orders/42")).GetProperty("Freight").GetDouble());
            await watch.ScreenshotAsync("studio-document.png");

            await conflict.Locator("button.reload-theirs").ClickAsync();
            await Expect(conflict).ToBeHiddenAsync();
            Assert.Equal(1, JsonDocument.Parse(await page.InputValueAsync("#json")).RootElement.GetProperty("Freight").GetDouble());
            await Expect(page.Locator("#metadata")).ToContainTextAsync(theirs);

            // Again, and this time the page's version wins.
            var again = await StudioData.PutAsync(Client, db, "orders/42", """{"Company":"companies/1","Freight":2,"@metadata":{"@collection":"Orders"}}""");
            await page.FillAsync("#json", "{\n  \"Company\": \"companies/1\",\n  \"Freight\": 88\n}");
            await page.ClickAsync("#save");
            await Expect(conflict.Locator("code.theirs")).ToHaveTextAsync(again);
            await conflict.Locator("button.overwrite").ClickAsync();
            await Expect(page.Locator("#message")).ToHaveTextAsync("Saved 'orders/42'.");
            await Expect(conflict).ToBeHiddenAsync();
            Assert.Equal(88, (await StudioData.GetAsync(Client, db, "orders/42")).GetProperty("Freight").GetDouble());
            watch.AssertClean();
        }
        finally
        {
            await page.CloseAsync();
        }
    }

    [Fact]
    public async Task IdsInTheDocumentThatNameDocumentsAreLinks()
    {
        var db = await server.CreateDatabaseAsync();
        await StudioData.PutAsync(Client, db, "companies/7", """{"Name":"Seven","@metadata":{"@collection":"Companies"}}""");
        await StudioData.PutAsync(Client, db, "employees/3", """{"Name":"Three","@metadata":{"@collection":"Employees"}}""");
        await StudioData.PutAsync(Client, db, "orders/1", """{"Company":"companies/7","Employee":"employees/404","Lines":[{"Seller":"employees/3","Note":"not an id"}],"@metadata":{"@collection":"Orders"}}""");
        var page = await browser.Browser.NewPageAsync();
        var watch = PageWatch.Attach(page, Origin);
        try
        {
            await page.GotoAsync(DocumentUrl(db, "orders/1"));
            var links = page.Locator("#related a");
            await Expect(links).ToHaveTextAsync(["companies/7", "employees/3"]);
            // One request checks every string.
            Assert.Single(watch.Requests, r => r == $"POST {Origin}/databases/{db}/docs?metadataOnly=true");
            await links.First.ClickAsync();
            await page.WaitForURLAsync($"**/studio/document?database={db}&id=companies%2F7");
            await Expect(page.Locator("#title")).ToHaveTextAsync("companies/7");
            await Expect(page.Locator("#related")).ToHaveTextAsync("No string value of this document is a document id.");
            watch.AssertClean();
        }
        finally
        {
            await page.CloseAsync();
        }
    }

    [Fact]
    public async Task ANewDocumentGetsAnIdFromTheServerIsClonedAndDeleted()
    {
        var db = await server.CreateDatabaseAsync();
        var page = await browser.Browser.NewPageAsync();
        var watch = PageWatch.Attach(page, Origin);
        watch.Expect(409);
        try
        {
            await page.GotoAsync($"{Origin}/studio/document?database={db}&new=1&collection=Notes");
            await Expect(page.Locator("#title")).ToHaveTextAsync("New document");
            await Expect(page.Locator("#metadata")).ToContainTextAsync("\"@collection\": \"Notes\"");
            await page.FillAsync("#json", """{"Text":"first"}""");
            await page.ClickAsync("#save");
            await Expect(page.Locator("#message")).ToContainTextAsync("Saved the new document 'notes/");
            var id = await page.Locator("#title").TextContentAsync();
            Assert.StartsWith("notes/", id, StringComparison.Ordinal);
            Assert.Contains("id=" + Uri.EscapeDataString(id!), page.Url, StringComparison.Ordinal);
            Assert.Equal("first", (await StudioData.GetAsync(Client, db, id!)).GetProperty("Text").GetString());

            // A clone under an id of the user's; an id taken is refused, not overwritten.
            await page.ClickAsync("#clone");
            await Expect(page.Locator("#title")).ToHaveTextAsync($"New document (a clone of {id})");
            await page.FillAsync("#new-id", id!);
            await page.ClickAsync("#save");
            await Expect(page.Locator("#message")).ToContainTextAsync("exists already");
            await page.FillAsync("#new-id", "notes/copy");
            await page.ClickAsync("#save");
            await Expect(page.Locator("#title")).ToHaveTextAsync("notes/copy");
            var copy = await StudioData.GetAsync(Client, db, "notes/copy");
            Assert.Equal("first", copy.GetProperty("Text").GetString());
            Assert.Equal("Notes", copy.GetProperty("@metadata").GetProperty("@collection").GetString());

            await page.ClickAsync("#delete");
            await page.Locator("dialog.confirm button.danger").ClickAsync();
            await page.WaitForURLAsync($"**/studio/documents?database={db}&collection=Notes");
            using var response = await Client.GetAsync($"/databases/{db}/docs?id=notes/copy");
            Assert.Equal(HttpStatusCode.NotFound, response.StatusCode);
            watch.AssertClean();
        }
        finally
        {
            await page.CloseAsync();
        }
    }

    [Fact]
    public async Task AnAttachmentIsUploadedDownloadedAndDeleted()
    {
        var db = await server.CreateDatabaseAsync();
        await StudioData.PutAsync(Client, db, "orders/1", """{"Freight":3,"@metadata":{"@collection":"Orders"}}""");
        var page = await browser.Browser.NewPageAsync();
        var watch = PageWatch.Attach(page, Origin);
        var bytes = Encoding.UTF8.GetBytes("line one\nline two\n");
        try
        {
            await page.GotoAsync(DocumentUrl(db, "orders/1"));
            await page.ClickAsync(".tabs button[data-tab='attachments']");
            await Expect(page.Locator("#attachments")).ToContainTextAsync("No attachments.");
            await page.SetInputFilesAsync("#file", new FilePayload { Name = "notes.txt", MimeType = "text/plain", Buffer = bytes });
            await page.ClickAsync("#upload");
            var row = page.Locator("#attachments tr[data-key='notes.txt']");
            await Expect(row).ToBeVisibleAsync();
            await Expect(row).ToContainTextAsync("text/plain");
            await Expect(page.Locator("#attachments-count")).ToHaveTextAsync("1");
            using (var stored = await Client.GetAsync($"/databases/{db}/attachments?id=orders/1&name=notes.txt"))
            {
                Assert.Equal(HttpStatusCode.OK, stored.StatusCode);
                Assert.Equal("text/plain", stored.Content.Headers.ContentType?.MediaType);
                Assert.Equal(bytes, await stored.Content.ReadAsByteArrayAsync());
            }

            var download = await page.RunAndWaitForDownloadAsync(() => row.Locator("a.download").ClickAsync());
            Assert.Equal("notes.txt", download.SuggestedFilename);
            await using (var stream = await download.CreateReadStreamAsync())
            {
                using var copy = new MemoryStream();
                await stream.CopyToAsync(copy);
                Assert.Equal(bytes, copy.ToArray());
            }

            // The attachment changed the document's change vector: an edit saved now is no conflict.
            await page.ClickAsync(".tabs button[data-tab='document']");
            await page.FillAsync("#json", """{"Freight":4}""");
            await page.ClickAsync("#save");
            await Expect(page.Locator("#message")).ToHaveTextAsync("Saved 'orders/1'.");

            await page.ClickAsync(".tabs button[data-tab='attachments']");
            await row.Locator("button.delete-attachment").ClickAsync();
            await page.Locator("dialog.confirm button.danger").ClickAsync();
            await Expect(row).ToHaveCountAsync(0);
            await Expect(page.Locator("#attachments-count")).ToHaveTextAsync("0");
            using (var gone = await Client.GetAsync($"/databases/{db}/attachments?id=orders/1&name=notes.txt"))
            {
                Assert.Equal(HttpStatusCode.NotFound, gone.StatusCode);
            }
            Assert.Equal(4, (await StudioData.GetAsync(Client, db, "orders/1")).GetProperty("Freight").GetDouble());
            watch.AssertClean();
        }
        finally
        {
            await page.CloseAsync();
        }
    }

    [Fact]
    public async Task RevisionsTickedOnDifferentPagesAreComparedOlderOnTheLeft()
    {
        var db = await server.CreateDatabaseAsync();
        using (var config = await Client.PostAsync($"/databases/{db}/admin/revisions/config", Api.Json("""{"Collections":{"Orders":{"Disabled":false,"MinimumRevisionsToKeep":100}}}""")))
        {
            Assert.Equal(HttpStatusCode.OK, config.StatusCode);
        }
        var vectors = new List<string>();
        for (var i = 1; i <= 27; i++)
        {
            vectors.Add(await StudioData.PutAsync(Client, db, "orders/1", $$$"""{"Note":"version {{{i}}}","@metadata":{"@collection":"Orders"}}"""));
        }
        var page = await browser.Browser.NewPageAsync();
        var watch = PageWatch.Attach(page, Origin);
        try
        {
            await page.GotoAsync(DocumentUrl(db, "orders/1"));
            await Expect(page.Locator("#revisions-count")).ToHaveTextAsync("27");
            await page.ClickAsync(".tabs button[data-tab='revisions']");
            var rows = page.Locator("#revisions tbody tr");
            await Expect(rows).ToHaveCountAsync(25);

            // The oldest, ticked on the second page; then the newest, on the first.
            await page.ClickAsync("#revisions-next");
            await Expect(rows).ToHaveCountAsync(2);
            await Expect(rows.Last).ToHaveAttributeAsync("data-key", vectors[0]);
            await rows.Last.Locator("input[type=checkbox]").CheckAsync();
            await page.ClickAsync("#revisions-previous");
            await Expect(rows.First).ToHaveAttributeAsync("data-key", vectors[26]);
            await rows.First.Locator("input[type=checkbox]").CheckAsync();
            await page.ClickAsync("#compare");
            var diff = page.Locator("#revision-view table.diff");
            await Expect(diff.Locator("thead th").First).ToContainTextAsync(vectors[0]);
            await Expect(diff.Locator("thead th").Last).ToContainTextAsync(vectors[26]);
            await Expect(diff.Locator("td.diff-del")).ToHaveTextAsync(["  \"Note\": \"version 1\""]);
            await Expect(diff.Locator("td.diff-add")).ToHaveTextAsync(["  \"Note\": \"version 27\""]);
            watch.AssertClean();
        }
        finally
        {
            await page.CloseAsync();
        }
    }

    [Fact]
    public async Task RevisionsAreListedComparedSideBySideAndRevertedTo()
    {
        var db = await server.CreateDatabaseAsync();
        using (var config = await Client.PostAsync($"/databases/{db}/admin/revisions/config", Api.Json("""{"Collections":{"Orders":{"Disabled":false,"MinimumRevisionsToKeep":100}}}""")))
        {
            Assert.Equal(HttpStatusCode.OK, config.StatusCode);
        }
        var first = await StudioData.PutAsync(Client, db, "orders/1", """{"Company":"companies/1","Freight":10,"Note":"first","@metadata":{"@collection":"Orders"}}""");
        await StudioData.PutAsync(Client, db, "orders/1", """{"Company":"companies/1","Freight":20,"Note":"second","@metadata":{"@collection":"Orders"}}""");
        var third = await StudioData.PutAsync(Client, db, "orders/1", """{"Company":"companies/2","Freight":30,"Note":"third","Extra":true,"@metadata":{"@collection":"Orders"}}""");
        await StudioData.PutAsync(Client, db, "notes/1", """{"Text":"no revisions","@metadata":{"@collection":"Notes"}}""");
        var page = await browser.Browser.NewPageAsync();
        var watch = PageWatch.Attach(page, Origin);
        try
        {
            await page.GotoAsync(DocumentUrl(db, "orders/1"));
            await Expect(page.Locator("#revisions-count")).ToHaveTextAsync("3");
            await page.ClickAsync(".tabs button[data-tab='revisions']");
            var rows = page.Locator("#revisions tbody tr");
            await Expect(rows).ToHaveCountAsync(3);
            await Expect(rows.First).ToHaveAttributeAsync("data-key", third);
            await Expect(rows.Last).ToHaveAttributeAsync("data-key", first);
            await Expect(page.Locator("#revisions-note")).ToBeHiddenAsync();

            // The first and the third, side by side: the older on the left.
            await Expect(page.Locator("#compare")).ToBeDisabledAsync();
            await rows.First.Locator("input[type=checkbox]").CheckAsync();
            await rows.Last.Locator("input[type=checkbox]").CheckAsync();
            await page.ClickAsync("#compare");
            var diff = page.Locator("#revision-view table.diff");
            await Expect(diff).ToBeVisibleAsync();
            await Expect(diff.Locator("thead th").First).ToContainTextAsync(first);
            await Expect(diff.Locator("thead th").Last).ToContainTextAsync(third);
            await Expect(diff.Locator("td.diff-del")).ToHaveTextAsync(["  \"Company\": \"companies/1\",", "  \"Freight\": 10,", "  \"Note\": \"first\""]);
            await Expect(diff.Locator("td.diff-add")).ToHaveTextAsync(["  \"Company\": \"companies/2\",", "  \"Freight\": 30,", "  \"Note\": \"third\",", "  \"Extra\": true"]);
            await Expect(page.Locator("#revision-view .diff-summary")).ToHaveTextAsync("4 line(s) added, 3 removed.");

            await rows.Last.Locator("button.view").ClickAsync();
            await Expect(page.Locator("#revision-view pre.revision")).ToContainTextAsync("\"Note\": \"first\"");

            await rows.Last.Locator("button.revert").ClickAsync();
            await page.Locator("dialog.confirm button.primary").ClickAsync();
            await Expect(page.Locator("#message")).ToContainTextAsync($"Reverted 'orders/1' to {first}.");
            var reverted = await StudioData.GetAsync(Client, db, "orders/1");
            Assert.Equal("first", reverted.GetProperty("Note").GetString());
            Assert.Equal("first", JsonDocument.Parse(await page.InputValueAsync("#json")).RootElement.GetProperty("Note").GetString());
            // The revert is itself a revision, listed first.
            await Expect(rows).ToHaveCountAsync(4);
            await Expect(rows.First).ToHaveAttributeAsync("data-key", ChangeVector(reverted));

            // A collection without revisions says so.
            await page.GotoAsync(DocumentUrl(db, "notes/1"));
            await page.ClickAsync(".tabs button[data-tab='revisions']");
            await Expect(page.Locator("#revisions-note")).ToContainTextAsync("Revisions are not configured for the collection 'Notes'");
            await Expect(page.Locator("#revisions")).ToContainTextAsync("No revisions of this document.");
            watch.AssertClean();
        }
        finally
        {
            await page.CloseAsync();
        }
    }
}
