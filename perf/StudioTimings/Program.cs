using System.Diagnostics;
using System.Globalization;
using Microsoft.Playwright;

// Each studio page opened in a fresh browser context (no cache), RUNS times: the time from the
// navigation's start to the end of the last request of the first view, where the first view ends
// at the first 500 ms with no request in flight (a page's periodic refresh, every 2 s, and its
// WebSockets are not part of it). Prints one Markdown row per page: first run, median, max.
//
//   dotnet run -c Release --project perf/StudioTimings -- URL DATABASE DOCUMENT-ID [RUNS]
if (args.Length < 3)
{
    Console.Error.WriteLine("usage: StudioTimings URL DATABASE DOCUMENT-ID [RUNS]");
    return 2;
}
var origin = args[0].TrimEnd('/');
var database = Uri.EscapeDataString(args[1]);
var documentId = Uri.EscapeDataString(args[2]);
var runs = args.Length > 3 ? int.Parse(args[3], CultureInfo.InvariantCulture) : 5;

(string Name, string Path)[] pages =
[
    ("Databases", "/studio/"),
    ("Documents", $"/studio/documents?database={database}"),
    ("Document", $"/studio/document?database={database}&id={documentId}"),
    ("Query", $"/studio/query?database={database}"),
    ("Indexes", $"/studio/indexes?database={database}"),
    ("Patch", $"/studio/patch?database={database}"),
    ("Subscriptions", $"/studio/subscriptions?database={database}"),
    ("Backups", $"/studio/backups?database={database}"),
    ("Certificates", $"/studio/certificates?database={database}"),
    ("Traffic", $"/studio/traffic?database={database}"),
    ("Indexing performance", $"/studio/indexing-performance?database={database}"),
];

using var playwright = await Playwright.CreateAsync();
await using var browser = await playwright.Chromium.LaunchAsync(new() { ExecutablePath = "/usr/bin/chromium", Headless = true });
Console.WriteLine($"| page | requests | first view, first run (ms) | median of {runs} (ms) | max (ms) |");
Console.WriteLine("|---|---|---|---|---|");
foreach (var (name, path) in pages)
{
    var times = new List<double>();
    var requests = 0;
    for (var run = 0; run < runs; run++)
    {
        var (elapsed, count) = await FirstViewAsync(browser, origin + path);
        times.Add(elapsed);
        requests = count;
    }
    var sorted = times.Order().ToList();
    Console.WriteLine(string.Create(CultureInfo.InvariantCulture, $"| {name} | {requests} | {times[0]:0} | {sorted[sorted.Count / 2]:0} | {sorted[^1]:0} |"));
}
return 0;

static async Task<(double Milliseconds, int Requests)> FirstViewAsync(IBrowser browser, string url)
{
    await using var context = await browser.NewContextAsync(new() { ViewportSize = new() { Width = 1280, Height = 800 } });
    var page = await context.NewPageAsync();
    var clock = Stopwatch.StartNew();
    var inFlight = 0;
    var count = 0;
    var lastEnd = 0.0;
    var quietSince = 0.0;
    var gate = new object();
    void Started(object? sender, IRequest request)
    {
        lock (gate)
        {
            inFlight++;
            count++;
        }
    }
    void Ended(object? sender, IRequest request)
    {
        lock (gate)
        {
            inFlight--;
            lastEnd = clock.Elapsed.TotalMilliseconds;
            quietSince = lastEnd;
        }
    }
    page.Request += Started;
    page.RequestFinished += Ended;
    page.RequestFailed += Ended;
    await page.GotoAsync(url, new() { WaitUntil = WaitUntilState.Load });
    while (true)
    {
        await Task.Delay(25);
        lock (gate)
        {
            var now = clock.Elapsed.TotalMilliseconds;
            if (inFlight == 0 && now - quietSince >= 500)
            {
                return (lastEnd, count);
            }
            if (now > 30_000)
            {
                throw new TimeoutException($"{url}: requests still in flight after 30 s");
            }
        }
    }
}
