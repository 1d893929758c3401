using System.Globalization;
using System.Text;
using Jackdaw.Storage.Engine;

#pragma warning disable CA1050 // The runtime finds a startup hook only as a type named StartupHook outside any namespace.

/// <summary>
/// Lets the crash tests run the engine in a real child process without a separate project: the
/// test starts <c>dotnet Jackdaw.Storage.Tests.dll</c> with <c>DOTNET_STARTUP_HOOKS</c> pointing at
/// this assembly and <c>JACKDAW_ENGINE_CRASH_CHILD</c> set; the runtime calls
/// <see cref="Initialize"/> before the (empty) generated Main, and it never returns.
/// Without the variable (the normal test run) it does nothing.
/// </summary>
internal static class StartupHook
{
    public static void Initialize()
    {
        var args = Environment.GetEnvironmentVariable(Jackdaw.Storage.Tests.Engine.CrashChild.Variable);
        if (string.IsNullOrEmpty(args))
        {
            return;
        }

        Jackdaw.Storage.Tests.Engine.CrashChild.Run(args.Split('|'));
        Environment.Exit(0);
    }
}

#pragma warning restore CA1050

namespace Jackdaw.Storage.Tests.Engine
{
    /// <summary>
    /// The child: commits transactions forever and prints "ack {round} {n} end" after each one is
    /// acknowledged durable, until the parent kills it with SIGKILL.
    /// </summary>
    internal static class CrashChild
    {
        public const string Variable = "JACKDAW_ENGINE_CRASH_CHILD";

        public static void Run(string[] args)
        {
            var folder = args[0];
            var round = int.Parse(args[1], CultureInfo.InvariantCulture);
            var pipelined = args[2] == "pipelined";
            using var env = StorageEnvironment.Open(new StorageEnvironmentOptions
            {
                Path = folder,
                FlushInterval = TimeSpan.FromMilliseconds(20),
                MaxJournalFileSize = 256 * 1024,
                FlushThresholdPages = 256,
            });
            var output = Console.Out;
            output.WriteLine("ready");
            var pending = new Queue<(int N, CommitHandle Handle)>();
            for (var n = 0; ; n++)
            {
                using (var tx = env.BeginWrite())
                {
                    var tree = tx.CreateTree("crash");
                    tree.Put(Key(round, n), Value(round, n));

                    // Churn too, so pages get freed, reused and flushed while the parent may kill us.
                    if (n % 3 == 0 && n > 10)
                    {
                        tree.Delete(Key(round, n - 10));
                        tree.Put(Key(round, n - 10), Value(round, n - 10));
                    }

                    if (pipelined)
                    {
                        pending.Enqueue((n, tx.CommitPipelined()));
                    }
                    else
                    {
                        tx.Commit();
                        output.WriteLine($"ack {round} {n} end");
                    }
                }

                while (pending.Count > 0 && (pending.Count > 4 || pending.Peek().Handle.Durable.IsCompleted))
                {
                    var (done, handle) = pending.Dequeue();
                    handle.Wait();
                    output.WriteLine($"ack {round} {done} end");
                }
            }
        }

        public static byte[] Key(int round, int n) => Encoding.UTF8.GetBytes($"{round:D3}/{n:D8}");

        public static byte[] Value(int round, int n)
        {
            var random = new Random((round * 1_000_003) + n);
            var length = random.Next(10) == 0 ? random.Next(2049, 40_000) : random.Next(1, 2000);
            var value = new byte[length];
            random.NextBytes(value);
            return value;
        }
    }
}
