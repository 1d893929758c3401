using System.Text.RegularExpressions;
using Microsoft.Playwright;

namespace Jackdaw.Server.Tests.Studio;

/// <summary>
/// What a studio page did while a test drove it: every request and WebSocket it opened and every
/// console error. <see cref="AssertClean"/> holds it to the studio's rules: nothing off its own
/// origin, and no console error but the browser's own line for a 4xx answer the test expected.
/// </summary>
internal sealed partial class PageWatch
{
    private readonly string _origin;
    private readonly List<string> _requests = [];
    private readonly List<string> _consoleErrors = [];

    private PageWatch(IPage page, string origin)
    {
        _origin = origin.TrimEnd('/');
        page.Request += (_, request) => Add(_requests, request.Url);
        page.WebSocket += (_, socket) => Add(_requests, socket.Url);
        page.Console += (_, message) =>
        {
            if (message.Type == "error")
            {
                Add(_consoleErrors, message.Text);
            }
        };
        page.PageError += (_, error) => Add(_consoleErrors, "page error: " + error);
    }

    public static PageWatch Attach(IPage page, string origin) => new(page, origin);

    /// <summary>The requests made so far (URLs).</summary>
    public IReadOnlyList<string> Requests
    {
        get
        {
            lock (_requests)
            {
                return [.. _requests];
            }
        }
    }

    public void AssertClean()
    {
        var authority = new Uri(_origin).Authority;
        Assert.All(Requests, url => Assert.Matches($"^(https?|wss?)://{Regex.Escape(authority)}/", url));
        lock (_consoleErrors)
        {
            Assert.All(_consoleErrors, text => Assert.Matches(ExpectedResourceError(), text));
        }
    }

    /// <summary>
    /// With JACKDAW_SCREENSHOTS=1, the page at 1280×800 into docs/images/<paramref name="fileName"/>;
    /// otherwise nothing (tests do not write into the repository).
    /// </summary>
    public static async Task ScreenshotAsync(IPage page, string fileName)
    {
        if (Environment.GetEnvironmentVariable("JACKDAW_SCREENSHOTS") != "1")
        {
            return;
        }
        var path = Path.Combine(RepositoryRoot(), "docs", "images", fileName);
        Directory.CreateDirectory(Path.GetDirectoryName(path)!);
        await page.EvaluateAsync("() => window.scrollTo(0, 0)");
        await page.ScreenshotAsync(new() { Path = path });
        Assert.True(new FileInfo(path).Length > 10_000, "The screenshot is almost empty.");
    }

    private static void Add(List<string> list, string text)
    {
        lock (list)
        {
            list.Add(text);
        }
    }

    private static string RepositoryRoot()
    {
        for (var dir = new DirectoryInfo(AppContext.BaseDirectory); dir is not null; dir = dir.Parent)
        {
            if (File.Exists(Path.Combine(dir.FullName, "Server.sln")))
            {
                return dir.FullName;
            }
        }
        throw new InvalidOperationException($"No Server.sln above {AppContext.BaseDirectory}.");
    }

    // Chromium logs each non-2xx fetch as "Failed to load resource: the server responded with a
    // status of 400 (Bad Request)": the pages show those answers themselves.
    [GeneratedRegex(@"^Failed to load resource: the server responded with a status of 4\d\d\b")]
    private static partial Regex ExpectedResourceError();
}
