using System.Text;
using BenchmarkDotNet.Attributes;
using BenchmarkDotNet.Engines;
using Jackdaw.Client;
using Jackdaw.Client.Tests.Integration;

namespace Jackdaw.Benchmarks.Client;

/// <summary>
/// Reading the 100,000-order corpus through the client, each order deserialized into a
/// <see cref="CorpusOrder"/> (the server in the benchmark process, on the same 2 cores): streamed
/// by query and by id prefix, against the baseline of the same query as one buffered answer
/// (<c>NoTracking().ToListAsync()</c>), and the stream read as bytes by HttpClient and dropped
/// (the server's side alone). Mean is per document (OperationsPerInvoke), so documents/s = 1 s / Mean.
/// </summary>
[MemoryDiagnoser]
[SimpleJob(RunStrategy.Monitoring, launchCount: 1, warmupCount: 1, iterationCount: 5, invocationCount: 1)]
public class ClientStreamBenchmarks
{
    private const int Documents = 100_000;
    private const string Database = "stream";
    private BenchmarkServer _server = null!;
    private DocumentStore _store = null!;
    private HttpClient _http = null!;

    [GlobalSetup]
    public async Task Setup()
    {
        _server = await BenchmarkServer.StartAsync();
        _store = new DocumentStore { Urls = [_server.Url], Database = Database };
        _store.Conventions.RequestTimeout = TimeSpan.FromMinutes(5);
        _store.Initialize();
        await _store.Maintenance.CreateDatabaseAsync(Database);
        _http = new HttpClient { Timeout = TimeSpan.FromMinutes(5) };
        var lines = new StringBuilder();
        foreach (var (_, line) in CorpusOrder.ReadCorpusWithLines(_store.Conventions.SerializerOptions))
        {
            lines.Append(line).Append('\n');
        }
        using var content = new ByteArrayContent(Encoding.UTF8.GetBytes(lines.ToString()));
        using var response = await _http.PostAsync($"{_server.Url}/databases/{Database}/bulk_insert", content);
        response.EnsureSuccessStatusCode();
    }

    [Benchmark(Baseline = true, OperationsPerInvoke = Documents)]
    public async Task<decimal> BufferedQueryToList()
    {
        using var session = _store.OpenAsyncSession();
        var freight = 0m;
        foreach (var order in await session.Advanced.AsyncRawQuery<CorpusOrder>("from Orders").NoTracking().ToListAsync())
        {
            freight += order.Freight;
        }
        return Check(freight);
    }

    [Benchmark(OperationsPerInvoke = Documents)]
    public async Task<decimal> StreamQuery()
    {
        using var session = _store.OpenAsyncSession();
        var freight = 0m;
        await foreach (var result in session.Advanced.StreamAsync(session.Advanced.AsyncRawQuery<CorpusOrder>("from Orders")))
            freight += result.Document.Freight;
        return Check(freight);
    }

    [Benchmark(OperationsPerInvoke = Documents)]
    public async Task<decimal> StreamByPrefix()
    {
        using var session = _store.OpenAsyncSession();
        var freight = 0m;
        await foreach (var result in session.Advanced.StreamAsync<CorpusOrder>(startsWith: "orders/"))
            freight += result.Document.Freight;
        return Check(freight);
    }

    [Benchmark(OperationsPerInvoke = Documents)]
    public async Task<long> StreamBytesOnly()
    {
        using var response = await _http.GetAsync($"{_server.Url}/databases/{Database}/streams/docs?startsWith=orders/", HttpCompletionOption.ResponseHeadersRead);
        await using var body = await response.Content.ReadAsStreamAsync();
        var buffer = new byte[64 * 1024];
        long total = 0;
        int read;
        while ((read = await body.ReadAsync(buffer)) > 0)
        {
            total += read;
        }
        return total;
    }

    private static decimal Check(decimal freight) => freight > 0 ? freight : throw new InvalidOperationException("No orders were read.");

    [GlobalCleanup]
    public async Task Cleanup()
    {
        _http.Dispose();
        _store.Dispose();
        await _server.DisposeAsync();
    }
}
