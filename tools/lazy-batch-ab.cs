#:project ../perf/Jackdaw.Benchmarks/Jackdaw.Benchmarks.csproj
#:property TreatWarningsAsErrors=false
#:property EnforceCodeStyleInBuild=false
#:property Optimize=true

// Issue 26's lazy target measured interleaved, for a machine whose load drifts: the workload of
// perf/Jackdaw.Benchmarks' LazyBatchBenchmarks (10 loads and 2 queries in a fresh session, one
// request after another or as one multi_get), run in rounds of N batches of each form, their
// order alternating. Each round records the wall time per batch and the CPU time per batch of
// this process (the client) and of the server, read from /proc/<pid>/task/*/schedstat (ns, every
// thread), so the client's and the server's shares can be told apart. Prints the medians and the
// median of the per-round ratios Sequential / Lazy; the first fifth of the rounds is left out.
//
//   server:  dotnet server/bin/Release/net10.0/Jackdaw.Server.dll --urls http://127.0.0.1:18393 --data-dir <temp>
//   then:    JACKDAW_CORPUS=$PWD/tests/corpus JACKDAW_BENCH_URL=http://127.0.0.1:18393 \
//            dotnet run -c Release tools/lazy-batch-ab.cs -- <server pid> [rounds] [batches]
using System.Diagnostics;
using Jackdaw.Benchmarks.Client;

if (args.Length < 1 || string.IsNullOrEmpty(Environment.GetEnvironmentVariable("JACKDAW_BENCH_URL")))
{
    Console.Error.WriteLine("usage: JACKDAW_BENCH_URL=<server url> dotnet run -c Release tools/lazy-batch-ab.cs -- <server pid> [rounds] [batches per round]");
    return 2;
}

var serverPid = int.Parse(args[0]);
var rounds = args.Length > 1 ? int.Parse(args[1]) : 20;
var batches = args.Length > 2 ? int.Parse(args[2]) : 200;

var benchmark = new LazyBatchBenchmarks();
await benchmark.Setup();
var sequential = new List<Sample>();
var lazy = new List<Sample>();
for (var round = 0; round < rounds; round++)
{
    if (round % 2 == 0)
    {
        sequential.Add(await TimeAsync(benchmark.Sequential));
        lazy.Add(await TimeAsync(benchmark.Lazy));
    }
    else
    {
        lazy.Add(await TimeAsync(benchmark.Lazy));
        sequential.Add(await TimeAsync(benchmark.Sequential));
    }
}

await benchmark.Cleanup();
var skip = rounds / 5;
var s = sequential.Skip(skip).ToList();
var l = lazy.Skip(skip).ToList();
Console.WriteLine($"{s.Count} rounds of {batches} batches (first {skip} left out), load {File.ReadAllText("/proc/loadavg").Trim()}");
Console.WriteLine($"Sequential: wall {Median(s.Select(x => x.Wall)):F0} us, client CPU {Median(s.Select(x => x.Client)):F0} us, server CPU {Median(s.Select(x => x.Server)):F0} us per batch");
Console.WriteLine($"Lazy:       wall {Median(l.Select(x => x.Wall)):F0} us, client CPU {Median(l.Select(x => x.Client)):F0} us, server CPU {Median(l.Select(x => x.Server)):F0} us per batch");
var wallRatios = s.Zip(l, (a, b) => a.Wall / b.Wall).Order().ToList();
var cpuRatios = s.Zip(l, (a, b) => (a.Client + a.Server) / (b.Client + b.Server)).Order().ToList();
Console.WriteLine($"Sequential / Lazy: wall {wallRatios[wallRatios.Count / 2]:F2} (quartiles {wallRatios[wallRatios.Count / 4]:F2}-{wallRatios[wallRatios.Count * 3 / 4]:F2}), " +
    $"CPU {cpuRatios[cpuRatios.Count / 2]:F2} (quartiles {cpuRatios[cpuRatios.Count / 4]:F2}-{cpuRatios[cpuRatios.Count * 3 / 4]:F2})");
return 0;

async Task<Sample> TimeAsync(Func<Task<int>> batch)
{
    var client = CpuMicroseconds(Environment.ProcessId);
    var server = CpuMicroseconds(serverPid);
    var clock = Stopwatch.StartNew();
    for (var i = 0; i < batches; i++)
    {
        if (await batch() != 12)
        {
            throw new InvalidOperationException("A batch did not find its 12 answers.");
        }
    }

    var wall = clock.Elapsed.TotalMicroseconds;
    return new Sample(wall / batches, (CpuMicroseconds(Environment.ProcessId) - client) / batches, (CpuMicroseconds(serverPid) - server) / batches);
}

static double CpuMicroseconds(int pid)
{
    double nanoseconds = 0;
    foreach (var task in Directory.GetDirectories($"/proc/{pid}/task"))
    {
        try
        {
            nanoseconds += double.Parse(File.ReadAllText(Path.Combine(task, "schedstat")).Split(' ')[0]);
        }
        catch (IOException)
        {
            // The thread ended between the listing and the read.
        }
    }

    return nanoseconds / 1000;
}

static double Median(IEnumerable<double> values)
{
    var ordered = values.Order().ToList();
    return ordered[ordered.Count / 2];
}

internal readonly record struct Sample(double Wall, double Client, double Server);
