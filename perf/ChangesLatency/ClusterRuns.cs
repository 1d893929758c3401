// Issue 34's replication targets, measured with the pieces of this tool (one clock for the writes'
// answers and the arrivals on the other nodes), driven by perf/load/cluster.sh:
//
//   ChangesLatency replication --url A --watch B,C --db DB [--rate 1000] [--warmup 5] [--seconds 25]
//                              [--connections 16] [--server-pids a,b,c]
//       orders PUT to node A at a steady RATE (open loop, as `idle`), a changes-feed watcher
//       (watch-collection Orders) on each of B and C: latency from the PUT's answer on A to the
//       document's arrival on B, on C, and on both (the later of the two).
//   ChangesLatency bulk --url A --db DB --file ORDERS.ndjson --last-id ID [--watch B,C] [--server-pids a,b,c]
//       posts the NDJSON file to A's bulk_insert (one chunked stream, as bulk.sh does with curl) while
//       a watcher of the last document (watch-doc ID) waits on each of B and C: seconds to A's
//       answer, to the last document's arrival on each node, and the lag of the slowest node after
//       the answer. Documents are applied in etag order in whole batches, so the last document's
//       arrival means everything before it is there too (the script checks the counts after).
//   ChangesLatency assurance --url A --db DB [--connections 16] [--seconds 5] [--rounds 3] [--replicas 1]
//       closed loop: CONNECTIONS workers each POST one order at a time to bulk_docs, alternating
//       phases of SECONDS between a plain write and one with waitForReplicas (A B A B, ROUNDS of
//       each): per variant, writes/s and latency p50/p99/p99.9/max.
using System.Diagnostics;
using System.Text;
using System.Text.Json;

internal static class ClusterRuns
{
    public static async Task ReplicationAsync(Options options)
    {
        var url = options.Require("url").TrimEnd('/');
        var db = options.Require("db");
        var watch = Urls(options.Require("watch"));
        var plan = Plan.From(options, rate: 1000, seconds: 25, connections: 16);
        using var http = Http.Client(plan.Connections);

        var receivers = watch.Select(w => new Receiver(w.Tag, plan.Total)).ToArray();
        using var stop = new CancellationTokenSource();
        var tasks = new List<Task>();
        for (var i = 0; i < watch.Length; i++)
        {
            tasks.Add(await ChangesWatcher.StartAsync(watch[i].Url, db, "Orders", receivers[i], stop.Token));
        }

        var pids = Pids(options);
        var cpu0 = pids.Select(ProcessCpu.Seconds).ToArray();
        var wall = Stopwatch.StartNew();
        var load = new Load(plan, i => Put(url, db, i), http, pids.FirstOrDefault());
        await load.RunAsync();
        var drainStart = Stopwatch.StartNew();
        await Drain(receivers, load.AnsweredCount, options.GetDouble("drain", 30));
        var drained = drainStart.Elapsed.TotalSeconds;
        var cpu1 = pids.Select(ProcessCpu.Seconds).ToArray();
        var seconds = wall.Elapsed.TotalSeconds;
        stop.Cancel();
        await Task.WhenAll(tasks.Select(t => t.ContinueWith(_ => { }, TaskScheduler.Default)));

        // "all": a document is on every watched node once the later of its arrivals happened.
        var all = new Receiver("all", plan.Total);
        for (var i = 0; i < plan.Total; i++)
        {
            var latest = 0;
            var everywhere = true;
            foreach (var receiver in receivers)
            {
                everywhere &= receiver.Arrival[i] != 0;
                latest = Math.Max(latest, receiver.Arrival[i]);
            }
            if (everywhere)
            {
                all.Arrival[i] = latest;
            }
        }
        var groups = receivers.Select(r => Group.Of(r.Name, [r], load).ToJson()).Append(Group.Of("all", [all], load).ToJson()).ToArray();
        Emit(new Dictionary<string, object?>
        {
            ["mode"] = "replication",
            ["rate"] = plan.Rate,
            ["seconds"] = plan.Seconds,
            ["connections"] = plan.Connections,
            ["measuredPuts"] = load.Measured.Count,
            ["unanswered"] = load.Unanswered,
            ["putErrors"] = load.Errors,
            ["firstError"] = load.FirstError,
            ["achievedRate"] = Math.Round(load.AchievedRate),
            ["pacerStallMs"] = load.StallMs,
            ["skippedSlots"] = load.SkippedSlots,
            ["putP50Ms"] = Stats.Ms(load.PutLatencyUs, 0.50),
            ["putP99Ms"] = Stats.Ms(load.PutLatencyUs, 0.99),
            ["drainSeconds"] = Math.Round(drained, 2),
            ["serverCores"] = pids.Select((_, i) => Math.Round((cpu1[i] - cpu0[i]) / seconds, 2)).ToArray(),
            ["clientCores"] = Math.Round(load.ClientCores, 2),
            ["groups"] = groups,
        });
    }

    public static async Task BulkAsync(Options options)
    {
        var url = options.Require("url").TrimEnd('/');
        var db = options.Require("db");
        var file = options.Require("file");
        var lastId = options.Require("last-id");
        var watch = options.TryGet("watch") is { Length: > 0 } w ? Urls(w) : [];
        using var http = Http.Client(4);
        http.Timeout = TimeSpan.FromMinutes(30);

        var arrivals = watch.Select(_ => new TaskCompletionSource<int>(TaskCreationOptions.RunContinuationsAsynchronously)).ToArray();
        using var stop = new CancellationTokenSource();
        var watchers = new List<Task>();
        for (var i = 0; i < watch.Length; i++)
        {
            watchers.Add(await DocWatcher.StartAsync(watch[i].Url, db, lastId, arrivals[i], stop.Token));
        }

        var pids = Pids(options);
        var cpu0 = pids.Select(ProcessCpu.Seconds).ToArray();
        var start = Clock.NowUs();
        await using (var stream = File.OpenRead(file))
        {
            var content = new StreamContent(stream, 1 << 16);
            content.Headers.ContentType = new System.Net.Http.Headers.MediaTypeHeaderValue("application/x-ndjson");
            using var request = new HttpRequestMessage(HttpMethod.Post, $"{url}/databases/{Uri.EscapeDataString(db)}/bulk_insert") { Content = content };
            request.Headers.TransferEncodingChunked = true;
            using var response = await http.SendAsync(request);
            await Http.Ensure(response, "the bulk insert");
        }
        var answered = Clock.NowUs();
        var cpuAnswer = pids.Select(ProcessCpu.Seconds).ToArray();
        // Where the others were when the insert was answered (one GET each, after the clock read).
        var countsAtAnswer = new List<long>();
        foreach (var (_, other) in watch)
        {
            countsAtAnswer.Add(await CountAsync(http, other, db));
        }

        var got = new List<int?>();
        foreach (var arrival in arrivals)
        {
            try
            {
                got.Add(await arrival.Task.WaitAsync(TimeSpan.FromSeconds(options.GetDouble("timeout", 600))));
            }
            catch (TimeoutException)
            {
                got.Add(null);
            }
        }
        var cpu1 = pids.Select(ProcessCpu.Seconds).ToArray();
        stop.Cancel();
        await Task.WhenAll(watchers.Select(t => t.ContinueWith(_ => { }, TaskScheduler.Default)));

        var complete = got.Count == 0 ? answered : got.All(g => g is not null) ? got.Max(g => g!.Value) : (int?)null;
        Emit(new Dictionary<string, object?>
        {
            ["mode"] = "bulk",
            ["insertSeconds"] = Math.Round((answered - start) / 1e6, 3),
            ["arrivalSeconds"] = got.Select(g => g is { } v ? Math.Round((v - start) / 1e6, 3) : (double?)null).ToArray(),
            ["nodes"] = watch.Select(x => x.Tag).ToArray(),
            ["countsAtAnswer"] = countsAtAnswer,
            ["allSeconds"] = complete is { } c ? Math.Round((c - start) / 1e6, 3) : null,
            ["lastLagMs"] = complete is { } c2 ? Math.Round((c2 - answered) / 1e3, 1) : null,
            ["serverCpuToAnswer"] = pids.Select((_, i) => Math.Round(cpuAnswer[i] - cpu0[i], 2)).ToArray(),
            ["serverCpu"] = pids.Select((_, i) => Math.Round(cpu1[i] - cpu0[i], 2)).ToArray(),
        });
    }

    public static async Task AssuranceAsync(Options options)
    {
        var url = options.Require("url").TrimEnd('/');
        var db = options.Require("db");
        var connections = options.GetInt("connections", 16);
        var seconds = options.GetDouble("seconds", 5);
        var rounds = options.GetInt("rounds", 3);
        var replicas = options.GetInt("replicas", 1);
        var warmup = options.GetDouble("warmup", 2);
        using var http = Http.Client(connections);
        var plain = $"{url}/databases/{Uri.EscapeDataString(db)}/bulk_docs";
        var assured = $"{plain}?waitForReplicasTimeout=00:00:15&numberOfReplicasToWaitFor={replicas}&throwOnTimeoutInWaitForReplicas=true";

        var next = 0;
        await Phase(http, plain, connections, warmup, () => Interlocked.Increment(ref next), []); // warm both paths
        await Phase(http, assured, connections, warmup, () => Interlocked.Increment(ref next), []);
        var results = new Dictionary<string, (List<int> Latency, double Seconds, int Errors, string? FirstError)>
        {
            ["plain"] = ([], 0, 0, null),
            ["waitForReplicas"] = ([], 0, 0, null),
        };
        for (var r = 0; r < rounds; r++)
        {
            foreach (var (name, target) in new[] { ("plain", plain), ("waitForReplicas", assured) })
            {
                var latency = new List<int>();
                var (errors, first) = await Phase(http, target, connections, seconds, () => Interlocked.Increment(ref next), latency);
                var old = results[name];
                old.Latency.AddRange(latency);
                results[name] = (old.Latency, old.Seconds + seconds, old.Errors + errors, old.FirstError ?? first);
            }
        }
        Emit(new Dictionary<string, object?>
        {
            ["mode"] = "assurance",
            ["connections"] = connections,
            ["replicas"] = replicas,
            ["rounds"] = rounds,
            ["secondsEach"] = seconds,
            ["variants"] = results.Select(kv =>
            {
                var sorted = kv.Value.Latency.ToArray();
                Array.Sort(sorted);
                return new Dictionary<string, object?>
                {
                    ["name"] = kv.Key,
                    ["writes"] = sorted.Length,
                    ["writesPerSecond"] = Math.Round(sorted.Length / kv.Value.Seconds),
                    ["errors"] = kv.Value.Errors,
                    ["firstError"] = kv.Value.FirstError,
                    ["p50Ms"] = Stats.SortedMs(sorted, 0.50),
                    ["p99Ms"] = Stats.SortedMs(sorted, 0.99),
                    ["p999Ms"] = Stats.SortedMs(sorted, 0.999),
                    ["maxMs"] = sorted.Length == 0 ? null : sorted[^1] / 1000.0,
                };
            }).ToArray(),
        });
    }

    /// <summary>CONNECTIONS workers, one write at a time each, for SECONDS; latencies in µs.</summary>
    private static async Task<(int Errors, string? First)> Phase(HttpClient http, string target, int connections, double seconds, Func<int> nextId, List<int> latencies)
    {
        var end = Stopwatch.GetTimestamp() + (long)(seconds * Stopwatch.Frequency);
        var errors = 0;
        string? first = null;
        var workers = Enumerable.Range(0, connections).Select(async _ =>
        {
            var own = new List<int>();
            while (Stopwatch.GetTimestamp() < end)
            {
                var i = nextId();
                var body = $"{{\"Commands\":[{{\"Id\":\"orders/{i}\",\"Type\":\"PUT\",\"Document\":{{\"Company\":\"companies/{i % 91 + 1}\",\"Freight\":{i % 100},\"@metadata\":{{\"@collection\":\"Orders\"}}}}}}]}}";
                using var content = new ByteArrayContent(Encoding.UTF8.GetBytes(body));
                content.Headers.ContentType = new System.Net.Http.Headers.MediaTypeHeaderValue("application/json");
                var sent = Clock.NowUs();
                try
                {
                    using var response = await http.PostAsync(target, content).ConfigureAwait(false);
                    var text = await response.Content.ReadAsStringAsync().ConfigureAwait(false);
                    if (response.IsSuccessStatusCode)
                    {
                        own.Add(Clock.NowUs() - sent);
                    }
                    else if (Interlocked.Increment(ref errors) == 1)
                    {
                        first = $"{(int)response.StatusCode} {text[..Math.Min(300, text.Length)]}";
                    }
                }
                catch (Exception e) when (e is HttpRequestException or TaskCanceledException)
                {
                    if (Interlocked.Increment(ref errors) == 1)
                    {
                        first = e.GetType().Name + ": " + e.Message;
                    }
                }
            }
            return own;
        }).ToArray();
        foreach (var own in await Task.WhenAll(workers))
        {
            latencies.AddRange(own);
        }
        return (errors, first);
    }

    private static HttpRequestMessage Put(string url, string db, int i) =>
        new(HttpMethod.Put, $"{url}/databases/{db}/docs?id=orders/{i}")
        {
            Content = new StringContent($"{{\"Company\":\"companies/{i % 91 + 1}\",\"Freight\":{i % 100},\"@metadata\":{{\"@collection\":\"Orders\"}}}}", Encoding.UTF8, "application/json"),
        };

    private static async Task Drain(Receiver[] receivers, int expected, double seconds)
    {
        var deadline = Stopwatch.StartNew();
        while (deadline.Elapsed.TotalSeconds < seconds && receivers.Any(r => r.Received < expected))
        {
            await Task.Delay(20);
        }
    }

    private static async Task<long> CountAsync(HttpClient http, string url, string db)
    {
        using var json = JsonDocument.Parse(await http.GetStringAsync($"{url}/databases/{Uri.EscapeDataString(db)}/stats"));
        return json.RootElement.GetProperty("CountOfDocuments").GetInt64();
    }

    /// <summary>"B=http://...,C=http://..." (or bare URLs, tagged by position).</summary>
    private static (string Tag, string Url)[] Urls(string list) =>
        list.Split(',', StringSplitOptions.RemoveEmptyEntries).Select((item, i) =>
        {
            var eq = item.IndexOf('=');
            return eq > 0 ? (item[..eq], item[(eq + 1)..].TrimEnd('/')) : (((char)('B' + i)).ToString(), item.TrimEnd('/'));
        }).ToArray();

    private static int[] Pids(Options options) =>
        options.TryGet("server-pids") is { Length: > 0 } pids ? pids.Split(',').Select(int.Parse).ToArray() : [];

    private static void Emit(Dictionary<string, object?> result) => Console.WriteLine(JsonSerializer.Serialize(result));
}

/// <summary>A watcher of one document (watch-doc): the first message that names it completes the arrival.</summary>
internal static class DocWatcher
{
    public static async Task<Task> StartAsync(string url, string db, string id, TaskCompletionSource<int> arrival, CancellationToken stop)
    {
        var socket = new System.Net.WebSockets.ClientWebSocket();
        await socket.ConnectAsync(new Uri($"{url.Replace("http", "ws", StringComparison.Ordinal)}/databases/{db}/changes"), CancellationToken.None);
        var confirmed = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        var needle = Encoding.UTF8.GetBytes($"\"Id\":{JsonSerializer.Serialize(id)}");
        var loop = Task.Run(async () =>
        {
            try
            {
                await MessageLoop.RunAsync(socket, 64 * 1024, (message, now) =>
                {
                    if (message.Span.IndexOf("\"Type\":\"Confirm\""u8) >= 0)
                    {
                        confirmed.TrySetResult();
                    }
                    if (message.Span.IndexOf(needle) >= 0)
                    {
                        arrival.TrySetResult(now);
                    }
                    return ValueTask.CompletedTask;
                }, stop);
            }
            catch (Exception e)
            {
                confirmed.TrySetException(e);
                arrival.TrySetException(e);
            }
        });
        var command = JsonSerializer.SerializeToUtf8Bytes(new { CommandId = 1, Command = "watch-doc", Param = id });
        await socket.SendAsync(command, System.Net.WebSockets.WebSocketMessageType.Text, true, CancellationToken.None);
        await confirmed.Task.WaitAsync(TimeSpan.FromSeconds(10));
        return loop;
    }
}
