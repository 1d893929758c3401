using System.Diagnostics;
using System.Runtime.InteropServices;
using System.Text.RegularExpressions;

namespace Jackdaw.Server.Tests.Infrastructure;

/// <summary>
/// The real server as a child process (<c>dotnet Jackdaw.Server.dll</c> from the test output),
/// for shutdown and crash tests. The bound address is read from its startup log line.
/// </summary>
public sealed partial class ServerProcess : IDisposable
{
    private readonly Process _process;
    private readonly TaskCompletionSource<Uri> _address = new(TaskCreationOptions.RunContinuationsAsynchronously);
    private readonly System.Text.StringBuilder _output = new();
    private readonly System.Text.StringBuilder _error = new();

    private ServerProcess(Process process)
    {
        _process = process;
        _process.OutputDataReceived += OnOutput;
        _process.ErrorDataReceived += OnError;
        _process.BeginOutputReadLine();
        _process.BeginErrorReadLine();
    }

    public int Id => _process.Id;

    public string Output
    {
        get
        {
            lock (_output)
                return _output.ToString();
        }
    }

    /// <summary>What the process wrote to stderr alone (it is in <see cref="Output"/> too).</summary>
    public string Error
    {
        get
        {
            lock (_output)
                return _error.ToString();
        }
    }

    public static ServerProcess Start(string arguments, IReadOnlyDictionary<string, string>? environment = null, string? workingDirectory = null) =>
        StartProgram("Jackdaw.Server.dll", arguments, environment, workingDirectory);

    /// <summary>Another program of the test output (e.g. <c>Jackdaw.Tests.SubscriptionWorker.dll</c>) as a child process.</summary>
    public static ServerProcess StartProgram(string dll, string arguments, IReadOnlyDictionary<string, string>? environment = null, string? workingDirectory = null)
    {
        var path = Path.Combine(AppContext.BaseDirectory, dll);
        var info = new ProcessStartInfo("dotnet", $"\"{path}\" {arguments}")
        {
            RedirectStandardOutput = true,
            RedirectStandardError = true,
            UseShellExecute = false,
            WorkingDirectory = workingDirectory ?? AppContext.BaseDirectory,
        };
        info.Environment["Logging__Console__FormatterName"] = "simple";
        foreach (var (key, value) in environment ?? new Dictionary<string, string>())
        {
            info.Environment[key] = value;
        }
        return new ServerProcess(Process.Start(info)!);
    }

    /// <summary>Waits for the "listening on" line and returns the base address.</summary>
    public async Task<Uri> WaitForAddressAsync(TimeSpan timeout)
    {
        var exited = _process.WaitForExitAsync();
        var done = await Task.WhenAny(_address.Task, exited, Task.Delay(timeout));
        if (done != _address.Task)
        {
            throw new TimeoutException($"The server did not report its address (exited: {_process.HasExited}). Output:\n{Output}");
        }
        return await _address.Task;
    }

    public void SendSigterm()
    {
        if (kill(_process.Id, 15) != 0)
        {
            throw new InvalidOperationException($"kill -TERM {_process.Id} failed: errno {Marshal.GetLastPInvokeError()}");
        }
    }

    public void KillHard() => _process.Kill(entireProcessTree: true);

    /// <summary>SIGSTOP: the process stops where it is (its sockets stay open, nothing answers).</summary>
    public void Pause() => Signal(19);

    /// <summary>SIGCONT: a paused process goes on.</summary>
    public void Resume() => Signal(18);

    public bool HasExited => _process.HasExited;

    private void Signal(int signal)
    {
        if (kill(_process.Id, signal) != 0)
        {
            throw new InvalidOperationException($"kill -{signal} {_process.Id} failed: errno {Marshal.GetLastPInvokeError()}");
        }
    }

    public async Task<int> WaitForExitAsync(TimeSpan timeout)
    {
        using var cts = new CancellationTokenSource(timeout);
        await _process.WaitForExitAsync(cts.Token);
        return _process.ExitCode;
    }

    public void Dispose()
    {
        // A paused process would not die of SIGKILL until it runs again on some kernels' accounting.
        if (!_process.HasExited)
        {
            kill(_process.Id, 18);
        }
        if (!_process.HasExited)
        {
            _process.Kill(entireProcessTree: true);
        }
        _process.WaitForExit();
        _process.Dispose();
    }

    private void OnOutput(object sender, DataReceivedEventArgs e)
    {
        if (e.Data is null)
        {
            return;
        }
        lock (_output)
            _output.AppendLine(e.Data);
        var match = ListeningLine().Match(e.Data);
        if (match.Success)
        {
            _address.TrySetResult(new Uri(match.Groups[1].Value));
        }
    }

    private void OnError(object sender, DataReceivedEventArgs e)
    {
        if (e.Data is not null)
        {
            lock (_output)
                _error.AppendLine(e.Data);
        }
        OnOutput(sender, e);
    }

    [GeneratedRegex(@"Jackdaw listening on (https?://[^, ]+)")]
    private static partial Regex ListeningLine();

    [DllImport("libc", SetLastError = true)]
    private static extern int kill(int pid, int sig);
}
