using BenchmarkDotNet.Attributes;
using Jackdaw.Client;
using Jackdaw.Client.Tests.Integration;

namespace Jackdaw.Benchmarks.Client;

/// <summary>
/// Issue 26's lazy-operations target: 10 loads and 2 queries in one session, sent as one
/// <c>multi_get</c> (<see cref="Lazy"/>) against the same 12 requests one after another
/// (<see cref="Sequential"/>, the baseline), through the .NET client on loopback. The database holds
/// the first 1,000 corpus orders (~850 B each); the loads are 10 of them, the queries are the
/// kind a page asks beside its loads: an employee's 5 latest orders (of 7) and a company's orders
/// (3), both answered by auto-indexes built in the setup. Every invocation opens a fresh session, so
/// nothing is answered from the identity map. <c>JACKDAW_BENCH_URL</c> points at a server in its
/// own process; without it the server runs in the benchmark process.
/// </summary>
[MemoryDiagnoser]
public class LazyBatchBenchmarks
{
    private const string Database = "lazy";
    private const int Orders = 1_000;
    private static readonly string[] Ids = [.. Enumerable.Range(0, 10).Select(i => $"orders/{1 + (i * 97)}")];

    private BenchmarkServer? _server;
    private DocumentStore _store = null!;

    [GlobalSetup]
    public async Task Setup()
    {
        var url = Environment.GetEnvironmentVariable("JACKDAW_BENCH_URL");
        if (string.IsNullOrEmpty(url))
        {
            _server = await BenchmarkServer.StartAsync();
            url = _server.Url;
        }

        _store = new DocumentStore { Urls = [url], Database = Database }.Initialize();
        await _store.Maintenance.EnsureDatabaseExistsAsync(Database);
        await using (var bulk = _store.BulkInsert(Database))
        {
            foreach (var order in CorpusOrder.ReadCorpus(_store.Conventions.SerializerOptions).Take(Orders))
            {
                await bulk.StoreAsync(order);
            }
        }

        // The auto-indexes exist and are caught up before anything is timed.
        using var session = _store.OpenAsyncSession();
        await ByEmployee(session).Customize(x => x.WaitForNonStaleResults()).ToListAsync();
        await ByCompany(session).Customize(x => x.WaitForNonStaleResults()).ToListAsync();
        if (await Sequential() != 12 || await Lazy() != 12)
        {
            throw new InvalidOperationException("The benchmark's loads and queries did not find their orders.");
        }
    }

    [Benchmark(Baseline = true)]
    public async Task<int> Sequential()
    {
        using var session = _store.OpenAsyncSession();
        var found = 0;
        foreach (var id in Ids)
        {
            found += await session.LoadAsync<CorpusOrder>(id) is null ? 0 : 1;
        }

        found += (await ByEmployee(session).ToListAsync()).Count == 5 ? 1 : 0;
        found += (await ByCompany(session).ToListAsync()).Count == 3 ? 1 : 0;
        return found;
    }

    [Benchmark]
    public async Task<int> Lazy()
    {
        using var session = _store.OpenAsyncSession();
        var loads = new Lazy<Task<CorpusOrder?>>[Ids.Length];
        for (var i = 0; i < Ids.Length; i++)
        {
            loads[i] = session.Advanced.Lazily.LoadAsync<CorpusOrder>(Ids[i]);
        }

        var byEmployee = ByEmployee(session).LazilyAsync();
        var byCompany = ByCompany(session).LazilyAsync();
        await session.Advanced.Eagerly.ExecuteAllPendingLazyOperationsAsync();

        var found = 0;
        foreach (var load in loads)
        {
            found += await load.Value is null ? 0 : 1;
        }

        found += (await byEmployee.Value).Count() == 5 ? 1 : 0;
        found += (await byCompany.Value).Count() == 3 ? 1 : 0;
        return found;
    }

    [GlobalCleanup]
    public async Task Cleanup()
    {
        _store.Dispose();
        if (_server is not null)
        {
            await _server.DisposeAsync();
        }
    }

    private static IJackdawQueryable<CorpusOrder> ByEmployee(IAsyncDocumentSession session) =>
        session.Query<CorpusOrder>().Where(o => o.Employee == "employees/16").OrderByDescending(o => o.OrderedAt).Take(5);

    private static IJackdawQueryable<CorpusOrder> ByCompany(IAsyncDocumentSession session) =>
        session.Query<CorpusOrder>().Where(o => o.Company == "companies/4921");
}
