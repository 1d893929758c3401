using System.Net;
using System.Text;
using BenchmarkDotNet.Attributes;
using BenchmarkDotNet.Configs;
using Jackdaw.Client;
using Jackdaw.Client.Tests.Integration;

namespace Jackdaw.Benchmarks.Client;

/// <summary>
/// The session's own CPU and allocations, without network or server: both sides go through an
/// <see cref="HttpClient"/> whose handler answers from memory with the real server's response
/// bodies for one corpus order. Baseline: the bare HttpClient calls with prebuilt bodies.
/// </summary>
[MemoryDiagnoser]
[GroupBenchmarksBy(BenchmarkLogicalGroupRule.ByCategory)]
[CategoriesColumn]
public class SessionCpuBenchmarks
{
    private DocumentStore _store = null!;
    private HttpClient _http = null!;
    private byte[] _bulkDocsBody = null!;
    private int _counter;

    [GlobalSetup]
    public void Setup()
    {
        var (order, line) = CorpusOrder.ReadCorpusWithLines(DocumentConventions.CreateDefaultSerializerOptions()).First();
        var document = line.Replace("\"@metadata\":{\"@id\":\"orders/1\",\"@collection\":\"Orders\"}", "\"@metadata\":{\"@collection\":\"Orders\",\"Jackdaw-Clr-Type\":\"Jackdaw.Client.Tests.Integration.CorpusOrder, Jackdaw.Benchmarks\",\"@id\":\"orders/1\",\"@change-vector\":\"A:1-abcdefghijklmnopqrstuv\",\"@last-modified\":\"2026-11-23T10:00:00.0000000Z\"}", StringComparison.Ordinal);
        var handler = new CannedHandler(
            Encoding.UTF8.GetBytes($"{{\"Results\":[{document}],\"Includes\":{{}}}}"),
            Encoding.UTF8.GetBytes("{\"Results\":[{\"Type\":\"PUT\",\"Id\":\"orders/1\",\"ChangeVector\":\"A:2-abcdefghijklmnopqrstuv\",\"LastModified\":\"2026-11-23T10:00:01.0000000Z\"}]}"));
        _store = new DocumentStore { Urls = ["http://jackdaw.test"], Database = "db", HttpMessageHandlerFactory = () => handler }.Initialize();
        _http = new HttpClient(handler);
        _bulkDocsBody = Encoding.UTF8.GetBytes($"{{\"Commands\":[{{\"Type\":\"PUT\",\"Id\":\"{order.Id}\",\"Document\":{line},\"ChangeVector\":null}}]}}");
    }

    [Benchmark(Baseline = true)]
    [BenchmarkCategory("Load")]
    public async Task<int> RawGet()
    {
        using var response = await _http.GetAsync("http://jackdaw.test/databases/db/docs?id=orders%2F1");
        return (await response.Content.ReadAsByteArrayAsync()).Length;
    }

    [Benchmark]
    [BenchmarkCategory("Load")]
    public async Task<decimal> SessionLoad()
    {
        using var session = _store.OpenAsyncSession();
        return (await session.LoadAsync<CorpusOrder>("orders/1"))!.Freight;
    }

    [Benchmark(Baseline = true)]
    [BenchmarkCategory("LoadAndSave")]
    public async Task<int> RawGetAndBulkDocs()
    {
        using (var get = await _http.GetAsync("http://jackdaw.test/databases/db/docs?id=orders%2F1"))
        {
            await get.Content.ReadAsByteArrayAsync();
        }
        using var content = new ByteArrayContent(_bulkDocsBody);
        using var post = await _http.PostAsync("http://jackdaw.test/databases/db/bulk_docs", content);
        return (await post.Content.ReadAsByteArrayAsync()).Length;
    }

    [Benchmark]
    [BenchmarkCategory("LoadAndSave")]
    public async Task SessionLoadChangeAndSave()
    {
        using var session = _store.OpenAsyncSession();
        var order = await session.LoadAsync<CorpusOrder>("orders/1");
        order!.Freight = ++_counter;
        await session.SaveChangesAsync();
    }

    [GlobalCleanup]
    public void Cleanup()
    {
        _http.Dispose();
        _store.Dispose();
    }

    private sealed class CannedHandler(byte[] getBody, byte[] bulkDocsBody) : HttpMessageHandler
    {
        protected override async Task<HttpResponseMessage> SendAsync(HttpRequestMessage request, CancellationToken cancellationToken)
        {
            // Read the request body as a server would, so the client's serialization is not skipped.
            if (request.Content is not null)
            {
                await request.Content.CopyToAsync(Stream.Null, cancellationToken);
            }
            var body = request.Method == HttpMethod.Get ? getBody : bulkDocsBody;
            var content = new ByteArrayContent(body);
            content.Headers.ContentType = new("application/json");
            return new HttpResponseMessage(HttpStatusCode.OK) { Content = content };
        }

        // HttpClient disposes its handler; the store and the raw client share this one.
        protected override void Dispose(bool disposing)
        {
        }
    }
}
