using Jackdaw.Client;
using Jackdaw.Client.Tests.Integration;

/// <summary>
/// Jackdaw through Jackdaw.Client: a session per query (not tracking, as Marten's query session),
/// LINQ that the client writes as <c>from Orders where Company = $p0</c>.
/// </summary>
internal sealed class JackdawSide : IQuerySide, IDisposable
{
    private readonly DocumentStore _store;

    public JackdawSide(string url, string database)
    {
        _store = new DocumentStore { Urls = [url], Database = database };
        _store.Initialize();
    }

    public string Name => "Jackdaw";

    public async Task<int> QueryAsync(string company)
    {
        using var session = _store.OpenAsyncSession();
        var orders = await session.Query<CorpusOrder>(collectionName: "Orders")
            .Customize(x => x.NoTracking())
            .Where(o => o.Company == company)
            .ToListAsync().ConfigureAwait(false);
        return orders.Count;
    }

    public void Dispose() => _store.Dispose();
}
