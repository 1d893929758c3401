using System.IO.Compression;
using System.Net;
using System.Net.Security;
using System.Net.Sockets;
using System.Security.Cryptography.X509Certificates;
using Jackdaw.Server.Security;
using Jackdaw.Server.Tests.Infrastructure;
using Microsoft.Playwright;
using static Microsoft.Playwright.Assertions;

namespace Jackdaw.Server.Tests.Studio;

/// <summary>
/// The certificates page (<c>/studio/certificates</c>) in headless Chromium presenting a client
/// certificate (Playwright's <c>ClientCertificates</c>) to a secured server: a ClusterAdmin sees
/// the server certificate's expiry and manages the registered certificates; an Operator and a
/// ValidUser meet the server's refusals; an unsecured server's message says how to secure it.
/// </summary>
public sealed class CertificatesPageTests(ServerFixture unsecured, BrowserFixture browser)
    : IClassFixture<ServerFixture>, IClassFixture<BrowserFixture>, IAsyncLifetime
{
    private readonly TempFolder _folder = new("jackdaw-studio-certificates");
    private SecuredServer? _server;

    private SecuredServer Server => _server ?? throw new InvalidOperationException("The server has not started.");

    public async Task InitializeAsync() => _server = await SecuredServer.StartAsync();

    public async Task DisposeAsync()
    {
        if (_server is not null)
        {
            await _server.DisposeAsync();
        }
        _folder.Dispose();
    }

    /// <summary>A browser context presenting <paramref name="certificate"/> to the secured server.</summary>
    private async Task<IBrowserContext> ContextAsync(X509Certificate2 certificate)
    {
        var pfx = TestCertificates.WritePfx(certificate, Path.Combine(_folder.Path, Guid.NewGuid().ToString("N") + ".pfx"), "browser");
        return await browser.Browser.NewContextAsync(new()
        {
            ViewportSize = new() { Width = 1280, Height = 800 },
            IgnoreHTTPSErrors = true,
            AcceptDownloads = true,
            ClientCertificates = [new() { Origin = Server.Url, PfxPath = pfx, Passphrase = "browser" }],
        });
    }

    private X509Certificate2 Registered(string name, SecurityClearance clearance)
    {
        var certificate = TestCertificates.Client(name);
        Server.Register(certificate, clearance);
        return certificate;
    }

    [Fact]
    public async Task AClusterAdminSeesTheExpiryAndRegistersGeneratesEditsAndDeletesCertificates()
    {
        using var admin = Registered("browser-admin", SecurityClearance.ClusterAdmin);
        await using var context = await ContextAsync(admin);
        var page = await context.NewPageAsync();
        var watch = PageWatch.Attach(page, Server.Url);

        await page.GotoAsync(Server.Url + "/studio/certificates");
        await Expect(page.Locator("#page")).ToHaveAttributeAsync("data-state", "ready");
        await Expect(page.Locator("#whoami")).ToContainTextAsync("browser-admin (ClusterAdmin)");

        // The server certificate's expiry, as the API tells it.
        using (var response = await Server.Admin.GetAsync("/admin/certificates/server"))
        {
            var server = await Api.JsonAsync(response);
            await Expect(page.Locator("#not-after")).ToHaveAttributeAsync("title", server.GetProperty("NotAfter").GetString()!);
            await Expect(page.Locator("#expiry")).ToHaveTextAsync($"{(int)Math.Floor(server.GetProperty("DaysLeft").GetDouble())} days left");
            await Expect(page.Locator("#server-certificate")).ToContainTextAsync(server.GetProperty("Thumbprint").GetString()!);
        }
        await Expect(page.Locator($"tr[data-key='{admin.Thumbprint}'] td.clearance")).ToHaveTextAsync("ClusterAdmin");

        // Register a certificate's public part, pasted as PEM, for one database.
        using var registered = TestCertificates.Client("reporting");
        await page.FillAsync("#register-name", "reporting");
        await page.FillAsync("#register-certificate", registered.ExportCertificatePem());
        await page.ClickAsync("#register-section button.add-permission");
        await page.FillAsync("#register-section .permission input", "Northwind");
        await page.SelectOptionAsync("#register-section .permission select", "ReadWrite");
        await page.ClickAsync("#register-run");
        await Expect(page.Locator("#message.ok")).ToContainTextAsync("'reporting' registered");
        var row = page.Locator($"tr[data-key='{registered.Thumbprint}']");
        await Expect(row.Locator("td.clearance")).ToHaveTextAsync("ValidUser");
        await Expect(row.Locator("td.databases")).ToHaveTextAsync("Northwind: ReadWrite");
        var stored = Server.Security.Store.Get(registered.Thumbprint)!;
        Assert.Equal(SecurityClearance.ValidUser, stored.Clearance);
        Assert.Equal(DatabaseAccess.ReadWrite, stored.Permissions["Northwind"]);

        // Edit it into an Operator.
        await row.Locator("button[data-action='edit']").ClickAsync();
        await Expect(page.Locator("#edit-name")).ToHaveValueAsync("reporting");
        await page.SelectOptionAsync("#edit-clearance", "Operator");
        await page.ClickAsync("#edit-save");
        await Expect(row.Locator("td.clearance")).ToHaveTextAsync("Operator");
        Assert.Equal(SecurityClearance.Operator, Server.Security.Store.Get(registered.Thumbprint)!.Clearance);

        // Generate one: the zip is downloaded and the certificate registered.
        await page.FillAsync("#generate-name", "generated-one");
        await page.FillAsync("#generate-password", "zip-Pa55word");
        var download = await page.RunAndWaitForDownloadAsync(() => page.ClickAsync("#generate-run"));
        Assert.Equal("generated-one.zip", download.SuggestedFilename);
        var zipPath = Path.Combine(_folder.Path, "generated-one.zip");
        await download.SaveAsAsync(zipPath);
        using (var zip = ZipFile.OpenRead(zipPath))
        {
            Assert.Equal(["generated-one.crt", "generated-one.key", "generated-one.pfx"], zip.Entries.Select(e => e.FullName).Order());
        }
        var generated = page.Locator("tr", new() { Has = page.Locator("td.name", new() { HasTextString = "generated-one" }) });
        await Expect(generated.Locator("td.clearance")).ToHaveTextAsync("ValidUser");
        // The API bar shows the call, but not the password.
        await Expect(page.Locator("#api-bar")).ToContainTextAsync("\"Password\":\"***\"");
        await Expect(page.Locator("#api-bar")).Not.ToContainTextAsync("zip-Pa55word");

        await watch.ScreenshotAsync("studio-certificates.png");

        // Delete it (typed confirmation).
        var thumbprint = await generated.GetAttributeAsync("data-key");
        await generated.Locator("button[data-action='delete']").ClickAsync();
        await page.Locator("dialog.confirm input").FillAsync("generated-one");
        await page.Locator("dialog.confirm button.danger").ClickAsync();
        await Expect(page.Locator("#message.ok")).ToContainTextAsync("'generated-one' deleted");
        await Expect(generated).ToHaveCountAsync(0);
        Assert.Null(Server.Security.Store.Get(thumbprint!));

        watch.AssertClean();
    }

    [Fact]
    public async Task AClusterAdminReplacesTheServerCertificateWithAPfxAndAWrongPasswordIsRefused()
    {
        using var admin = Registered("browser-admin", SecurityClearance.ClusterAdmin);
        using var next = TestCertificates.Server("jackdaw-next");
        var pfx = TestCertificates.WritePfx(next, Path.Combine(_folder.Path, "next.pfx"), "next-Pa55");
        using var client = Server.Client(admin, newConnectionPerRequest: true);

        // The wrong password: the server's words, and the server keeps its certificate.
        string refusal;
        using (var wrong = await client.PostAsync("/admin/certificates/replace-cluster-cert",
            Api.Json($$"""{"Certificate":"{{Convert.ToBase64String(await File.ReadAllBytesAsync(pfx))}}","Password":"wrong"}""")))
        {
            refusal = await Api.AssertErrorAsync(wrong, HttpStatusCode.BadRequest, "BadRequestException");
        }

        await using var context = await ContextAsync(admin);
        var page = await context.NewPageAsync();
        var watch = PageWatch.Attach(page, Server.Url);
        watch.Expect(400);
        await page.GotoAsync(Server.Url + "/studio/certificates");
        await Expect(page.Locator("#page")).ToHaveAttributeAsync("data-state", "ready");
        await Expect(page.Locator("#server-certificate")).ToContainTextAsync(Server.ServerCertificate.Thumbprint);

        await page.ClickAsync("#replace-open");
        await page.Locator("#replace-file").SetInputFilesAsync(pfx);
        await page.FillAsync("#replace-password", "wrong");
        await page.ClickAsync("#replace-run");
        await Expect(page.Locator("#message.error")).ToContainTextAsync(refusal);
        await Expect(page.Locator("#message.error")).ToContainTextAsync("(HTTP 400)");
        await Expect(page.Locator("#replace-form")).ToBeVisibleAsync();
        Assert.Equal(Server.ServerCertificate.Thumbprint, await ServerThumbprintAsync(client));
        Assert.Equal(0, Server.Security.Certificate.Replacements);

        // The right one: replaced, and the page shows the new certificate.
        await page.FillAsync("#replace-password", "next-Pa55");
        await page.ClickAsync("#replace-run");
        await Expect(page.Locator("#message.ok")).ToContainTextAsync("The server certificate was replaced");
        await Expect(page.Locator("#replace-form")).ToBeHiddenAsync();
        await Expect(page.Locator("#server-certificate")).ToContainTextAsync(next.Thumbprint);
        await Expect(page.Locator("#server-certificate")).ToContainTextAsync("1 time since the server started");
        // The API bar shows the call, but not the password.
        await Expect(page.Locator("#api-bar")).ToContainTextAsync("replace-cluster-cert");
        await Expect(page.Locator("#api-bar")).Not.ToContainTextAsync("next-Pa55");

        // The API and a new TLS handshake both say the server presents the new certificate.
        Assert.Equal(next.Thumbprint, await ServerThumbprintAsync(client));
        Assert.Equal(next.Thumbprint, await TestCertificates.PresentedThumbprintAsync(Server.Url));
        Assert.Equal(1, Server.Security.Certificate.Replacements);
        watch.AssertClean();
    }

    private static async Task<string> ServerThumbprintAsync(HttpClient client)
    {
        using var response = await client.GetAsync("/admin/certificates/server");
        Assert.Equal(HttpStatusCode.OK, response.StatusCode);
        return (await Api.JsonAsync(response)).GetProperty("Thumbprint").GetString()!;
    }


    [Fact]
    public async Task AValidUserSeesTheServersRefusal()
    {
        using var user = Registered("browser-user", SecurityClearance.ValidUser);
        using var client = Server.Client(user);
        using var refused = await client.GetAsync("/admin/certificates/server");
        var message = await Api.AssertErrorAsync(refused, HttpStatusCode.Forbidden, "AuthorizationException");

        await using var context = await ContextAsync(user);
        var page = await context.NewPageAsync();
        var watch = PageWatch.Attach(page, Server.Url);
        watch.Expect(403);
        await page.GotoAsync(Server.Url + "/studio/certificates");
        await Expect(page.Locator("#page")).ToHaveAttributeAsync("data-state", "refused");
        await Expect(page.Locator("#message.error")).ToContainTextAsync(message);
        await Expect(page.Locator("#whoami")).ToContainTextAsync("browser-user (ValidUser)");
        await Expect(page.Locator("#content")).ToBeHiddenAsync();
        watch.AssertClean();
    }

    [Fact]
    public async Task AnOperatorMayNotGrantClusterAdminAndIsToldSo()
    {
        using var operatorCertificate = Registered("browser-operator", SecurityClearance.Operator);
        await using var context = await ContextAsync(operatorCertificate);
        var page = await context.NewPageAsync();
        var watch = PageWatch.Attach(page, Server.Url);
        watch.Expect(403);
        await page.GotoAsync(Server.Url + "/studio/certificates");
        await Expect(page.Locator("#page")).ToHaveAttributeAsync("data-state", "ready");

        await page.FillAsync("#generate-name", "too-strong");
        await page.SelectOptionAsync("#generate-clearance", "ClusterAdmin");
        await page.ClickAsync("#generate-run");
        await Expect(page.Locator("#message.error")).ToContainTextAsync("AuthorizationException");
        await Expect(page.Locator("#message.error")).ToContainTextAsync("Only a ClusterAdmin can. (HTTP 403)");
        Assert.DoesNotContain(Server.Security.Store.All, d => d.Name == "too-strong");
        watch.AssertClean();
    }

    [Fact]
    public async Task AnUnsecuredServerSaysHowToSecureIt()
    {
        var origin = unsecured.Client.BaseAddress!.GetLeftPart(UriPartial.Authority);
        using var response = await unsecured.Client.GetAsync("/certificates/whoami");
        var message = await Api.AssertErrorAsync(response, HttpStatusCode.BadRequest, "BadRequestException");

        var page = await browser.Browser.NewPageAsync();
        var watch = PageWatch.Attach(page, origin);
        watch.Expect(400);
        try
        {
            await page.GotoAsync(origin + "/studio/certificates");
            await Expect(page.Locator("#page")).ToHaveAttributeAsync("data-state", "unsecured");
            await Expect(page.Locator("#message")).ToHaveTextAsync(message);
            await Expect(page.Locator("#content")).ToBeHiddenAsync();
            watch.AssertClean();
        }
        finally
        {
            await page.CloseAsync();
        }
    }
}
