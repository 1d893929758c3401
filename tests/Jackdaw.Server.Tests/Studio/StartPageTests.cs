using System.Net;
using Jackdaw.Server.Tests.Infrastructure;
using Microsoft.Playwright;
using static Microsoft.Playwright.Assertions;

namespace Jackdaw.Server.Tests.Studio;

/// <summary>The server's address in a browser: <c>/</c> leads to the studio's start page, the Databases page, which lists the databases and their pages (DatabasesPageTests drives it further).</summary>
public sealed class StartPageTests(ServerFixture server, BrowserFixture browser)
    : IClassFixture<ServerFixture>, IClassFixture<BrowserFixture>
{
    private HttpClient Client => server.Client;

    private string Origin => Client.BaseAddress!.GetLeftPart(UriPartial.Authority);

    [Fact]
    public async Task TheRootRedirectsToTheStudioWhoseStartPageLoadsNothingFromOutside()
    {
        using var handler = new HttpClientHandler { AllowAutoRedirect = false };
        using var plain = new HttpClient(handler) { BaseAddress = Client.BaseAddress };
        using var root = await plain.GetAsync("/");
        Assert.Equal(HttpStatusCode.Found, root.StatusCode);
        Assert.Equal("/studio/", root.Headers.Location!.OriginalString);

        foreach (var path in new[] { "/studio/", "/studio" })
        {
            using var response = await plain.GetAsync(path);
            Assert.Equal(HttpStatusCode.OK, response.StatusCode);
            Assert.Equal("text/html", response.Content.Headers.ContentType?.MediaType);
            Assert.Contains("default-src 'none'", response.Headers.GetValues("Content-Security-Policy").Single(), StringComparison.Ordinal);
            var html = await response.Content.ReadAsStringAsync();
            Assert.DoesNotMatch(@"<(iframe|object|embed|img)\b", html);
            Assert.Contains(@"<script src=""/studio/studio.js"" defer></script>", html, StringComparison.Ordinal);
            Assert.DoesNotMatch(@"https?://", html);
        }
    }

    [Fact]
    public async Task TheStartPageListsEachDatabaseWithItsCountsAndALinkToItsTimeline()
    {
        var db = await server.CreateDatabaseAsync();
        for (var i = 1; i <= 3; i++)
        {
            Assert.Equal(HttpStatusCode.Created, (await Client.PutAsync($"/databases/{db}/docs?id=users/{i}", Api.Json("""{"@metadata":{"@collection":"Users"}}"""))).StatusCode);
        }

        var page = await browser.Browser.NewPageAsync();
        try
        {
            await page.GotoAsync(Origin + "/");
            Assert.EndsWith("/studio/", page.Url, StringComparison.Ordinal);
            var row = page.Locator($"tr[data-database='{db}']");
            await Expect(row).ToBeVisibleAsync();
            await Expect(row.Locator(".documents")).ToHaveTextAsync("3");
            await Expect(row.Locator(".indexes")).ToHaveTextAsync("none");
            await Expect(page.Locator("h1")).ToHaveTextAsync("Databases");
            await row.Locator("a.timeline").ClickAsync();
            await page.WaitForURLAsync($"**/studio/indexing-performance?database={db}");
            await Expect(page.Locator("h1")).ToContainTextAsync("Indexing performance");
        }
        finally
        {
            await page.CloseAsync();
        }
    }
}
