using System.Diagnostics;
using BenchmarkDotNet.Attributes;
using BenchmarkDotNet.Engines;

namespace Jackdaw.Benchmarks.Client;

/// <summary>
/// The pairs of <see cref="SessionOverheadBenchmarks"/> measured interleaved, for a machine whose
/// speed drifts from one second to the next: each invocation is one round that times the raw call
/// and the session call back to back (which one goes first alternates), so both halves of a round
/// see the same machine. At the end each method prints the median raw and session times and the
/// median of the per-round ratios session / raw, the figure to read; BenchmarkDotNet's Mean here
/// is one whole round.
/// </summary>
[MemoryDiagnoser]
[SimpleJob(RunStrategy.Monitoring, launchCount: 1, warmupCount: 2, iterationCount: 20, invocationCount: 250)]
public class SessionOverheadAbBenchmarks
{
    // The first rounds (jitting, warm-up, connection set-up) are left out of the figures.
    private const double WarmupShare = 0.2;
    private readonly List<(long Raw, long Session)> _rounds = [];
    private SessionOverheadFixture _fixture = null!;
    private Func<Task> _rawGet = null!;
    private Func<Task> _sessionLoad = null!;
    private Func<Task> _rawGetAndBulkDocs = null!;
    private Func<Task> _sessionLoadChangeAndSave = null!;
    private string _method = "";

    [GlobalSetup]
    public async Task Setup()
    {
        _fixture = await SessionOverheadFixture.StartAsync();
        _rawGet = _fixture.RawGet;
        _sessionLoad = _fixture.SessionLoad;
        _rawGetAndBulkDocs = _fixture.RawGetAndBulkDocs;
        _sessionLoadChangeAndSave = _fixture.SessionLoadChangeAndSave;
    }

    [Benchmark]
    public Task LoadRound()
    {
        _method = nameof(LoadRound);
        return RoundAsync(_rawGet, _sessionLoad);
    }

    [Benchmark]
    public Task LoadAndSaveRound()
    {
        _method = nameof(LoadAndSaveRound);
        return RoundAsync(_rawGetAndBulkDocs, _sessionLoadChangeAndSave);
    }

    [GlobalCleanup]
    public async Task Cleanup()
    {
        await _fixture.DisposeAsync();
        var kept = _rounds.Skip((int)(_rounds.Count * WarmupShare)).ToList();
        if (kept.Count == 0)
        {
            return;
        }
        var raw = Median(kept.Select(r => (double)r.Raw));
        var session = Median(kept.Select(r => (double)r.Session));
        var ratios = kept.Select(r => (double)r.Session / r.Raw).Order().ToList();
        var microseconds = 1e6 / Stopwatch.Frequency;
        Console.WriteLine(
            $"// A/B {_method}: {kept.Count} rounds (first {_rounds.Count - kept.Count} left out): raw median {raw * microseconds:F1} us, " +
            $"session median {session * microseconds:F1} us, median per-round ratio {ratios[ratios.Count / 2]:F3} " +
            $"(quartiles {ratios[ratios.Count / 4]:F3}-{ratios[ratios.Count * 3 / 4]:F3})");
    }

    private async Task RoundAsync(Func<Task> raw, Func<Task> session)
    {
        long rawTicks, sessionTicks;
        if ((_rounds.Count & 1) == 0)
        {
            rawTicks = await TimeAsync(raw);
            sessionTicks = await TimeAsync(session);
        }
        else
        {
            sessionTicks = await TimeAsync(session);
            rawTicks = await TimeAsync(raw);
        }

        _rounds.Add((rawTicks, sessionTicks));
    }

    private static async Task<long> TimeAsync(Func<Task> operation)
    {
        var start = Stopwatch.GetTimestamp();
        await operation();
        return Stopwatch.GetTimestamp() - start;
    }

    private static double Median(IEnumerable<double> values)
    {
        var sorted = values.Order().ToList();
        return sorted[sorted.Count / 2];
    }
}
