using System.Globalization;
using System.Text.RegularExpressions;
using Jackdaw.Server.Tests.Readme;
using Microsoft.Playwright;

namespace Jackdaw.Server.Tests.Studio;

/// <summary>
/// What a studio page did while a test drove it: every request (as "METHOD url") and WebSocket
/// ("WEBSOCKET url") it opened, its console errors and uncaught exceptions. <see cref="AssertClean"/>
/// holds it to the studio's rules: it reached its server, nothing off that origin, and no console
/// error but the browser's own line for a 4xx or 5xx answer the test said it provokes.
/// </summary>
internal sealed partial class PageWatch
{
    private readonly string _origin;
    private readonly string _socketOrigin;
    private readonly List<string> _requests = [];
    private readonly List<string> _errors = [];
    private readonly HashSet<int> _expectedStatuses = [];

    private PageWatch(IPage page, string origin)
    {
        Page = page;
        _origin = new Uri(origin).GetLeftPart(UriPartial.Authority);
        _socketOrigin = "ws" + _origin[4..];
        page.Request += (_, request) => Add(_requests, request.Method + " " + request.Url);
        page.WebSocket += (_, socket) => Add(_requests, "WEBSOCKET " + socket.Url);
        page.Console += (_, message) =>
        {
            if (message.Type == "error")
            {
                Add(_errors, message.Text + " (" + message.Location + ")");
            }
        };
        page.PageError += (_, error) => Add(_errors, "uncaught: " + error);
    }

    /// <summary>Starts watching <paramref name="page"/>, which may reach only <paramref name="origin"/>.</summary>
    public static PageWatch Attach(IPage page, string origin) => new(page, origin);

    public IPage Page { get; }

    /// <summary>The requests made so far: "GET http://…", "POST http://…", "WEBSOCKET ws://…".</summary>
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

    /// <summary>Statuses the test provokes on purpose (a 409 conflict): their console lines are no error of the page.</summary>
    public void Expect(params int[] statuses)
    {
        lock (_expectedStatuses)
        {
            _expectedStatuses.UnionWith(statuses);
        }
    }

    public void AssertClean()
    {
        List<string> errors;
        lock (_errors)
        {
            errors = _errors.Where(e => !IsExpected(e)).ToList();
        }
        Assert.True(errors.Count == 0, "Console errors: " + string.Join(" | ", errors));
        var requests = Requests;
        Assert.NotEmpty(requests);
        var allowed = new Regex($"^([A-Z]+ {Regex.Escape(_origin)}|WEBSOCKET {Regex.Escape(_socketOrigin)})/");
        Assert.All(requests, request => Assert.Matches(allowed, request));
    }

    /// <summary>
    /// With JACKDAW_SCREENSHOTS=1, the page scrolled to its top into docs/images/<paramref name="fileName"/>;
    /// otherwise nothing (tests do not write into the repository).
    /// </summary>
    public async Task ScreenshotAsync(string fileName)
    {
        if (Environment.GetEnvironmentVariable("JACKDAW_SCREENSHOTS") != "1")
        {
            return;
        }
        var path = Path.Combine(ReadmeDocument.RepositoryRoot, "docs", "images", fileName);
        Directory.CreateDirectory(Path.GetDirectoryName(path)!);
        await Page.EvaluateAsync("() => window.scrollTo(0, 0)");
        await Page.ScreenshotAsync(new() { Path = path });
        Assert.True(new FileInfo(path).Length > 10_000, "The screenshot is almost empty.");
    }

    private bool IsExpected(string error)
    {
        var match = FailedResource().Match(error);
        if (!match.Success)
        {
            return false;
        }
        lock (_expectedStatuses)
        {
            return _expectedStatuses.Contains(int.Parse(match.Groups[1].Value, CultureInfo.InvariantCulture));
        }
    }

    private static void Add(List<string> list, string text)
    {
        lock (list)
        {
            list.Add(text);
        }
    }

    // Chromium logs each non-2xx fetch as "Failed to load resource: the server responded with a
    // status of 409 (Conflict)": the pages show those answers themselves.
    [GeneratedRegex(@"^Failed to load resource: the server responded with a status of (\d{3})\b")]
    private static partial Regex FailedResource();
}
