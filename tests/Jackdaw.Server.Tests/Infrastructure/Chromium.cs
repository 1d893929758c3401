using System.Diagnostics;

namespace Jackdaw.Server.Tests.Infrastructure;

/// <summary>
/// Debian's Chromium for browser tests. A fresh CI machine has none, so the first test that needs
/// it installs the package with apt-get (as root; about 35 s and 155 MB here). Playwright drives it
/// through its own node driver, which ships in the NuGet package: nothing else is downloaded.
/// </summary>
internal static class Chromium
{
    public const string ExecutablePath = "/usr/bin/chromium";

    private static readonly TimeSpan UpdateTimeout = TimeSpan.FromMinutes(5);
    private static readonly TimeSpan InstallTimeout = TimeSpan.FromMinutes(10);
    private static readonly Lazy<Task> Installation = new(InstallAsync);

    /// <summary>Returns once <see cref="ExecutablePath"/> exists; fails, saying why, if it cannot be installed.</summary>
    public static Task EnsureInstalledAsync() => File.Exists(ExecutablePath) ? Task.CompletedTask : Installation.Value;

    private static async Task InstallAsync()
    {
        const string fix = "Install it by hand (apt-get install chromium) or run the tests as root on Debian, where they install it.";
        if (!OperatingSystem.IsLinux() || !File.Exists("/usr/bin/apt-get"))
        {
            throw new InvalidOperationException($"Chromium is missing ({ExecutablePath}) and this machine has no apt-get to install it. {fix}");
        }
        await RunAsync(["update"], UpdateTimeout, fix).ConfigureAwait(false);
        await RunAsync(["install", "-y", "--quiet", "chromium"], InstallTimeout, fix).ConfigureAwait(false);
        if (!File.Exists(ExecutablePath))
        {
            throw new InvalidOperationException($"apt-get installed the chromium package but {ExecutablePath} is still missing. {fix}");
        }
    }

    private static async Task RunAsync(string[] arguments, TimeSpan timeout, string fix)
    {
        var start = new ProcessStartInfo("/usr/bin/apt-get")
        {
            RedirectStandardOutput = true,
            RedirectStandardError = true,
            RedirectStandardInput = true,
        };
        foreach (var argument in arguments)
        {
            start.ArgumentList.Add(argument);
        }
        start.Environment["DEBIAN_FRONTEND"] = "noninteractive";
        var command = "apt-get " + string.Join(' ', arguments);
        using var process = Process.Start(start) ?? throw new InvalidOperationException($"Could not start {command}. {fix}");
        process.StandardInput.Close();
        var output = process.StandardOutput.ReadToEndAsync();
        var errors = process.StandardError.ReadToEndAsync();
        using var deadline = new CancellationTokenSource(timeout);
        try
        {
            await process.WaitForExitAsync(deadline.Token).ConfigureAwait(false);
        }
        catch (OperationCanceledException)
        {
            process.Kill(entireProcessTree: true);
            throw new TimeoutException($"{command} did not finish in {timeout.TotalMinutes:0} minutes while installing Chromium for the browser tests. {fix}\n{Tail(await output.ConfigureAwait(false) + await errors.ConfigureAwait(false))}");
        }
        if (process.ExitCode != 0)
        {
            throw new InvalidOperationException($"{command} failed with exit code {process.ExitCode} while installing Chromium for the browser tests. {fix}\n{Tail(await output.ConfigureAwait(false) + await errors.ConfigureAwait(false))}");
        }
    }

    private static string Tail(string text) => text.Length <= 4000 ? text : text[^4000..];
}
