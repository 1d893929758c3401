using System.Diagnostics;
using System.Globalization;
using Jackdaw.Storage.Engine;
using Xunit.Abstractions;

namespace Jackdaw.Storage.Tests.Engine;

/// <summary>
/// Kills a child process that commits transactions (SIGKILL at a random moment) and checks that
/// every transaction it acknowledged is there after recovery, byte for byte, with a valid tree.
/// </summary>
public sealed class CrashTests(ITestOutputHelper output) : EngineTestBase
{
    [Fact]
    public void AcknowledgedCommitsSurviveKillNine()
    {
        const int rounds = 20;
        var random = new Random(2026);
        var acknowledged = new List<(int Round, int N)>();
        var totalRecovered = 0;
        for (var round = 0; round < rounds; round++)
        {
            var acks = RunChildAndKill(round, round % 2 == 1 ? "pipelined" : "sync", random.Next(150, 700));
            acknowledged.AddRange(acks.Select(n => (round, n)));

            using var env = StorageEnvironment.Open(Options());
            totalRecovered += env.RecoveredTransactions;
            using var r = env.BeginRead();
            var tree = r.OpenTree("crash");
            Assert.True(tree is not null, $"round {round}: {acks.Count} commits acknowledged, and no tree after recovery");
            tree.Validate();
            foreach (var (ackRound, n) in acknowledged)
            {
                Assert.True(tree.TryGet(CrashChild.Key(ackRound, n), out var value), $"round {ackRound} key {n} was acknowledged but is missing");
                Assert.True(value.SequenceEqual(CrashChild.Value(ackRound, n)), $"round {ackRound} key {n} has the wrong value");
            }

            output.WriteLine($"round {round}: {acks.Count} acknowledged, {env.RecoveredTransactions} transactions replayed, {tree.Count} keys");
        }

        Assert.True(acknowledged.Count > rounds * 5, $"only {acknowledged.Count} commits were acknowledged");
        Assert.True(totalRecovered > 0, "no run needed journal replay; the kills never landed between commit and flush");
    }

    [Fact]
    public void SecondProcessOpeningTheFolderGetsAClearError()
    {
        var locked = false;
        RunChildAndKill(0, "sync", 0, whileRunning: () =>
        {
            var e = Assert.Throws<EnvironmentLockedException>(() => StorageEnvironment.Open(Options()));
            Assert.Equal(Folder, e.Path);
            locked = true;
        });
        Assert.True(locked);

        // Once the holder is gone (killed), the folder opens and recovers.
        using var env = StorageEnvironment.Open(Options());
        using var r = env.BeginRead();
        r.OpenTree("crash")?.Validate();
    }

    private List<int> RunChildAndKill(int round, string mode, int killAfterMs, Action? whileRunning = null)
    {
        var testAssembly = typeof(CrashChild).Assembly.Location;
        var start = new ProcessStartInfo("dotnet")
        {
            RedirectStandardOutput = true,
            RedirectStandardError = true,
            UseShellExecute = false,
        };
        start.ArgumentList.Add("exec");
        start.ArgumentList.Add(testAssembly);
        start.Environment["DOTNET_STARTUP_HOOKS"] = testAssembly;
        start.Environment[CrashChild.Variable] = string.Join('|', Folder, round.ToString(CultureInfo.InvariantCulture), mode);
        var acks = new List<int>();
        var ready = new ManualResetEventSlim();
        var committing = new ManualResetEventSlim();
        using var process = new Process { StartInfo = start };
        process.OutputDataReceived += (_, e) =>
        {
            if (e.Data is null)
            {
                return;
            }

            if (e.Data == "ready")
            {
                ready.Set();
                return;
            }

            var parts = e.Data.Split(' ');
            if (parts.Length == 4 && parts[0] == "ack" && parts[3] == "end")
            {
                lock (acks)
                {
                    acks.Add(int.Parse(parts[2], CultureInfo.InvariantCulture));
                }

                committing.Set();
            }
        };
        var errors = new System.Text.StringBuilder();
        process.ErrorDataReceived += (_, e) =>
        {
            if (e.Data is not null)
            {
                lock (errors)
                {
                    errors.AppendLine(e.Data);
                }
            }
        };
        process.Start();
        process.BeginOutputReadLine();
        process.BeginErrorReadLine();
        if (!ready.Wait(TimeSpan.FromSeconds(30)))
        {
            process.Kill();
            Assert.Fail($"The child never opened the environment: {errors}");
        }

        whileRunning?.Invoke();

        // Wait on the condition "the child is committing" (its first acknowledgement: on a busy
        // machine a fresh child took longer than the random while to commit once, and a round
        // killed before that left no tree), then let it run a random while.
        if (!committing.Wait(TimeSpan.FromSeconds(60)))
        {
            process.Kill(entireProcessTree: true);
            Assert.Fail($"The child never acknowledged a commit: {errors}");
        }

        Assert.True(process.WaitForExit(killAfterMs) is false, $"The child exited early: {errors}");
        process.Kill(entireProcessTree: true);
        process.WaitForExit();
        lock (acks)
        {
            return [.. acks];
        }
    }
}
