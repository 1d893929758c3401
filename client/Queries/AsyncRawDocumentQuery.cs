using Jackdaw.Client.Session;

namespace Jackdaw.Client.Queries;

/// <summary>A raw RQL query of one session; its settings accumulate until it runs, and each run is one request.</summary>
internal sealed class AsyncRawDocumentQuery<T>(AsyncDocumentSession session, string query) : IAsyncRawDocumentQuery<T>
{
    private readonly List<KeyValuePair<string, object?>> _parameters = [];
    private readonly QueryCustomization _customization = new();
    private readonly List<QueryStatistics> _statistics = [];

    public IAsyncRawDocumentQuery<T> AddParameter(string name, object? value)
    {
        ArgumentException.ThrowIfNullOrWhiteSpace(name);
        name = name.TrimStart('$');
        if (_parameters.Any(p => p.Key == name))
        {
            throw new ArgumentException($"The parameter ${name} already has a value in this query.", nameof(name));
        }

        _parameters.Add(new(name, value));
        return this;
    }

    public IAsyncRawDocumentQuery<T> WaitForNonStaleResults(TimeSpan? waitTimeout = null)
    {
        _customization.WaitForNonStaleResults(waitTimeout);
        return this;
    }

    public IAsyncRawDocumentQuery<T> NoTracking()
    {
        _customization.NoTracking();
        return this;
    }

    public IAsyncRawDocumentQuery<T> Statistics(out QueryStatistics stats)
    {
        stats = new QueryStatistics();
        _statistics.Add(stats);
        return this;
    }

    public async Task<List<T>> ToListAsync(CancellationToken token = default) => (await RunAsync(token).ConfigureAwait(false)).Results;

    public async Task<int> CountAsync(CancellationToken token = default) =>
        checked((int)(await RunAsync(token).ConfigureAwait(false)).TotalResults);

    public async Task<bool> AnyAsync(CancellationToken token = default) => (await RunAsync(token).ConfigureAwait(false)).TotalResults > 0;

    public async Task<T> FirstAsync(CancellationToken token = default)
    {
        var results = await ToListAsync(token).ConfigureAwait(false);
        return results.Count > 0 ? results[0] : throw new InvalidOperationException($"The query returned no results; FirstAsync expects one. Query: {query}");
    }

    public async Task<T?> FirstOrDefaultAsync(CancellationToken token = default)
    {
        var results = await ToListAsync(token).ConfigureAwait(false);
        return results.Count > 0 ? results[0] : default;
    }

    public async Task<T> SingleAsync(CancellationToken token = default)
    {
        var results = await ToListAsync(token).ConfigureAwait(false);
        return results.Count == 0 ? throw new InvalidOperationException($"The query returned no results; SingleAsync expects one. Query: {query}") : Single(results);
    }

    public async Task<T?> SingleOrDefaultAsync(CancellationToken token = default)
    {
        var results = await ToListAsync(token).ConfigureAwait(false);
        return results.Count == 0 ? default : Single(results);
    }

    private T Single(List<T> results) => results.Count == 1
        ? results[0]
        : throw new InvalidOperationException($"The query returned {results.Count} results; SingleAsync and SingleOrDefaultAsync expect at most one. Query: {query}");

    public Lazy<Task<IEnumerable<T>>> LazilyAsync(CancellationToken token = default) =>
        session.AddLazyOperation(new LazyQueryOperation<T, IEnumerable<T>>(session, Body(), Shape, _statistics, result => result.Results), token);

    public Lazy<Task<int>> CountLazilyAsync(CancellationToken token = default) =>
        session.AddLazyOperation(new LazyQueryOperation<T, int>(session, Body(), Shape, _statistics, result => checked((int)result.TotalResults)), token);

    private QueryResultShape Shape => new(_customization.IsNoTracking ? QueryResultMode.NoTracking : QueryResultMode.Auto);

    /// <summary>The request this query sends as it stands (also what a stream or a lazy form of it sends).</summary>
    internal QueryRequest CreateRequest() => new(query, [.. _parameters], _customization.WaitForNonStale, _customization.WaitTimeout);

    private ReadOnlyMemory<byte> Body() => CreateRequest().ToJson(session.Conventions.SerializerOptions);

    private Task<QueryResult<T>> RunAsync(CancellationToken token) => session.QueryAsync<T>(CreateRequest(), Shape, _statistics, token);
}
