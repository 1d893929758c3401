using Jackdaw.Server.Tests.Infrastructure;
using Microsoft.Playwright;

namespace Jackdaw.Server.Tests.Studio;

/// <summary>Debian's Chromium, headless, driven by Playwright; installed first when the machine has none.</summary>
public sealed class BrowserFixture : IAsyncLifetime
{
    private IPlaywright? _playwright;
    private IBrowser? _browser;

    public IBrowser Browser => _browser ?? throw new InvalidOperationException("The browser has not started.");

    public async Task InitializeAsync()
    {
        await Chromium.EnsureInstalledAsync();
        // The default 5 s is short for a page waiting on indexing while the rest of the suite runs beside it.
        Assertions.SetDefaultExpectTimeout(20_000);
        _playwright = await Playwright.CreateAsync();
        _browser = await _playwright.Chromium.LaunchAsync(new() { ExecutablePath = Chromium.ExecutablePath, Headless = true });
    }

    public async Task DisposeAsync()
    {
        if (_browser is not null)
        {
            await _browser.DisposeAsync();
        }
        _playwright?.Dispose();
    }
}
