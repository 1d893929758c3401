// Bulk insert of the orders corpus, Jackdaw against Marten on PostgreSQL, each through its own .NET
// client, interleaved A B A B in one process (perf/load/bulk-peers.sh starts the servers):
//
//   BulkPeers run --jackdaw URL [--postgres CS] [--rounds 3] [--label NAME] [--warmups 1]
//                 [--jackdaw-pid N] [--postgres-pid N]
//
// Without --postgres only Jackdaw runs (to profile it alone).
// The corpus is read once into CorpusOrder objects (not timed). Each load then stores all of them
// into an empty target made for it (not timed): Jackdaw.Client's BulkInsert into a fresh database,
// done when the server has answered its count (every batch durable); Marten's
// store.BulkInsertAsync(orders) in its default mode into its table dropped and made again, done
// when its transaction has committed. Each side first loads WARMUPS times untimed (the JIT, Marten's
// generated code). Every load is checked by counting what the target holds. With the servers' pids
// it also prints the CPU each document cost the client process and the server (the Jackdaw
// process; PostgreSQL's postmaster and its backends).
using System.Diagnostics;
using System.Globalization;
using System.Text.Json;
using Jackdaw.Client.Tests.Integration;

var command = args.Length > 0 ? args[0] : "";
var options = Options.Parse(args.Skip(1).ToArray());
if (command != "run")
{
    Console.Error.WriteLine("usage: BulkPeers run --jackdaw URL [--postgres CS] [--rounds 3] [--label NAME] [--warmups 1] [--jackdaw-pid N] [--postgres-pid N]");
    return 2;
}

var rounds = int.Parse(options.Get("rounds", "3"), CultureInfo.InvariantCulture);
var warmups = int.Parse(options.Get("warmups", "1"), CultureInfo.InvariantCulture);
var label = options.Get("label", "Jackdaw");
var orders = CorpusOrder.ReadCorpus(new JsonSerializerOptions()).ToList();

using var jackdaw = new JackdawBulkSide(options.Require("jackdaw"));
var postgres = options.Get("postgres", "");
await using var marten = MartenBulkSide.Open(postgres.Length > 0 ? postgres : "Host=unused");
IBulkSide[] sides = postgres.Length > 0 ? [jackdaw, marten] : [jackdaw];
var jackdawPid = int.Parse(options.Get("jackdaw-pid", "0"), CultureInfo.InvariantCulture);
var postgresPid = int.Parse(options.Get("postgres-pid", "0"), CultureInfo.InvariantCulture);
var serverCpu = new Dictionary<string, Func<double>>
{
    [jackdaw.Name] = () => ProcessCpu.Seconds(jackdawPid),
    [marten.Name] = () => ProcessCpu.TreeSeconds(postgresPid),
};

var loads = 0;
for (var i = 0; i < warmups; i++)
{
    foreach (var side in sides)
    {
        await LoadAsync(side, $"warm{++loads}");
    }
}

Console.WriteLine($"# bulk insert of {orders.Count} orders through each client, {rounds} rounds interleaved, load {File.ReadAllText("/proc/loadavg").Split(' ')[0]}");
Console.WriteLine("| round | client | seconds | documents/s | client CPU µs/document | server CPU µs/document |");
Console.WriteLine("|---|---|---|---|---|---|");
var rates = sides.ToDictionary(s => s.Name, _ => new List<double>());
for (var round = 1; round <= rounds; round++)
{
    foreach (var side in sides)
    {
        var (seconds, client, server) = await LoadAsync(side, $"run{++loads}");
        rates[side.Name].Add(orders.Count / seconds);
        var name = side == jackdaw ? label : side.Name;
        Console.WriteLine(string.Create(CultureInfo.InvariantCulture,
            $"| {round} | {name} | {seconds:F2} | {orders.Count / seconds:F0} | {client * 1e6 / orders.Count:F1} | {server * 1e6 / orders.Count:F1} |"));
    }
}
if (sides.Length == 1)
{
    return 0;
}
var ratios = Enumerable.Range(0, rounds).Select(i => rates[jackdaw.Name][i] / rates[marten.Name][i]).ToArray();
Console.WriteLine(string.Create(CultureInfo.InvariantCulture,
    $"# {label} / Marten per round: {string.Join(", ", ratios.Select(r => r.ToString("F2", CultureInfo.InvariantCulture)))}; load {File.ReadAllText("/proc/loadavg").Split(' ')[0]}"));
return 0;

// One load into a fresh target: its seconds, and the CPU seconds the client and the server spent on it.
async Task<(double Seconds, double ClientCpu, double ServerCpu)> LoadAsync(IBulkSide side, string target)
{
    await side.PrepareAsync($"bulk-{target}");
    // Collect what the previous load left so neither side pays for the other's garbage.
    GC.Collect();
    GC.WaitForPendingFinalizers();
    var (client0, server0) = (ProcessCpu.Self(), serverCpu[side.Name]());
    var started = Stopwatch.GetTimestamp();
    await side.InsertAsync(orders);
    var seconds = Stopwatch.GetElapsedTime(started).TotalSeconds;
    var (client1, server1) = (ProcessCpu.Self(), serverCpu[side.Name]());
    var stored = await side.CountAsync();
    if (stored != orders.Count)
    {
        throw new InvalidOperationException($"{side.Name} holds {stored} orders after a load of {orders.Count}.");
    }
    await side.DropAsync();
    return (seconds, client1 - client0, server1 - server0);
}
