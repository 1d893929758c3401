using System.Text.RegularExpressions;
using Microsoft.Playwright;

namespace Jackdaw.Server.Tests.Studio;

/// <summary>
/// What a studio page did besides what the test looked at: its console errors, uncaught exceptions
/// and every request it made, so that a test can require none went to another origin. A failed
/// request shows in Chromium's console as an error too; a test names the statuses it provokes.
/// </summary>
internal sealed class DocumentPageWatch
{
    private readonly List<string> _errors = [];
    private readonly List<string> _requests = [];
    private readonly HashSet<int> _expectedStatuses = [];

    public DocumentPageWatch(IPage page)
    {
        page.Console += (_, message) =>
        {
            if (message.Type == "error")
            {
                lock (_errors)
                {
                    _errors.Add(message.Text + " (" + message.Location + ")");
                }
            }
        };
        page.PageError += (_, error) =>
        {
            lock (_errors)
            {
                _errors.Add("uncaught: " + error);
            }
        };
        page.Request += (_, request) =>
        {
            lock (_requests)
            {
                _requests.Add(request.Method + " " + request.Url);
            }
        };
    }

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

    /// <summary>A status the test provokes on purpose (a 409 conflict): its console line is no error of the page.</summary>
    public void Expect(int status) => _expectedStatuses.Add(status);

    public void AssertClean(string origin)
    {
        List<string> errors;
        lock (_errors)
        {
            errors = _errors.Where(e => !IsExpected(e)).ToList();
        }
        Assert.True(errors.Count == 0, "Console errors: " + string.Join(" | ", errors));
        var prefix = new Regex("^[A-Z]+ " + Regex.Escape(origin) + "/");
        Assert.All(Requests, request => Assert.Matches(prefix, request));
    }

    private bool IsExpected(string error)
    {
        // The browser asks for /favicon.ico on its own; the studio has none, and no page asked.
        if (error.Contains("/favicon.ico:", StringComparison.Ordinal))
        {
            return true;
        }
        var match = Regex.Match(error, @"^Failed to load resource: the server responded with a status of (\d+)");
        return match.Success && _expectedStatuses.Contains(int.Parse(match.Groups[1].Value, System.Globalization.CultureInfo.InvariantCulture));
    }
}
