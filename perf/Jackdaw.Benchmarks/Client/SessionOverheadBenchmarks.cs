using BenchmarkDotNet.Attributes;
using BenchmarkDotNet.Configs;

namespace Jackdaw.Benchmarks.Client;

/// <summary>
/// What a session costs over the bare HTTP calls it makes: loading one ~850-byte order (GET),
/// and loading, changing and saving it (GET + bulk_docs, a durable write). See
/// <see cref="SessionOverheadFixture"/> for both sides; <see cref="SessionOverheadAbBenchmarks"/>
/// measures the same pairs interleaved, for when this machine's drift hides the ratio here.
/// </summary>
[MemoryDiagnoser]
[GroupBenchmarksBy(BenchmarkLogicalGroupRule.ByCategory)]
[CategoriesColumn]
public class SessionOverheadBenchmarks
{
    private SessionOverheadFixture _fixture = null!;

    [GlobalSetup]
    public async Task Setup() => _fixture = await SessionOverheadFixture.StartAsync();

    [Benchmark(Baseline = true)]
    [BenchmarkCategory("Load")]
    public Task<int> RawGet() => _fixture.RawGet();

    [Benchmark]
    [BenchmarkCategory("Load")]
    public Task<decimal> SessionLoad() => _fixture.SessionLoad();

    [Benchmark(Baseline = true)]
    [BenchmarkCategory("LoadAndSave")]
    public Task<int> RawGetAndBulkDocs() => _fixture.RawGetAndBulkDocs();

    [Benchmark]
    [BenchmarkCategory("LoadAndSave")]
    public Task SessionLoadChangeAndSave() => _fixture.SessionLoadChangeAndSave();

    [GlobalCleanup]
    public async Task Cleanup() => await _fixture.DisposeAsync();
}
