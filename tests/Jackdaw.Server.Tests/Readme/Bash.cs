using System.Diagnostics;

namespace Jackdaw.Server.Tests.Readme;

/// <summary>What a README command printed when bash ran it: its exit code, stdout and stderr; <see cref="TimedOut"/> when it was killed.</summary>
internal sealed record BashResult(int ExitCode, string Output, string Error, bool TimedOut);

/// <summary>Runs a README command as a newcomer would paste it: <c>bash -c</c> in a given folder.</summary>
internal static class Bash
{
    public static async Task<BashResult> RunAsync(string command, string workingDirectory, TimeSpan timeout, IReadOnlyDictionary<string, string>? environment = null)
    {
        var info = new ProcessStartInfo("bash")
        {
            RedirectStandardOutput = true,
            RedirectStandardError = true,
            UseShellExecute = false,
            WorkingDirectory = workingDirectory,
        };
        info.ArgumentList.Add("-c");
        info.ArgumentList.Add(command);
        foreach (var (key, value) in environment ?? new Dictionary<string, string>())
        {
            info.Environment[key] = value;
        }
        using var process = Process.Start(info)!;
        var stdout = process.StandardOutput.ReadToEndAsync();
        var stderr = process.StandardError.ReadToEndAsync();
        using var cancel = new CancellationTokenSource(timeout);
        try
        {
            await process.WaitForExitAsync(cancel.Token);
        }
        catch (OperationCanceledException)
        {
            process.Kill(entireProcessTree: true);
            return new BashResult(-1, await stdout, await stderr, TimedOut: true);
        }
        return new BashResult(process.ExitCode, await stdout, await stderr, TimedOut: false);
    }
}
