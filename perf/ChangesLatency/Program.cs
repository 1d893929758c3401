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
            await Http.Ensure(await http.PutAsync($"{url}/{db}", null), "create the pouchdb database");

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
            await Task.Delay(20);
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

internal sealed record Plan(int Rate, double Warmup, double Seconds, int Connections, int MaxInFlight)
{
    public int WarmupCount => (int)(Rate * Warmup);

    public int Total => WarmupCount + (int)(Rate * Seconds);

    public static Plan From(Options options, int rate, double seconds, int connections)
    {
        var r = options.GetInt("rate", rate);
        var c = options.GetInt("connections", connections);
        return new Plan(r, options.GetDouble("warmup", 5), options.GetDouble("seconds", seconds), c, options.GetInt("max-in-flight", 8 * c));
    }
}

/// <summary>What one watcher (or worker) received: the arrival time per document number.</summary>
internal sealed class Receiver(string name, int total)
{
    public string Name { get; } = name;

    public int[] Arrival { get; } = new int[total];

    /// <summary>Subscription worker only: per batch, acknowledgement sent → Confirm received (the durable store of the position).</summary>
    public List<int> AckUs { get; } = [];

    public int Batches;
    public int Messages;
    public int Received;
    public int Duplicates;
    public int Unknown;
    public int Errors;
    public string? Closed;

    public void Record(int id, int now)
    {
        if ((uint)id >= (uint)Arrival.Length)
        {
            Unknown++;
            return;
        }
        if (Arrival[id] != 0)
        {
            Duplicates++;
            return;
        }
        Arrival[id] = now;
        Volatile.Write(ref Received, Received + 1);
    }

    /// <summary>
    /// Records every <c>"Id":"orders/N"</c> (or <paramref name="key"/>) in <paramref name="text"/>:
    /// each change message holds its document id once.
    /// </summary>
    public void Scan(ReadOnlySpan<byte> text, ReadOnlySpan<byte> key, int now)
    {
        int at;
        while ((at = text.IndexOf(key)) >= 0)
        {
            text = text[(at + key.Length)..];
            var end = text.IndexOf((byte)'"');
            if (end < 0)
                return;
            var id = text[..end];
            text = text[end..];
            var separator = id.LastIndexOfAny((byte)'/', (byte)'_');
            if (Utf8Parser.TryParse(id[(separator + 1)..], out int n, out var used) && used == id.Length - separator - 1)
                Record(n, now);
            else
                Unknown++;
        }
    }
}

/// <summary>
/// The paced PUT load: open loop at the plan's rate for warm-up + seconds of wall time, answers
/// timed per document. Documents sent after the warm-up are measured.
/// </summary>
internal sealed class Load(Plan plan, Func<int, HttpRequestMessage> create, HttpClient http, int serverPid)
{
    private readonly int[] _sent = new int[plan.Total];
    private readonly int[] _due = new int[plan.Total];
    private readonly int[] _answered = new int[plan.Total];
    private readonly TaskCompletionSource _paced = new(TaskCreationOptions.RunContinuationsAsynchronously);
    private readonly CancellationTokenSource _giveUp = new();
    private int _inFlight;
    private int _firstMeasured = -1;
    private int _sentCount;
    private double _server0, _server1, _self0, _self1;
    private int _wall0, _wall1;

    public int Errors;
    public string? FirstError;
    public long StallMs;
    public long SkippedSlots;

    public int[] Answered => _answered;

    public int AnsweredCount => _answered.Count(a => a != 0);

    /// <summary>Measured document numbers whose PUT succeeded.</summary>
    public List<int> Measured { get; } = [];

    /// <summary>Measured PUTs sent (answered or not).</summary>
    public int MeasuredSent => _sentCount - _firstMeasured;

    /// <summary>PUTs without an answer 30 s after the schedule ended (given up).</summary>
    public int Unanswered { get; private set; }

    public int[] SendLatenessUs { get; private set; } = [];

    public int[] PutLatencyUs { get; private set; } = [];

    public double AchievedRate { get; private set; }

    public double ServerCores { get; private set; }

    public double ClientCores { get; private set; }

    public double ServerCpuUsPerPut { get; private set; }

    public async Task RunAsync()
    {
        var pacer = new Thread(Pace) { IsBackground = true, Name = "pacer", Priority = ThreadPriority.AboveNormal };
        pacer.Start();
        await _paced.Task;
        var wait = Stopwatch.StartNew();
        while (Volatile.Read(ref _inFlight) > 0 && wait.Elapsed < TimeSpan.FromSeconds(30))
            await Task.Delay(10);
        Unanswered = Volatile.Read(ref _inFlight);
        if (Unanswered > 0)
        {
            Console.Error.WriteLine($"{Unanswered} PUTs unanswered 30 s after the schedule; given up");
            _giveUp.Cancel();
        }

        var first = _firstMeasured;
        var lateness = new List<int>();
        var put = new List<int>();
        for (var i = first; i < _sentCount; i++)
        {
            lateness.Add(_sent[i] - _due[i]);
            if (_answered[i] == 0)
                continue;
            Measured.Add(i);
            put.Add(_answered[i] - _sent[i]);
        }
        SendLatenessUs = [.. lateness];
        PutLatencyUs = [.. put];
        var wall = (_wall1 - _wall0) / 1e6;
        AchievedRate = Measured.Count / wall;
        ServerCores = (_server1 - _server0) / wall;
        ClientCores = (_self1 - _self0) / wall;
        ServerCpuUsPerPut = (_server1 - _server0) * 1e6 / Math.Max(1, _sentCount - first);
    }

    private void Pace()
    {
        var frequency = (double)Stopwatch.Frequency;
        var ticksPerPut = frequency / plan.Rate;
        var behindLimit = (long)(0.1 * frequency);
        var t0 = Stopwatch.GetTimestamp();
        var t0Us = Clock.NowUs();
        var measureFrom = t0 + (long)(plan.Warmup * frequency);
        var end = t0 + (long)((plan.Warmup + plan.Seconds) * frequency);
        // i numbers the documents sent; slot the schedule's places. Slots more than 100 ms in the
        // past after the pacer had to wait for the in-flight cap are skipped (counted), not sent in a
        // burst: the rate sent never exceeds the plan's.
        long slot = 0;
        var i = 0;
        for (; i < plan.Total; i++, slot++)
        {
            var due = t0 + (long)(slot * ticksPerPut);
            while (Stopwatch.GetTimestamp() < due)
                Thread.Sleep(1);
            var stalled = false;
            while (Volatile.Read(ref _inFlight) >= plan.MaxInFlight && Stopwatch.GetTimestamp() < end)
            {
                StallMs++;
                stalled = true;
                Thread.Sleep(1);
            }
            var now = Stopwatch.GetTimestamp();
            if (now >= end)
                break;
            if (stalled && now - due > behindLimit)
            {
                var next = (long)Math.Ceiling((now - t0) / ticksPerPut);
                SkippedSlots += next - slot;
                slot = next;
            }
            if (_firstMeasured < 0 && now >= measureFrom)
            {
                _firstMeasured = i;
                Snapshot(ref _server0, ref _self0, ref _wall0);
            }
            _due[i] = t0Us + (int)(slot * 1e6 / plan.Rate);
            _sent[i] = Clock.NowUs();
            Interlocked.Increment(ref _inFlight);
            _ = PutAsync(i);
        }
        _sentCount = i;
        if (_firstMeasured < 0)
            _firstMeasured = i;
        Snapshot(ref _server1, ref _self1, ref _wall1);
        _paced.TrySetResult();
    }

    private void Snapshot(ref double server, ref double self, ref int wall)
    {
        server = ProcessCpu.Seconds(serverPid);
        self = ProcessCpu.Seconds(Environment.ProcessId);
        wall = Clock.NowUs();
    }

    private async Task PutAsync(int i)
    {
        try
        {
            using var request = create(i);
            using var response = await http.SendAsync(request, HttpCompletionOption.ResponseContentRead, _giveUp.Token).ConfigureAwait(false);
            var now = Clock.NowUs();
            if (response.IsSuccessStatusCode)
                _answered[i] = now;
            else
                Fail($"{(int)response.StatusCode} {await response.Content.ReadAsStringAsync().ConfigureAwait(false)}");
        }
        catch (OperationCanceledException) when (_giveUp.IsCancellationRequested)
        {
        }
        catch (Exception e)
        {
            Fail(e.GetType().Name + ": " + e.Message);
        }
        finally
        {
            Interlocked.Decrement(ref _inFlight);
        }
    }

    private void Fail(string error)
    {
        if (Interlocked.Increment(ref Errors) == 1)
        {
            FirstError = error;
            Console.Error.WriteLine("PUT failed: " + error);
        }
    }
}

/// <summary>Latencies of a set of receivers over the measured documents.</summary>
internal sealed class Group
{
    public required string Name { get; init; }
    public required int Receivers { get; init; }
    public required long Expected { get; init; }
    public required long Missing { get; init; }
    public required int MaxMissingPerReceiver { get; init; }
    public required int ReceiversMissingSome { get; init; }
    public required long Duplicates { get; init; }
    public required long Unknown { get; init; }
    public required int Errors { get; init; }
    public required string[] Closed { get; init; }
    public required int[] LatencyUs { get; init; }
    public required int Batches { get; init; }
    public required long Messages { get; init; }
    public required long AllReceived { get; init; }
    public required int[] AckUs { get; init; }

    public static Group Of(string name, Receiver[] receivers, Load load)
    {
        var latencies = new List<int>(load.Measured.Count * receivers.Length);
        long missing = 0;
        var maxMissing = 0;
        var missingSome = 0;
        foreach (var receiver in receivers)
        {
            var own = 0;
            foreach (var i in load.Measured)
            {
                var arrival = receiver.Arrival[i];
                if (arrival == 0)
                    own++;
                else
                    latencies.Add(arrival - load.Answered[i]);
            }
            missing += own;
            maxMissing = Math.Max(maxMissing, own);
            if (own > 0)
                missingSome++;
        }
        var sorted = latencies.ToArray();
        Array.Sort(sorted);
        return new Group
        {
            Name = name,
            Receivers = receivers.Length,
            Expected = (long)load.Measured.Count * receivers.Length,
            Missing = missing,
            MaxMissingPerReceiver = maxMissing,
            ReceiversMissingSome = missingSome,
            Duplicates = receivers.Sum(r => (long)r.Duplicates),
            Unknown = receivers.Sum(r => (long)r.Unknown),
            Errors = receivers.Sum(r => r.Errors),
            Closed = receivers.Where(r => r.Closed is not null).Select(r => $"{r.Name}: {r.Closed}").Take(5).ToArray(),
            LatencyUs = sorted,
            Batches = receivers.Sum(r => r.Batches),
            Messages = receivers.Sum(r => (long)r.Messages),
            AllReceived = receivers.Sum(r => (long)r.Received),
            AckUs = receivers.SelectMany(r => r.AckUs).ToArray(),
        };
    }

    public Dictionary<string, object?> ToJson() => new()
    {
        ["name"] = Name,
        ["receivers"] = Receivers,
        ["expected"] = Expected,
        ["received"] = LatencyUs.Length,
        ["missing"] = Missing,
        ["maxMissingPerReceiver"] = MaxMissingPerReceiver,
        ["receiversMissingSome"] = ReceiversMissingSome,
        ["duplicates"] = Duplicates,
        ["unknown"] = Unknown,
        ["errors"] = Errors,
        ["closed"] = Closed,
        ["minMs"] = LatencyUs.Length == 0 ? null : LatencyUs[0] / 1000.0,
        ["p50Ms"] = Stats.SortedMs(LatencyUs, 0.50),
        ["p99Ms"] = Stats.SortedMs(LatencyUs, 0.99),
        ["p999Ms"] = Stats.SortedMs(LatencyUs, 0.999),
        ["maxMs"] = LatencyUs.Length == 0 ? null : LatencyUs[^1] / 1000.0,
        ["negative"] = LatencyUs.Count(l => l < 0),
        ["batches"] = Batches,
        ["messages"] = Messages,
        ["eventsPerMessage"] = Messages == 0 ? null : Math.Round((double)AllReceived / Messages, 1),
        ["ackP50Ms"] = Stats.Ms(AckUs, 0.50),
        ["ackP99Ms"] = Stats.Ms(AckUs, 0.99),
        ["ackMaxMs"] = Stats.Ms(AckUs, 1.0),
    };
}

internal static class Stats
{
    public static double? Ms(int[] values, double q)
    {
        var sorted = (int[])values.Clone();
        Array.Sort(sorted);
        return SortedMs(sorted, q);
    }

    public static double? SortedMs(int[] sorted, double q)
    {
        if (sorted.Length == 0)
            return null;
        var index = Math.Clamp((int)Math.Ceiling(q * sorted.Length) - 1, 0, sorted.Length - 1);
        return Math.Round(sorted[index] / 1000.0, 3);
    }
}

/// <summary>A Jackdaw changes-feed watcher: the WebSocket, one watch command, then DocumentChange arrays.</summary>
internal static class ChangesWatcher
{
    public static async Task<Task> StartAsync(string url, string db, string collection, Receiver receiver, CancellationToken stop)
    {
        var socket = new ClientWebSocket();
        await socket.ConnectAsync(new Uri($"{url.Replace("http", "ws", StringComparison.Ordinal)}/databases/{db}/changes"), CancellationToken.None);
        var confirmed = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        var loop = ReceiveAsync(socket, receiver, confirmed, stop);
        var command = JsonSerializer.SerializeToUtf8Bytes(new { CommandId = 1, Command = "watch-collection", Param = collection });
        await socket.SendAsync(command, WebSocketMessageType.Text, true, CancellationToken.None);
        await confirmed.Task.WaitAsync(TimeSpan.FromSeconds(10));
        return loop;
    }

    private static async Task ReceiveAsync(ClientWebSocket socket, Receiver receiver, TaskCompletionSource confirmed, CancellationToken stop)
    {
        var buffer = new byte[128 * 1024];
        var count = 0;
        try
        {
            while (true)
            {
                if (count == buffer.Length)
                    Array.Resize(ref buffer, buffer.Length * 2);
                var result = await socket.ReceiveAsync(buffer.AsMemory(count), stop);
                if (result.MessageType == WebSocketMessageType.Close)
                {
                    receiver.Closed = $"closed by the server: {socket.CloseStatus} {socket.CloseStatusDescription}";
                    confirmed.TrySetException(new InvalidOperationException(receiver.Closed));
                    return;
                }
                count += result.Count;
                if (!result.EndOfMessage)
                    continue;
                var now = Clock.NowUs();
                receiver.Messages++;
                var text = buffer.AsSpan(0, count);
                receiver.Scan(text, "\"Id\":\""u8, now);
                if (text.IndexOf("\"Type\":\"Confirm\""u8) >= 0)
                    confirmed.TrySetResult();
                if (text.IndexOf("\"Type\":\"Error\""u8) >= 0)
                {
                    receiver.Errors++;
                    Console.Error.WriteLine($"{receiver.Name}: {Encoding.UTF8.GetString(text[..Math.Min(text.Length, 400)])}");
                }
                count = 0;
            }
        }
        catch (OperationCanceledException) when (stop.IsCancellationRequested)
        {
        }
        catch (Exception e)
        {
            receiver.Closed = e.GetType().Name + ": " + e.Message;
            confirmed.TrySetException(e);
        }
        finally
        {
            socket.Abort();
            socket.Dispose();
        }
    }
}

/// <summary>A Jackdaw subscription worker: batches in, an acknowledgement of each.</summary>
internal static class SubscriptionWorker
{
    public static async Task<Task> StartAsync(string url, string db, string name, Receiver receiver, CancellationToken stop)
    {
        var socket = new ClientWebSocket();
        await socket.ConnectAsync(new Uri($"{url.Replace("http", "ws", StringComparison.Ordinal)}/databases/{db}/subscriptions/connect?name={name}&strategy=OpenIfFree"), CancellationToken.None);
        var accepted = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        var loop = ReceiveAsync(socket, receiver, accepted, stop);
        await accepted.Task.WaitAsync(TimeSpan.FromSeconds(10));
        return loop;
    }

    private static async Task ReceiveAsync(ClientWebSocket socket, Receiver receiver, TaskCompletionSource accepted, CancellationToken stop)
    {
        var buffer = new byte[64 * 1024];
        var count = 0;
        var ackSent = 0;
        try
        {
            while (true)
            {
                if (count == buffer.Length)
                    Array.Resize(ref buffer, buffer.Length * 2);
                var result = await socket.ReceiveAsync(buffer.AsMemory(count), stop);
                if (result.MessageType == WebSocketMessageType.Close)
                {
                    receiver.Closed = $"closed by the server: {socket.CloseStatus} {socket.CloseStatusDescription}";
                    accepted.TrySetException(new InvalidOperationException(receiver.Closed));
                    return;
                }
                count += result.Count;
                if (!result.EndOfMessage)
                    continue;
                var now = Clock.NowUs();
                long? ack = null;
                if (ackSent != 0 && buffer.AsSpan(0, count).IndexOf("\"Type\":\"Confirm\""u8) >= 0)
                {
                    receiver.AckUs.Add(now - ackSent);
                    ackSent = 0;
                }
                using (var json = JsonDocument.Parse(buffer.AsMemory(0, count)))
                {
                    var root = json.RootElement;
                    switch (root.GetProperty("Type").GetString())
                    {
                        case "ConnectionStatus":
                            if (root.GetProperty("Status").GetString() == "Accepted")
                                accepted.TrySetResult();
                            else
                                throw new InvalidOperationException("subscription: " + root.GetRawText());
                            break;
                        case "Batch":
                            foreach (var item in root.GetProperty("Items").EnumerateArray())
                            {
                                var id = item.GetProperty("Id").GetString()!;
                                receiver.Record(int.Parse(id.AsSpan(id.LastIndexOf('/') + 1), CultureInfo.InvariantCulture), now);
                            }
                            ack = root.GetProperty("LastEtag").GetInt64();
                            receiver.Batches++;
                            break;
                        case "Error":
                            receiver.Errors++;
                            Console.Error.WriteLine("subscription: " + root.GetRawText());
                            break;
                    }
                }
                count = 0;
                if (ack is { } etag)
                {
                    ackSent = Clock.NowUs();
                    await socket.SendAsync(Encoding.UTF8.GetBytes($"{{\"Type\":\"Acknowledge\",\"Etag\":{etag}}}"), WebSocketMessageType.Text, true, stop);
                }
            }
        }
        catch (OperationCanceledException) when (stop.IsCancellationRequested)
        {
        }
        catch (Exception e)
        {
            receiver.Closed = e.GetType().Name + ": " + e.Message;
            accepted.TrySetException(e);
        }
        finally
        {
            socket.Abort();
            socket.Dispose();
        }
    }
}

/// <summary>A pouchdb-server (CouchDB) continuous changes feed: one JSON line per change.</summary>
internal static class PouchWatcher
{
    public static Task<Task> StartAsync(HttpClient http, string url, string db, Receiver receiver, CancellationToken stop) =>
        Task.FromResult(ReceiveAsync(http, $"{url}/{db}/_changes?feed=continuous&since=now&heartbeat=10000", receiver, stop));

    private static async Task ReceiveAsync(HttpClient http, string uri, Receiver receiver, CancellationToken stop)
    {
        try
        {
            using var response = await http.GetAsync(uri, HttpCompletionOption.ResponseHeadersRead, stop);
            response.EnsureSuccessStatusCode();
            await using var stream = await response.Content.ReadAsStreamAsync(stop);
            var buffer = new byte[64 * 1024];
            var count = 0;
            while (true)
            {
                if (count == buffer.Length)
                    Array.Resize(ref buffer, buffer.Length * 2);
                var read = await stream.ReadAsync(buffer.AsMemory(count), stop);
                if (read == 0)
                {
                    receiver.Closed = "the feed ended";
                    return;
                }
                var now = Clock.NowUs();
                receiver.Messages++;
                count += read;
                var complete = buffer.AsSpan(0, count).LastIndexOf((byte)'\n') + 1;
                if (complete == 0)
                    continue;
                receiver.Scan(buffer.AsSpan(0, complete), "\"id\":\""u8, now);
                buffer.AsSpan(complete, count - complete).CopyTo(buffer);
                count -= complete;
            }
        }
        catch (OperationCanceledException) when (stop.IsCancellationRequested)
        {
        }
        catch (Exception e)
        {
            receiver.Closed = e.GetType().Name + ": " + e.Message;
            Console.Error.WriteLine($"{receiver.Name}: {receiver.Closed}");
        }
    }
}

internal static class Http
{
    public static HttpClient Client(int connections) => new(new SocketsHttpHandler
    {
        MaxConnectionsPerServer = connections,
        UseProxy = false,
        AllowAutoRedirect = false,
        AutomaticDecompression = DecompressionMethods.None,
        PooledConnectionLifetime = Timeout.InfiniteTimeSpan,
        PooledConnectionIdleTimeout = TimeSpan.FromMinutes(5),
    })
    { Timeout = TimeSpan.FromMinutes(5) };

    public static async Task Ensure(HttpResponseMessage response, string what)
    {
        if (!response.IsSuccessStatusCode)
            throw new InvalidOperationException($"{what}: {(int)response.StatusCode} {await response.Content.ReadAsStringAsync()}");
    }
}

/// <summary>CPU time (user + system, seconds) of a process, from /proc (Linux).</summary>
internal static class ProcessCpu
{
    private const double TicksPerSecond = 100; // USER_HZ

    public static double Seconds(int pid)
    {
        if (pid == 0)
            return 0;
        try
        {
            var stat = File.ReadAllText($"/proc/{pid}/stat");
            var fields = stat[(stat.LastIndexOf(')') + 2)..].Split(' ');
            return (long.Parse(fields[11], CultureInfo.InvariantCulture) + long.Parse(fields[12], CultureInfo.InvariantCulture)) / TicksPerSecond;
        }
        catch (IOException)
        {
            return 0;
        }
    }
}

internal sealed class Options
{
    private readonly Dictionary<string, string> _values = [];

    public static Options Parse(string[] args)
    {
        var options = new Options();
        for (var i = 0; i + 1 < args.Length; i += 2)
        {
            if (!args[i].StartsWith("--", StringComparison.Ordinal))
                throw new ArgumentException($"expected --name value, got '{args[i]}'");
            options._values[args[i][2..]] = args[i + 1];
        }
        return options;
    }

    public string? TryGet(string name) => _values.TryGetValue(name, out var value) ? value : null;

    public string Require(string name) => _values.TryGetValue(name, out var value) ? value : throw new ArgumentException($"--{name} is required");

    public int GetInt(string name, int fallback) => _values.TryGetValue(name, out var value) ? int.Parse(value, CultureInfo.InvariantCulture) : fallback;

    public double GetDouble(string name, double fallback) => _values.TryGetValue(name, out var value) ? double.Parse(value, CultureInfo.InvariantCulture) : fallback;
}
