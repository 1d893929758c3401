// Issue 20's latency targets, measured in one process that both sends the PUTs and receives the
// events, so every timestamp comes from one clock (driven by perf/load/changes-latency.sh):
//
//   ChangesLatency idle   --url URL --db DB [--rate 1000] [--warmup 5] [--seconds 30] [--connections 16]
//                         [--server-pid N]
//       one subscription worker (`from Orders`, WebSocket /subscriptions/connect, each batch
//       acknowledged) and one changes-feed watcher (watch-collection Orders) of Jackdaw, idle, while
//       orders are PUT at a steady RATE.
//   ChangesLatency fanout --kind jackdaw|pouch --url URL --db DB [--watchers 64] [--rate 10000]
//                         [--warmup 5] [--seconds 20] [--connections 64] [--server-pid N]
//       WATCHERS watchers of one collection (Jackdaw: the changes WebSocket, watch-collection
//       Orders; pouchdb-server: GET /db/_changes?feed=continuous&since=now) under RATE PUT/s.
//   ChangesLatency replication | bulk | assurance ...
//       issue 34's replication targets on a three-node cluster (ClusterRuns.cs, perf/load/cluster.sh).
//
// The load is open loop: PUT number i is due at start + i / RATE whatever the answers do (the pacer
// wakes every millisecond and sends what is due), for WARMUP + SECONDS of wall time. Only when
// MAX-IN-FLIGHT requests (default eight times the connections) wait does the pacer wait too; those
// waits are counted (pacerStallMs), and the rate achieved is reported: a server that cannot keep up
// gets fewer PUTs, not a longer run. PUTs still unanswered 30 s after the schedule are given up.
// Per document the time its PUT's answer arrived is recorded, and per receiver the time the event
// (the end of the WebSocket message or the feed read that carried it) arrived; latency = arrival -
// answer, negative when the event came first. Documents sent in the first WARMUP seconds are not
// measured. After the load, receivers get --drain seconds (default 10) to receive every answered
// document; what has not arrived by then is missing. Prints one JSON object; diagnostics on stderr.
using System.Buffers.Text;
using System.Diagnostics;
using System.Globalization;
using System.Net;
using System.Net.WebSockets;
using System.Text;
using System.Text.Json;

var command = args.Length > 0 ? args[0] : "";
var options = Options.Parse(args.Skip(1).ToArray());
try
{
    switch (command)
    {
        case "idle":
            await Runs.IdleAsync(options);
            return 0;
        case "fanout":
            await Runs.FanoutAsync(options);
            return 0;
        case "replication":
            await ClusterRuns.ReplicationAsync(options);
            return 0;
        case "bulk":
            await ClusterRuns.BulkAsync(options);
            return 0;
        case "assurance":
            await ClusterRuns.AssuranceAsync(options);
            return 0;
        default:
            Console.Error.WriteLine("usage: ChangesLatency idle --url URL --db DB [--rate 1000] [--warmup 5] [--seconds 30] | fanout --kind jackdaw|pouch --url URL --db DB [--watchers 64] [--rate 10000] ...");
            return 2;
    }
}
catch (Exception e)
{
    Console.Error.WriteLine(e);
    return 1;
}

internal static class Clock
{
    private static readonly long s_start = Stopwatch.GetTimestamp();

    /// <summary>Microseconds since the process started, plus one: 0 means "never".</summary>
    public static int NowUs() => (int)(Stopwatch.GetElapsedTime(s_start).Ticks / 10) + 1;
}

internal static class Runs
{
    public static async Task IdleAsync(Options options)
    {
        var url = options.Require("url").TrimEnd('/');
        var db = options.Require("db");
        var plan = Plan.From(options, rate: 1000, seconds: 30, connections: 16);
        using var http = Http.Client(plan.Connections);

        // Created before any document, so the worker starts at the beginning of an empty collection.
        await Http.Ensure(await http.PutAsync($"{url}/databases/{db}/subscriptions",
            new StringContent("{\"Name\":\"lat\",\"Query\":\"from Orders\"}", Encoding.UTF8, "application/json")), "create the subscription");

        var subscription = new Receiver("subscription", plan.Total);
        var changes = new Receiver("changes", plan.Total);
        using var stop = new CancellationTokenSource();
        var tasks = new List<Task>
        {
            await SubscriptionWorker.StartAsync(url, db, "lat", subscription, stop.Token),
            await ChangesWatcher.StartAsync(url, db, "Orders", changes, stop.Token),
        };

        var load = new Load(plan, i => Jackdaw(url, db, i), http, options.GetInt("server-pid", 0));
        await load.RunAsync();
        await Drain([subscription, changes], load, options.GetDouble("drain", 10));
        stop.Cancel();
        await Task.WhenAll(tasks.Select(t => t.ContinueWith(_ => { }, TaskScheduler.Default)));

        Print("idle", "jackdaw", plan, load, [Group.Of("subscription", [subscription], load), Group.Of("changes", [changes], load)]);
    }

    public static async Task FanoutAsync(Options options)
    {
        var kind = options.Require("kind");
        var url = options.Require("url").TrimEnd('/');
        var db = options.Require("db");
        var plan = Plan.From(options, rate: 10_000, seconds: 20, connections: 64);
        var count = options.GetInt("watchers", 64);
        using var http = Http.Client(plan.Connections);
        using var feeds = Http.Client(count + 4);
        feeds.Timeout = Timeout.InfiniteTimeSpan;

        if (kind == "pouch")
        {
            await Http.Ensure(await http.PutAsync($"{url}/{db}", null), "create the pouchdb database");
        }

        var receivers = Enumerable.Range(0, count).Select(w => new Receiver($"w{w}", plan.Total)).ToArray();
        using var stop = new CancellationTokenSource();
        var tasks = new List<Task>();
        foreach (var receiver in receivers)
        {
            tasks.Add(kind switch
            {
                "jackdaw" => await ChangesWatcher.StartAsync(url, db, "Orders", receiver, stop.Token),
                "pouch" => await PouchWatcher.StartAsync(feeds, url, db, receiver, stop.Token),
                _ => throw new ArgumentException($"--kind {kind}: jackdaw or pouch"),
            });
        }
        await Task.Delay(500); // the last watchers' registration (pouch confirms nothing)

        Func<int, HttpRequestMessage> put = kind == "pouch" ? i => Pouch(url, db, i) : i => Jackdaw(url, db, i);
        var load = new Load(plan, put, http, options.GetInt("server-pid", 0));
        await load.RunAsync();
        await Drain(receivers, load, options.GetDouble("drain", 10));
        stop.Cancel();
        await Task.WhenAll(tasks.Select(t => t.ContinueWith(_ => { }, TaskScheduler.Default)));

        Print("fanout", kind, plan, load, [Group.Of($"{count} watchers", receivers, load)]);
    }

    private static HttpRequestMessage Jackdaw(string url, string db, int i) =>
        new(HttpMethod.Put, $"{url}/databases/{db}/docs?id=orders/{i}")
        {
            Content = Json($"{{\"Company\":\"companies/{i % 91 + 1}\",\"Freight\":{i % 100},\"@metadata\":{{\"@collection\":\"Orders\"}}}}"),
        };

    private static HttpRequestMessage Pouch(string url, string db, int i) =>
        new(HttpMethod.Put, $"{url}/{db}/orders_{i}")
        {
            Content = Json($"{{\"Company\":\"companies/{i % 91 + 1}\",\"Freight\":{i % 100},\"type\":\"Orders\"}}"),
        };

    private static ByteArrayContent Json(string text)
    {
        var content = new ByteArrayContent(Encoding.UTF8.GetBytes(text));
        content.Headers.ContentType = new System.Net.Http.Headers.MediaTypeHeaderValue("application/json");
        return content;
    }

    /// <summary>Waits until every receiver has every answered document, or <paramref name="seconds"/> pass.</summary>
    private static async Task Drain(Receiver[] receivers, Load load, double seconds)
    {
        var expected = load.AnsweredCount;
        var deadline = Stopwatch.StartNew();
        while (deadline.Elapsed.TotalSeconds < seconds && receivers.Any(r => r.Received < expected))
        {
            await Task.Delay(20);
        }
    }

    private static void Print(string mode, string kind, Plan plan, Load load, Group[] groups)
    {
        var measured = load.Measured;
        var result = new Dictionary<string, object?>
        {
            ["mode"] = mode,
            ["kind"] = kind,
            ["rate"] = plan.Rate,
            ["seconds"] = plan.Seconds,
            ["connections"] = plan.Connections,
            ["maxInFlight"] = plan.MaxInFlight,
            ["measuredSent"] = load.MeasuredSent,
            ["measuredPuts"] = measured.Count,
            ["unanswered"] = load.Unanswered,
            ["putErrors"] = load.Errors,
            ["firstError"] = load.FirstError,
            ["achievedRate"] = Math.Round(load.AchievedRate),
            ["pacerStallMs"] = load.StallMs,
            ["skippedSlots"] = load.SkippedSlots,
            ["sendLateP99Ms"] = Stats.Ms(load.SendLatenessUs, 0.99),
            ["putP50Ms"] = Stats.Ms(load.PutLatencyUs, 0.50),
            ["putP99Ms"] = Stats.Ms(load.PutLatencyUs, 0.99),
            ["serverCores"] = Math.Round(load.ServerCores, 2),
            ["clientCores"] = Math.Round(load.ClientCores, 2),
            ["serverCpuUsPerPut"] = Math.Round(load.ServerCpuUsPerPut, 1),
            ["groups"] = groups.Select(g => g.ToJson()).ToArray(),
        };
        Console.WriteLine(JsonSerializer.Serialize(result));
    }
}
