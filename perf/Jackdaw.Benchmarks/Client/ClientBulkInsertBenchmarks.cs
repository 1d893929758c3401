using System.Text;
using BenchmarkDotNet.Attributes;
using BenchmarkDotNet.Engines;
using Jackdaw.Client;
using Jackdaw.Client.Tests.Integration;

namespace Jackdaw.Benchmarks.Client;

/// <summary>
/// Loading the 100,000-order corpus into a fresh database through the client: bulk insert (one
/// streaming NDJSON request) against the baseline of sessions saving batches of 1,000 through
/// <c>bulk_docs</c>, and the same NDJSON posted raw by HttpClient as the server's ceiling.
/// Mean is per document (OperationsPerInvoke), so documents/s = 1 s / Mean.
/// </summary>
[MemoryDiagnoser]
[SimpleJob(RunStrategy.Monitoring, launchCount: 1, warmupCount: 1, iterationCount: 3, invocationCount: 1)]
public class ClientBulkInsertBenchmarks
{
    private const int Documents = 100_000;
    private BenchmarkServer _server = null!;
    private DocumentStore _store = null!;
    private List<CorpusOrder> _orders = null!;
    private byte[] _ndjson = null!;
    private HttpClient _http = null!;
    private string _database = "";
    private int _iteration;

    [GlobalSetup]
    public async Task Setup()
    {
        _server = await BenchmarkServer.StartAsync();
        _store = new DocumentStore { Urls = [_server.Url] }.Initialize();
        var corpus = CorpusOrder.ReadCorpusWithLines(_store.Conventions.SerializerOptions).ToList();
        _orders = corpus.Select(c => c.Order).ToList();
        var text = new StringBuilder();
        foreach (var (order, line) in corpus)
        {
            text.Append("{\"Id\":\"").Append(order.Id).Append("\",\"Document\":").Append(line).Append("}\n");
        }
        _ndjson = Encoding.UTF8.GetBytes(text.ToString());
        _http = new HttpClient();
    }

    [IterationSetup]
    public void CreateDatabase()
    {
        _database = $"bulk{++_iteration}";
        _store.Maintenance.CreateDatabaseAsync(_database).GetAwaiter().GetResult();
    }

    [IterationCleanup]
    public void DeleteDatabase() => _store.Maintenance.DeleteDatabaseAsync(_database).GetAwaiter().GetResult();

    [Benchmark(Baseline = true, OperationsPerInvoke = Documents)]
    public async Task SessionBulkDocsBatchesOf1000()
    {
        for (var start = 0; start < _orders.Count; start += 1000)
        {
            using var session = _store.OpenAsyncSession(_database);
            for (var i = start; i < Math.Min(start + 1000, _orders.Count); i++)
            {
                await session.StoreAsync(_orders[i]);
            }
            await session.SaveChangesAsync();
        }
    }

    [Benchmark(OperationsPerInvoke = Documents)]
    public async Task ClientBulkInsert()
    {
        await using var bulk = _store.BulkInsert(_database);
        foreach (var order in _orders)
        {
            await bulk.StoreAsync(order);
        }
    }

    [Benchmark(OperationsPerInvoke = Documents)]
    public async Task RawNdjsonPost()
    {
        // Chunked like the client's stream, so the two differ only in who produces the bytes.
        using var content = new StreamContent(new MemoryStream(_ndjson, writable: false), 64 * 1024);
        content.Headers.ContentType = new("application/x-ndjson");
        using var request = new HttpRequestMessage(HttpMethod.Post, $"{_server.Url}/databases/{_database}/bulk_insert") { Content = content };
        request.Headers.TransferEncodingChunked = true;
        using var response = await _http.SendAsync(request);
        if (!response.IsSuccessStatusCode)
        {
            throw new InvalidOperationException($"bulk_insert answered {(int)response.StatusCode}: {await response.Content.ReadAsStringAsync()}");
        }
    }

    [GlobalCleanup]
    public async Task Cleanup()
    {
        _http.Dispose();
        _store.Dispose();
        await _server.DisposeAsync();
    }
}
