// Queries by an indexed field, Jackdaw against Marten on PostgreSQL, each through its own .NET
// client, interleaved A B A B in one process (perf/load/query-peers.sh starts the servers):
//
//   QueryPeers load-marten --postgres CS                    stores the corpus orders, Company indexed
//   QueryPeers run --jackdaw URL --database DB --postgres CS --values FILE
//                  [--rounds 3] [--seconds 10] [--concurrency 16] [--jackdaw-pid N] [--postgres-pid N]
//
// Each side runs CONCURRENCY query loops for SECONDS; a loop asks for the orders of one company
// picked from FILE (fixed seed) and materializes them as CorpusOrder objects, each through a fresh
// session and LINQ: Marten's lightweight query session (a computed index on data ->> 'Company'),
// Jackdaw.Client's session without tracking (`from Orders where Company = $p0`, an auto-index
// made before the run). With the servers' pids it also prints the CPU each query cost the client
// process and the server (the Jackdaw process; PostgreSQL's postmaster and its backends).
using System.Diagnostics;
using System.Globalization;

var command = args.Length > 0 ? args[0] : "";
var options = Options.Parse(args.Skip(1).ToArray());
switch (command)
{
    case "load-marten":
        await MartenSide.LoadAsync(options.Require("postgres"));
        return 0;
    case "run":
        return await RunAsync(options);
    default:
        Console.Error.WriteLine("usage: QueryPeers load-marten --postgres CS | run --jackdaw URL --database DB --postgres CS --values FILE [--rounds 3] [--seconds 10] [--concurrency 16]");
        return 2;
}

static async Task<int> RunAsync(Options options)
{
    var values = File.ReadAllLines(options.Require("values")).Where(v => v.Length > 0).ToArray();
    var rounds = int.Parse(options.Get("rounds", "3"), CultureInfo.InvariantCulture);
    var seconds = double.Parse(options.Get("seconds", "10"), CultureInfo.InvariantCulture);
    var concurrency = int.Parse(options.Get("concurrency", "16"), CultureInfo.InvariantCulture);

    using var jackdaw = new JackdawSide(options.Require("jackdaw"), options.Require("database"));
    await using var marten = MartenSide.Open(options.Require("postgres"));
    var sides = new IQuerySide[] { jackdaw, marten };
    // Server CPU: the Jackdaw process, and PostgreSQL's postmaster with its backends.
    var jackdawPid = int.Parse(options.Get("jackdaw-pid", "0"), CultureInfo.InvariantCulture);
    var postgresPid = int.Parse(options.Get("postgres-pid", "0"), CultureInfo.InvariantCulture);
    var serverCpu = new Dictionary<string, Func<double>>
    {
        [jackdaw.Name] = () => ProcessCpu.Seconds(jackdawPid),
        [marten.Name] = () => ProcessCpu.TreeSeconds(postgresPid),
    };

    // Same answers from both before anything is timed.
    foreach (var value in values.Take(50))
    {
        var a = await jackdaw.QueryAsync(value);
        var b = await marten.QueryAsync(value);
        if (a != b)
        {
            throw new InvalidOperationException($"Company '{value}': Jackdaw returned {a} orders, Marten {b}.");
        }
    }
    foreach (var side in sides)
    {
        await Drive(side, values, concurrency, TimeSpan.FromSeconds(3), seed: 1);
    }

    Console.WriteLine($"# queries by Company through each client, {concurrency} concurrent loops, {seconds}s per run, {rounds} rounds interleaved");
    Console.WriteLine("| round | client | queries/s | p50 ms | p99 ms | orders/query | failed queries | client CPU µs/query | server CPU µs/query |");
    Console.WriteLine("|---|---|---|---|---|---|---|---|---|");
    var failures = new List<string>();
    var rates = sides.ToDictionary(s => s.Name, _ => new List<double>());
    for (var round = 1; round <= rounds; round++)
    {
        foreach (var side in sides)
        {
            var (client0, server0) = (ProcessCpu.Self(), serverCpu[side.Name]());
            var result = await Drive(side, values, concurrency, TimeSpan.FromSeconds(seconds), seed: round);
            var (client1, server1) = (ProcessCpu.Self(), serverCpu[side.Name]());
            rates[side.Name].Add(result.PerSecond);
            var queries = result.PerSecond * seconds;
            Console.WriteLine(string.Create(CultureInfo.InvariantCulture,
                $"| {round} | {side.Name} | {result.PerSecond:F0} | {result.P50:F2} | {result.P99:F2} | {result.OrdersPerQuery:F1} | {result.Errors} | {(client1 - client0) * 1e6 / queries:F0} | {(server1 - server0) * 1e6 / queries:F0} |"));
            if (result.FirstError is not null)
            {
                failures.Add($"{side.Name}, round {round}: {result.FirstError}");
            }
        }
    }
    var ratios = Enumerable.Range(0, rounds).Select(i => rates[jackdaw.Name][i] / rates[marten.Name][i]).ToArray();
    Console.WriteLine(string.Create(CultureInfo.InvariantCulture,
        $"# Jackdaw / Marten per round: {string.Join(", ", ratios.Select(r => r.ToString("F2", CultureInfo.InvariantCulture)))}"));
    foreach (var failure in failures)
    {
        Console.WriteLine($"# first failure, {failure}");
    }
    return 0;
}

static async Task<RunResult> Drive(IQuerySide side, string[] values, int concurrency, TimeSpan duration, int seed)
{
    var stop = Stopwatch.StartNew();
    var latencies = new List<double>[concurrency];
    var orders = new long[concurrency];
    var errors = new int[concurrency];
    string? firstError = null;
    var loops = Enumerable.Range(0, concurrency).Select(async i =>
    {
        var random = new Random(seed * 1000 + i);
        var mine = latencies[i] = new List<double>(1 << 16);
        while (stop.Elapsed < duration)
        {
            var started = Stopwatch.GetTimestamp();
            try
            {
                orders[i] += await side.QueryAsync(values[random.Next(values.Length)]).ConfigureAwait(false);
            }
            catch (Exception e) when (e is not OutOfMemoryException)
            {
                // Counted and reported, not fatal: a failed query is a finding of the run.
                errors[i]++;
                Interlocked.CompareExchange(ref firstError, $"{e.GetType().Name}: {e.Message}", null);
                continue;
            }
            mine.Add(Stopwatch.GetElapsedTime(started).TotalMilliseconds);
        }
    }).ToArray();
    await Task.WhenAll(loops);
    var elapsed = stop.Elapsed.TotalSeconds;
    var all = latencies.SelectMany(l => l).Order().ToArray();
    return new RunResult(all.Length / elapsed, Percentile(all, 0.50), Percentile(all, 0.99), (double)orders.Sum() / Math.Max(1, all.Length), errors.Sum(), firstError);
}

static double Percentile(double[] sorted, double p) => sorted.Length == 0 ? 0 : sorted[Math.Min(sorted.Length - 1, (int)(p * sorted.Length))];
