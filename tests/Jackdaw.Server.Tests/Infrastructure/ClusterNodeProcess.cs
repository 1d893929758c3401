namespace Jackdaw.Server.Tests.Infrastructure;

/// <summary>
/// One node of a test cluster: a server process on 127.0.0.1 with its own data folder. It starts on
/// port 0 and keeps the port it was given, so that a restart (same folder, same port) is the same
/// node at the same URL, as its cluster knows it. Kill (SIGKILL), pause (SIGSTOP), resume (SIGCONT).
/// </summary>
public sealed class ClusterNodeProcess : IDisposable
{
    private readonly string[] _arguments;
    private ServerProcess? _process;

    private ClusterNodeProcess(string dataDir, string[] arguments)
    {
        DataDir = dataDir;
        _arguments = arguments;
    }

    public string DataDir { get; }

    /// <summary>The node's URL (no trailing slash), fixed once it first listened.</summary>
    public string Url { get; private set; } = "";

    public int Port { get; private set; }

    public bool IsRunning => _process is { HasExited: false };

    /// <summary>True between <see cref="Pause"/> and <see cref="Resume"/>: running, answering nothing.</summary>
    public bool IsPaused { get; private set; }

    /// <summary>What the current process printed (for a failing test's message).</summary>
    public string Output => _process?.Output ?? "";

    /// <summary>Starts a node on a free port; <paramref name="arguments"/> are more options (<c>--Cluster:Passive=true</c>).</summary>
    public static async Task<ClusterNodeProcess> StartAsync(string dataDir, params string[] arguments)
    {
        var node = new ClusterNodeProcess(dataDir, arguments);
        await node.RunAsync(port: 0);
        return node;
    }

    private async Task RunAsync(int port)
    {
        Directory.CreateDirectory(DataDir);
        // Short election timeouts keep the tests quick; generous enough for a loaded 2-core machine.
        var arguments = $"--urls http://127.0.0.1:{port} --data-dir \"{DataDir}\" --Cluster:ElectionTimeoutMs=500 {string.Join(' ', _arguments)}";
        _process = ServerProcess.Start(arguments);
        var address = await _process.WaitForAddressAsync(TimeSpan.FromSeconds(60));
        Port = address.Port;
        Url = $"http://127.0.0.1:{Port}";
    }

    /// <summary>SIGKILL: the node dies at once, mid-write if it was writing.</summary>
    public void Kill()
    {
        _process?.KillHard();
        _process?.Dispose();
        _process = null;
    }

    public void Pause()
    {
        _process!.Pause();
        IsPaused = true;
    }

    public void Resume()
    {
        _process!.Resume();
        IsPaused = false;
    }

    /// <summary>Starts the node again on its folder and port (after <see cref="Kill"/>).</summary>
    public Task RestartAsync()
    {
        if (IsRunning)
        {
            throw new InvalidOperationException("The node still runs: kill it first.");
        }
        return RunAsync(Port);
    }

    public void Dispose()
    {
        _process?.Dispose();
        _process = null;
    }
}
