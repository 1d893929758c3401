using System.Text;
using BenchmarkDotNet.Attributes;
using BenchmarkDotNet.Configs;
using Jackdaw.Client;

namespace Jackdaw.Benchmarks.Client;

/// <summary>
/// What a session costs over the bare HTTP calls it makes, against the in-process server: loading
/// one ~850-byte order (GET), and loading, changing and saving it (GET + bulk_docs, a durable
/// write). The raw baseline sends the same requests with prebuilt bodies and reads the answers
/// as bytes; the session deserializes, snapshots, detects the change and serializes.
/// </summary>
[MemoryDiagnoser]
[GroupBenchmarksBy(BenchmarkLogicalGroupRule.ByCategory)]
[CategoriesColumn]
public class SessionOverheadBenchmarks
{
    private const string Database = "session";
    private BenchmarkServer? _server;
    private DocumentStore _store = null!;
    private HttpClient _http = null!;
    private string _getUrl = "";
    private string _bulkDocsUrl = "";
    private byte[][] _rawBodies = null!;
    private int _counter;

    [GlobalSetup]
    public async Task Setup()
    {
        // JACKDAW_BENCH_URL points at a server in its own process; without it the server runs in this one.
        var url = Environment.GetEnvironmentVariable("JACKDAW_BENCH_URL");
        if (string.IsNullOrEmpty(url))
        {
            _server = await BenchmarkServer.StartAsync();
            url = _server.Url;
        }

        _store = new DocumentStore { Urls = [url], Database = Database }.Initialize();
        await _store.Maintenance.EnsureDatabaseExistsAsync(Database);
        var (order, line) = OrdersCorpus.Read(_store.Conventions.SerializerOptions)[0];
        using (var session = _store.OpenAsyncSession())
        {
            await session.StoreAsync(order);
            await session.SaveChangesAsync();
        }

        _http = new HttpClient();
        _getUrl = $"{url}/databases/{Database}/docs?id={Uri.EscapeDataString(order.Id!)}";
        _bulkDocsUrl = $"{url}/databases/{Database}/bulk_docs";

        // Two bodies with different Freight, alternated so every save really changes the document.
        _rawBodies = [.. new[] { "1.5", "2.5" }.Select(freight =>
        {
            var document = System.Text.RegularExpressions.Regex.Replace(line, "\"Freight\":[0-9.]+", $"\"Freight\":{freight}");
            return Encoding.UTF8.GetBytes($"{{\"Commands\":[{{\"Type\":\"PUT\",\"Id\":\"{order.Id}\",\"Document\":{document},\"ChangeVector\":null}}]}}");
        })];
    }

    [Benchmark(Baseline = true)]
    [BenchmarkCategory("Load")]
    public async Task<int> RawGet()
    {
        using var response = await _http.GetAsync(_getUrl);
        return (await response.EnsureSuccessStatusCode().Content.ReadAsByteArrayAsync()).Length;
    }

    [Benchmark]
    [BenchmarkCategory("Load")]
    public async Task<decimal> SessionLoad()
    {
        using var session = _store.OpenAsyncSession();
        var order = await session.LoadAsync<Order>("orders/1");
        return order!.Freight;
    }

    [Benchmark(Baseline = true)]
    [BenchmarkCategory("LoadAndSave")]
    public async Task<int> RawGetAndBulkDocs()
    {
        using (var get = await _http.GetAsync(_getUrl))
            await get.EnsureSuccessStatusCode().Content.ReadAsByteArrayAsync();
        using var content = new ByteArrayContent(_rawBodies[++_counter & 1]);
        content.Headers.ContentType = new("application/json");
        using var put = await _http.PostAsync(_bulkDocsUrl, content);
        return (await put.EnsureSuccessStatusCode().Content.ReadAsByteArrayAsync()).Length;
    }

    [Benchmark]
    [BenchmarkCategory("LoadAndSave")]
    public async Task SessionLoadChangeAndSave()
    {
        using var session = _store.OpenAsyncSession();
        var order = await session.LoadAsync<Order>("orders/1");
        order!.Freight = (++_counter & 1) == 0 ? 1.5m : 2.5m;
        await session.SaveChangesAsync();
    }

    [GlobalCleanup]
    public async Task Cleanup()
    {
        _http.Dispose();
        _store.Dispose();
        if (_server is not null)
            await _server.DisposeAsync();
    }
}
