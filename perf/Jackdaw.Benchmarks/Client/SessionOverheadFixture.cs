using System.Text;
using System.Text.RegularExpressions;
using Jackdaw.Client;
using Jackdaw.Client.Tests.Integration;

namespace Jackdaw.Benchmarks.Client;

/// <summary>
/// The two sides of the session-overhead comparison, against one server: the order
/// <c>orders/1</c> of the corpus loaded (GET), and loaded, changed and saved (GET + a durable
/// <c>bulk_docs</c> write). Raw sends the same requests through a bare HttpClient with prebuilt
/// bodies and reads the answers as bytes; the session deserializes, tracks, detects the change
/// and serializes. <c>JACKDAW_BENCH_URL</c> points at a server in its own process; without it
/// the server runs in the benchmark process.
/// </summary>
internal sealed class SessionOverheadFixture : IAsyncDisposable
{
    private const string Database = "session";
    private BenchmarkServer? _server;
    private DocumentStore _store = null!;
    private HttpClient _http = null!;
    private string _getUrl = "";
    private string _bulkDocsUrl = "";
    private byte[][] _rawBodies = null!;
    private int _counter;

    public static async Task<SessionOverheadFixture> StartAsync()
    {
        var fixture = new SessionOverheadFixture();
        var url = Environment.GetEnvironmentVariable("JACKDAW_BENCH_URL");
        if (string.IsNullOrEmpty(url))
        {
            fixture._server = await BenchmarkServer.StartAsync();
            url = fixture._server.Url;
        }

        fixture._store = new DocumentStore { Urls = [url], Database = Database }.Initialize();
        await fixture._store.Maintenance.EnsureDatabaseExistsAsync(Database);
        var (order, line) = CorpusOrder.ReadCorpusWithLines(fixture._store.Conventions.SerializerOptions).First();
        using (var session = fixture._store.OpenAsyncSession())
        {
            await session.StoreAsync(order);
            await session.SaveChangesAsync();
        }

        fixture._http = new HttpClient();
        fixture._getUrl = $"{url}/databases/{Database}/docs?id={Uri.EscapeDataString(order.Id!)}";
        fixture._bulkDocsUrl = $"{url}/databases/{Database}/bulk_docs";

        // Two bodies with different Freight, alternated so every save really changes the document.
        fixture._rawBodies = [.. new[] { "1.5", "2.5" }.Select(freight =>
        {
            var document = Regex.Replace(line, "\"Freight\":[0-9.]+", $"\"Freight\":{freight}");
            return Encoding.UTF8.GetBytes($"{{\"Commands\":[{{\"Type\":\"PUT\",\"Id\":\"{order.Id}\",\"Document\":{document},\"ChangeVector\":null}}]}}");
        })];
        return fixture;
    }

    public async Task<int> RawGet()
    {
        using var response = await _http.GetAsync(_getUrl);
        return (await response.EnsureSuccessStatusCode().Content.ReadAsByteArrayAsync()).Length;
    }

    public async Task<decimal> SessionLoad()
    {
        using var session = _store.OpenAsyncSession();
        var order = await session.LoadAsync<CorpusOrder>("orders/1");
        return order!.Freight;
    }

    public async Task<int> RawGetAndBulkDocs()
    {
        using (var get = await _http.GetAsync(_getUrl))
        {
            await get.EnsureSuccessStatusCode().Content.ReadAsByteArrayAsync();
        }
        using var content = new ByteArrayContent(_rawBodies[++_counter & 1]);
        content.Headers.ContentType = new("application/json");
        using var put = await _http.PostAsync(_bulkDocsUrl, content);
        return (await put.EnsureSuccessStatusCode().Content.ReadAsByteArrayAsync()).Length;
    }

    public async Task SessionLoadChangeAndSave()
    {
        using var session = _store.OpenAsyncSession();
        var order = await session.LoadAsync<CorpusOrder>("orders/1");
        order!.Freight = (++_counter & 1) == 0 ? 1.5m : 2.5m;
        await session.SaveChangesAsync();
    }

    public async ValueTask DisposeAsync()
    {
        _http.Dispose();
        _store.Dispose();
        if (_server is not null)
        {
            await _server.DisposeAsync();
        }
    }
}
