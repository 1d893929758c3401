// The open-loop load: its plan, the receivers that time arrivals, and the pacer that sends PUTs.
using System.Buffers.Text;
using System.Diagnostics;
using System.Globalization;
using System.Net;
using System.Net.WebSockets;
using System.Text;
using System.Text.Json;

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
            {
                return;
            }
            var id = text[..end];
            text = text[end..];
            var separator = id.LastIndexOfAny((byte)'/', (byte)'_');
            if (Utf8Parser.TryParse(id[(separator + 1)..], out int n, out var used) && used == id.Length - separator - 1)
            {
                Record(n, now);
            }
            else
            {
                Unknown++;
            }
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
        {
            await Task.Delay(10);
        }
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
            {
                continue;
            }
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
            {
                Thread.Sleep(1);
            }
            var stalled = false;
            while (Volatile.Read(ref _inFlight) >= plan.MaxInFlight && Stopwatch.GetTimestamp() < end)
            {
                StallMs++;
                stalled = true;
                Thread.Sleep(1);
            }
            var now = Stopwatch.GetTimestamp();
            if (now >= end)
            {
                break;
            }
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
        {
            _firstMeasured = i;
        }
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
            {
                _answered[i] = now;
            }
            else
            {
                Fail($"{(int)response.StatusCode} {await response.Content.ReadAsStringAsync().ConfigureAwait(false)}");
            }
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
