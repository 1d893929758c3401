using System.Text.Json;
using Jackdaw.Client;
using Jackdaw.Client.Tests.Integration;

/// <summary>
/// Jackdaw through Jackdaw.Client's bulk insert: one <c>BulkInsert</c> per load into a database
/// made for it, every order through <c>StoreAsync</c>, done when <c>DisposeAsync</c> has the
/// server's count (each batch acknowledged only once durable).
/// </summary>
internal sealed class JackdawBulkSide : IBulkSide, IDisposable
{
    private readonly DocumentStore _store;
    private readonly HttpClient _http;
    private string _database = "";

    public JackdawBulkSide(string url)
    {
        _store = new DocumentStore { Urls = [url] };
        _store.Initialize();
        _http = new HttpClient { BaseAddress = new Uri(url) };
    }

    public string Name => "Jackdaw";

    public async Task PrepareAsync(string name)
    {
        _database = name;
        await _store.Maintenance.CreateDatabaseAsync(name).ConfigureAwait(false);
    }

    public async Task InsertAsync(IReadOnlyList<CorpusOrder> orders)
    {
        var bulk = _store.BulkInsert(_database);
        await using (bulk.ConfigureAwait(false))
        {
            foreach (var order in orders)
            {
                await bulk.StoreAsync(order).ConfigureAwait(false);
            }
        }
    }

    public async Task<long> CountAsync()
    {
        // The database's own count (RavenDB's DatabaseStatistics), not the client's echo of it.
        using var stats = JsonDocument.Parse(await _http.GetStringAsync($"/databases/{_database}/stats").ConfigureAwait(false));
        return stats.RootElement.GetProperty("CountOfDocuments").GetInt64();
    }

    public Task DropAsync() => _store.Maintenance.DeleteDatabaseAsync(_database);

    public void Dispose()
    {
        _store.Dispose();
        _http.Dispose();
    }
}
