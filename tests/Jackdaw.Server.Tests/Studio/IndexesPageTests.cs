using System.Net;
using System.Text.Json;
using Jackdaw.Server.Tests.Infrastructure;
using Microsoft.Playwright;
using static Microsoft.Playwright.Assertions;

namespace Jackdaw.Server.Tests.Studio;

/// <summary>The indexes page (<c>/studio/indexes</c>) in headless Chromium against the real server and corpus orders.</summary>
public sealed class IndexesPageTests(ServerFixture server, BrowserFixture browser)
    : IClassFixture<ServerFixture>, IClassFixture<BrowserFixture>
{
    private HttpClient Client => server.Client;

    private string Origin => Client.BaseAddress!.GetLeftPart(UriPartial.Authority);

    [Fact]
    public async Task AnIndexDefinedInThePageThenChangedBuildsItsReplacementBesideItAndSwaps()
    {
        const string name = "Orders/ByCompany";
        var db = await server.CreateDatabaseAsync();
        await StudioData.ImportOrdersAsync(Client, db, 2_000);
        var page = await browser.Browser.NewPageAsync(new() { ViewportSize = new() { Width = 1280, Height = 800 } });
        var watch = PageWatch.Attach(page, Origin);
        try
        {
            await page.GotoAsync($"{Origin}/studio/indexes?database={db}");
            await Expect(page.Locator("#list")).ToBeVisibleAsync();
            await Expect(page.Locator("#performance-link")).ToHaveAttributeAsync("href", $"/studio/indexing-performance?database={db}");

            await page.Locator("#new-index").ClickAsync();
            await page.Locator("#def-name").FillAsync(name);
            await page.Locator("#maps textarea").FillAsync("map('Orders', o => ({ Company: o.Company }))");
            await page.Locator("#save").ClickAsync();
            var row = page.Locator($"tr[data-key='{name}']");
            await Expect(row).ToBeVisibleAsync();
            await Expect(row.Locator("[data-stale]")).ToHaveAttributeAsync("data-stale", "false");
            await Expect(row.Locator("td").Nth(3)).ToHaveTextAsync("2,000");
            var first = await DefinitionAsync(db, name);
            Assert.Equal(["map('Orders', o => ({ Company: o.Company }))"], first.GetProperty("Maps").EnumerateArray().Select(m => m.GetString()));

            // Indexing stopped, the changed definition waits beside the index as its replacement.
            await PostAsync($"/databases/{db}/indexes/stop");
            await row.GetByRole(AriaRole.Button, new() { Name = "Edit" }).ClickAsync();
            await Expect(page.Locator("#def-name")).ToHaveValueAsync(name);
            await page.Locator("#maps textarea").FillAsync("map('Orders', o => ({ Company: o.Company, Freight: o.Freight }))");
            await page.Locator("#add-field").ClickAsync();
            await page.Locator("#fields .field-name").FillAsync("Company");
            await page.Locator("#fields select").First.SelectOptionAsync("Exact");
            await page.Locator("#save").ClickAsync();
            await Expect(page.Locator("#message")).ToContainTextAsync($"ReplacementOf/{name}");
            var replacement = page.Locator($"tr.replacement[data-replacement-of='{name}']");
            await Expect(replacement).ToBeVisibleAsync();
            await Expect(replacement.Locator(".replacement-progress")).ToHaveTextAsync("0 of 2,000 documents (0%)");
            Assert.Equal(["map('Orders', o => ({ Company: o.Company }))"], (await DefinitionAsync(db, name)).GetProperty("Maps").EnumerateArray().Select(m => m.GetString()));

            // Started again: the replacement catches up and takes the name.
            await PostAsync($"/databases/{db}/indexes/start");
            await Expect(replacement).ToHaveCountAsync(0, new() { Timeout = 60_000 });
            await Expect(row.Locator(".badge.swapped")).ToHaveTextAsync("new definition");
            await Expect(page.Locator("#message")).ToContainTextAsync("swapped in");
            var swapped = await DefinitionAsync(db, name);
            Assert.Equal(["map('Orders', o => ({ Company: o.Company, Freight: o.Freight }))"], swapped.GetProperty("Maps").EnumerateArray().Select(m => m.GetString()));
            Assert.Equal("Exact", swapped.GetProperty("Fields").GetProperty("Company").GetProperty("Indexing").GetString());
            var query = await StudioData.QueryAsync(Client, db, $"from index '{name}' where Freight > 200");
            Assert.True(query.GetProperty("TotalResults").GetInt64() > 0);
            await Expect(row.Locator("td").Nth(8)).Not.ToHaveTextAsync("never");
            watch.AssertClean();
        }
        finally
        {
            await page.CloseAsync();
        }
    }

    [Fact]
    public async Task TheListResetsDisablesEnablesLocksAndDeletesAnIndexAndShowsItsErrors()
    {
        const string name = "Orders/Broken";
        var db = await server.CreateDatabaseAsync();
        await StudioData.ImportOrdersAsync(Client, db, 200);
        await PutIndexAsync(db, name, "map('Orders', o => { if (id(o) === 'orders/7') { throw new Error('orders/7 is not welcome'); } return { Freight: o.Freight }; })");
        await StudioData.QueryAsync(Client, db, $"from index '{name}' where Freight > 0");
        var page = await browser.Browser.NewPageAsync(new() { ViewportSize = new() { Width = 1280, Height = 800 } });
        var watch = PageWatch.Attach(page, Origin);
        try
        {
            await page.GotoAsync($"{Origin}/studio/indexes?database={db}");
            var row = page.Locator($"tr[data-key='{name}']");
            await Expect(row.Locator("td").Nth(1)).ToHaveTextAsync("JavaScriptMap");
            await Expect(row.Locator("td").Nth(3)).ToHaveTextAsync("199");

            // One document failed to map: its error is listed.
            await row.Locator("td").Nth(5).GetByRole(AriaRole.Button).ClickAsync();
            await Expect(page.Locator("#errors")).ToBeVisibleAsync();
            await Expect(page.Locator("#errors-list tbody tr")).ToHaveCountAsync(1);
            await Expect(page.Locator("#errors-list")).ToContainTextAsync("orders/7 is not welcome");

            await row.GetByRole(AriaRole.Button, new() { Name = "Disable" }).ClickAsync();
            await Expect(row.Locator("td").Nth(2)).ToHaveTextAsync("Disabled");
            Assert.Equal("Disabled", (await StatsAsync(db, name)).GetProperty("State").GetString());
            await row.GetByRole(AriaRole.Button, new() { Name = "Enable" }).ClickAsync();
            await Expect(row.Locator("td").Nth(2)).ToHaveTextAsync("Normal");

            await row.GetByRole(AriaRole.Button, new() { Name = "Reset" }).ClickAsync();
            await Expect(page.Locator("#message")).ToContainTextAsync("rebuilt");
            await Expect(row.Locator("td").Nth(3)).ToHaveTextAsync("199");

            // As a person does: the select has the focus when its option is chosen.
            await row.Locator("select[aria-label^='Priority']").FocusAsync();
            await row.Locator("select[aria-label^='Priority']").SelectOptionAsync("High");
            await Expect(page.Locator("#message")).ToContainTextAsync("priority: High");
            Assert.Equal("High", (await StatsAsync(db, name)).GetProperty("Priority").GetString());
            // The list keeps refreshing after a choice: a lock set elsewhere shows up.
            using (var locked = await Client.PostAsync($"/databases/{db}/indexes/set-lock", Api.Json($$"""{"IndexNames":["{{name}}"],"Mode":"LockedIgnore"}""")))
            {
                Assert.Equal(HttpStatusCode.NoContent, locked.StatusCode);
            }
            await Expect(row.Locator("select[aria-label^='Lock mode']")).ToHaveValueAsync("LockedIgnore");

            // A LockedError index refuses deletion, and the page says why.
            await row.Locator("select[aria-label^='Lock mode']").SelectOptionAsync("LockedError");
            await Expect(page.Locator("#message")).ToContainTextAsync("lock: LockedError");
            Assert.Equal("LockedError", (await StatsAsync(db, name)).GetProperty("LockMode").GetString());
            await DeleteInPageAsync(page, row, name);
            await Expect(page.Locator("#message")).ToContainTextAsync("IndexLockedException");
            await Expect(row).ToBeVisibleAsync();

            await row.Locator("select[aria-label^='Lock mode']").SelectOptionAsync("Unlock");
            await Expect(page.Locator("#message")).ToContainTextAsync("lock: Unlock");
            await DeleteInPageAsync(page, row, name);
            await Expect(row).ToHaveCountAsync(0);
            using var gone = await Client.GetAsync($"/databases/{db}/indexes?name={Uri.EscapeDataString(name)}");
            Assert.Equal(HttpStatusCode.NotFound, gone.StatusCode);
            watch.Expect(409);
            watch.AssertClean();
        }
        finally
        {
            await page.CloseAsync();
        }
    }

    [Fact]
    public async Task TheCleanupAdvisorsMergeIsAppliedWithItsButton()
    {
        var db = await server.CreateDatabaseAsync();
        await StudioData.ImportOrdersAsync(Client, db, 100);
        await PutIndexAsync(db, "Orders/ByCompany", "map('Orders', o => ({ Company: o.Company }))");
        await PutIndexAsync(db, "Orders/ByFreight", "map('Orders', o => ({ Freight: o.Freight }))");
        var page = await browser.Browser.NewPageAsync(new() { ViewportSize = new() { Width = 1280, Height = 800 } });
        var watch = PageWatch.Attach(page, Origin);
        try
        {
            await page.GotoAsync($"{Origin}/studio/indexes?database={db}");
            var advice = page.Locator("#cleanup-list tbody tr");
            await Expect(advice).ToHaveCountAsync(1);
            await Expect(advice.Locator("td").First).ToHaveTextAsync("Mergeable");
            await Expect(page.Locator("tr[data-key='Orders/ByFreight'] [data-stale]")).ToHaveAttributeAsync("data-stale", "false");
            await watch.ScreenshotAsync("studio-indexes.png");

            await advice.Locator("button.apply").ClickAsync();
            var dialog = page.Locator("dialog.confirm");
            await dialog.Locator("input").FillAsync("merge");
            await dialog.GetByRole(AriaRole.Button, new() { Name = "Delete" }).ClickAsync();
            await Expect(page.Locator("#message")).ToContainTextAsync("Created 'Orders/ByCompany_And_Orders_ByFreight'");
            await Expect(page.Locator("#indexes tbody tr")).ToHaveCountAsync(1);
            await Expect(page.Locator("tr[data-key='Orders/ByCompany_And_Orders_ByFreight']")).ToBeVisibleAsync();
            await Expect(page.Locator("#cleanup-list")).ToContainTextAsync("No suggestions");

            using var names = await Client.GetAsync($"/databases/{db}/indexes?namesOnly=true");
            Assert.Equal(["Orders/ByCompany_And_Orders_ByFreight"], (await Api.JsonAsync(names)).GetProperty("Results").EnumerateArray().Select(n => n.GetString()));
            var merged = await StudioData.QueryAsync(Client, db, "from index 'Orders/ByCompany_And_Orders_ByFreight' where Freight > 0 and Company != null");
            Assert.True(merged.GetProperty("TotalResults").GetInt64() > 0);
            watch.AssertClean();
        }
        finally
        {
            await page.CloseAsync();
        }
    }

    [Fact]
    public async Task AMapReduceIndexSavedUnchangedKeepsItsOutputCollectionAndBuildsNoReplacement()
    {
        const string name = "Orders/CountByCompany";
        var db = await server.CreateDatabaseAsync();
        await StudioData.ImportOrdersAsync(Client, db, 100);
        var body = JsonSerializer.Serialize(new
        {
            Indexes = new[]
            {
                new
                {
                    Name = name,
                    Maps = new[] { "map('Orders', o => ({ Company: o.Company, Count: 1 }))" },
                    Reduce = "groupBy(r => r.Company).aggregate(g => ({ Company: g.key, Count: g.values.reduce((c, r) => c + r.Count, 0) }))",
                    OutputReduceToCollection = "CompanyOrderCounts",
                    PatternForOutputReduceToCollectionReferences = "counts/{Company}",
                },
            },
        });
        using (var put = await Client.PutAsync($"/databases/{db}/admin/indexes", Api.Json(body)))
        {
            Assert.Equal(HttpStatusCode.Created, put.StatusCode);
        }
        await StudioData.QueryAsync(Client, db, $"from index '{name}'");
        var page = await browser.Browser.NewPageAsync(new() { ViewportSize = new() { Width = 1280, Height = 800 } });
        var watch = PageWatch.Attach(page, Origin);
        try
        {
            await page.GotoAsync($"{Origin}/studio/indexes?database={db}");
            var row = page.Locator($"tr[data-key='{name}']");
            await Expect(row.Locator("[data-stale]")).ToHaveAttributeAsync("data-stale", "false");
            await row.GetByRole(AriaRole.Button, new() { Name = "Edit" }).ClickAsync();
            await Expect(page.Locator("#def-name")).ToHaveValueAsync(name);
            await page.Locator("#save").ClickAsync();
            await Expect(page.Locator("#message")).ToContainTextAsync("unchanged");

            using var names = await Client.GetAsync($"/databases/{db}/indexes?namesOnly=true");
            Assert.Equal([name], (await Api.JsonAsync(names)).GetProperty("Results").EnumerateArray().Select(n => n.GetString()));
            var definition = await DefinitionAsync(db, name);
            Assert.Equal("CompanyOrderCounts", definition.GetProperty("OutputReduceToCollection").GetString());
            Assert.Equal("counts/{Company}", definition.GetProperty("PatternForOutputReduceToCollectionReferences").GetString());
            await Expect(page.Locator("tr.replacement")).ToHaveCountAsync(0);
            watch.AssertClean();
        }
        finally
        {
            await page.CloseAsync();
        }
    }

    [Fact]
    public async Task AReplacementDroppedByPuttingTheOldDefinitionBackIsNotAnnouncedAsASwap()
    {
        const string name = "Orders/ByCompany";
        const string map = "map('Orders', o => ({ Company: o.Company }))";
        var db = await server.CreateDatabaseAsync();
        await StudioData.ImportOrdersAsync(Client, db, 100);
        await PutIndexAsync(db, name, map);
        await StudioData.QueryAsync(Client, db, $"from index '{name}'");
        await PostAsync($"/databases/{db}/indexes/stop");
        // One order for the index, two companies it does not read: the database-wide count is an upper bound.
        await StudioData.PutAsync(Client, db, "orders/new", """{"Company":"companies/1","@metadata":{"@collection":"Orders"}}""");
        await StudioData.PutAsync(Client, db, "companies/a", """{"Name":"A","@metadata":{"@collection":"Companies"}}""");
        await StudioData.PutAsync(Client, db, "companies/b", """{"Name":"B","@metadata":{"@collection":"Companies"}}""");
        var page = await browser.Browser.NewPageAsync(new() { ViewportSize = new() { Width = 1280, Height = 800 } });
        var watch = PageWatch.Attach(page, Origin);
        try
        {
            await page.GotoAsync($"{Origin}/studio/indexes?database={db}");
            var row = page.Locator($"tr[data-key='{name}']");
            await Expect(row.Locator("[data-stale]")).ToHaveAttributeAsync("data-stale", "true");
            await Expect(row.Locator(".behind")).ToHaveTextAsync(" behind by up to 3 changes");
            await Expect(row.Locator("td").Nth(4).Locator("[title]")).ToHaveAttributeAsync("title", new System.Text.RegularExpressions.Regex("documents of 'orders' still to index"));

            await PutIndexAsync(db, name, "map('Orders', o => ({ Company: o.Company, Freight: o.Freight }))");
            var replacement = page.Locator($"tr.replacement[data-replacement-of='{name}']");
            await Expect(replacement).ToBeVisibleAsync();
            // Back to the old definition: the server drops the replacement; nothing swapped in.
            await PutIndexAsync(db, name, map);
            await Expect(replacement).ToHaveCountAsync(0);
            await Expect(page.Locator("#message")).ToContainTextAsync("no longer building");
            await Expect(page.Locator("#message")).Not.ToContainTextAsync("swapped in");
            await Expect(row.Locator(".badge.swapped")).ToHaveCountAsync(0);
            await PostAsync($"/databases/{db}/indexes/start");
            watch.AssertClean();
        }
        finally
        {
            await page.CloseAsync();
        }
    }

    private static async Task DeleteInPageAsync(IPage page, ILocator row, string name)
    {
        await row.GetByRole(AriaRole.Button, new() { Name = "Delete" }).ClickAsync();
        var dialog = page.Locator("dialog.confirm");
        var ok = dialog.GetByRole(AriaRole.Button, new() { Name = "Delete" });
        await dialog.Locator("input").FillAsync(name[..^1]);
        await Expect(ok).ToBeDisabledAsync();
        await dialog.Locator("input").FillAsync(name);
        await ok.ClickAsync();
    }

    private async Task PostAsync(string path)
    {
        using var response = await Client.PostAsync(path, null);
        Assert.Equal(HttpStatusCode.NoContent, response.StatusCode);
    }

    private async Task PutIndexAsync(string db, string name, string map)
    {
        var body = JsonSerializer.Serialize(new { Indexes = new[] { new { Name = name, Maps = new[] { map } } } });
        using var response = await Client.PutAsync($"/databases/{db}/admin/indexes", Api.Json(body));
        Assert.Equal(HttpStatusCode.Created, response.StatusCode);
    }

    private async Task<JsonElement> DefinitionAsync(string db, string name)
    {
        using var response = await Client.GetAsync($"/databases/{db}/indexes?name={Uri.EscapeDataString(name)}");
        return (await Api.JsonAsync(response)).GetProperty("Results")[0];
    }

    private async Task<JsonElement> StatsAsync(string db, string name)
    {
        using var response = await Client.GetAsync($"/databases/{db}/indexes/stats?name={Uri.EscapeDataString(name)}");
        return (await Api.JsonAsync(response)).GetProperty("Results")[0];
    }
}
