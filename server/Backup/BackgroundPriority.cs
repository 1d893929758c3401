using System.Runtime.InteropServices;

namespace Jackdaw.Server.Backup;

/// <summary>
/// Runs a backup's or restore's thread at a lower scheduling priority (a nice value of
/// <see cref="Nice"/>, Linux only): its copying and compressing then take the CPU the requests
/// leave, instead of half of it. On an idle machine it runs at full speed; under load the writers
/// come first (perf/load/backup.sh: durable PUT at 64 connections while snapshots run). Anywhere
/// else, or when the call fails, nothing changes.
/// </summary>
internal static partial class BackgroundPriority
{
    /// <summary>The nice value of backup threads: the kernel gives a thread at 10 about a tenth of the CPU a thread at 0 gets.</summary>
    public const int Nice = 10;

    private const int PrioProcess = 0;

    /// <summary>Lowers the calling thread's priority until the result is disposed (on a dedicated thread: dispose it on the same one).</summary>
    public static IDisposable Lower()
    {
        if (!OperatingSystem.IsLinux())
        {
            return Nothing.Instance;
        }
        try
        {
            var tid = gettid();
            var before = getpriority(PrioProcess, tid);
            return setpriority(PrioProcess, tid, Math.Max(before, Nice)) == 0 ? new Restore(tid, before) : Nothing.Instance;
        }
        catch (Exception e) when (e is DllNotFoundException or EntryPointNotFoundException)
        {
            return Nothing.Instance;
        }
    }

    [LibraryImport("libc", EntryPoint = "gettid")]
    private static partial int gettid();

    [LibraryImport("libc", EntryPoint = "getpriority")]
    private static partial int getpriority(int which, int who);

    [LibraryImport("libc", EntryPoint = "setpriority")]
    private static partial int setpriority(int which, int who, int prio);

    private sealed class Restore(int tid, int before) : IDisposable
    {
        // Raising the priority back needs no privilege only down to where it was: try, and accept a refusal.
        public void Dispose() => setpriority(PrioProcess, tid, before);
    }

    private sealed class Nothing : IDisposable
    {
        public static readonly Nothing Instance = new();

        public void Dispose()
        {
        }
    }
}
