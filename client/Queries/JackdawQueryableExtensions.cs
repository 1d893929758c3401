using System.Linq.Expressions;
using System.Runtime.CompilerServices;
using Jackdaw.Client.Queries.Linq;

namespace Jackdaw.Client;

/// <summary>
/// Jackdaw's query operators and the async methods that run a query. The LINQ operators are
/// repeated for <see cref="IJackdawQueryable{T}"/> so that a chain keeps its type and Jackdaw's own
/// operators (<see cref="Search{T}"/>, <see cref="Include{T}(IJackdawQueryable{T}, Expression{Func{T, object}})"/>,
/// <see cref="Customize{T}"/>, <see cref="Statistics{T}"/>) stay available after a Where.
/// </summary>
public static class JackdawQueryableExtensions
{
    public static IJackdawQueryable<T> Where<T>(this IJackdawQueryable<T> source, Expression<Func<T, bool>> predicate) =>
        (IJackdawQueryable<T>)Queryable.Where(source, predicate);

    public static IJackdawQueryable<T> OrderBy<T, TKey>(this IJackdawQueryable<T> source, Expression<Func<T, TKey>> keySelector) =>
        (IJackdawQueryable<T>)Queryable.OrderBy(source, keySelector);

    public static IJackdawQueryable<T> OrderByDescending<T, TKey>(this IJackdawQueryable<T> source, Expression<Func<T, TKey>> keySelector) =>
        (IJackdawQueryable<T>)Queryable.OrderByDescending(source, keySelector);

    public static IJackdawQueryable<T> ThenBy<T, TKey>(this IJackdawQueryable<T> source, Expression<Func<T, TKey>> keySelector) =>
        (IJackdawQueryable<T>)Queryable.ThenBy(source, keySelector);

    public static IJackdawQueryable<T> ThenByDescending<T, TKey>(this IJackdawQueryable<T> source, Expression<Func<T, TKey>> keySelector) =>
        (IJackdawQueryable<T>)Queryable.ThenByDescending(source, keySelector);

    public static IJackdawQueryable<T> Skip<T>(this IJackdawQueryable<T> source, int count) =>
        (IJackdawQueryable<T>)Queryable.Skip(source, count);

    public static IJackdawQueryable<T> Take<T>(this IJackdawQueryable<T> source, int count) =>
        (IJackdawQueryable<T>)Queryable.Take(source, count);

    /// <summary>
    /// A projection: <c>Select(x => new { x.Company, City = x.ShipTo.City })</c> sends
    /// <c>select Company, ShipTo.City as City</c>. Results are read into the projection's type and
    /// not tracked. Members may only copy document fields; the id property is filled from each result's id.
    /// </summary>
    public static IJackdawQueryable<TResult> Select<T, TResult>(this IJackdawQueryable<T> source, Expression<Func<T, TResult>> selector) =>
        (IJackdawQueryable<TResult>)Queryable.Select(source, selector);

    /// <summary>Sets options of this query: <c>.Customize(x => x.WaitForNonStaleResults())</c>.</summary>
    public static IJackdawQueryable<T> Customize<T>(this IJackdawQueryable<T> source, Action<IDocumentQueryCustomization> action)
    {
        ArgumentNullException.ThrowIfNull(source);
        ArgumentNullException.ThrowIfNull(action);
        return QueryMarkers.Append(source, QueryMarkers.CustomizeMethod, action);
    }

    /// <summary><paramref name="stats"/> is filled each time the query runs (total results, staleness, the index that answered).</summary>
    public static IJackdawQueryable<T> Statistics<T>(this IJackdawQueryable<T> source, out QueryStatistics stats)
    {
        ArgumentNullException.ThrowIfNull(source);
        stats = new QueryStatistics();
        return QueryMarkers.Append(source, QueryMarkers.StatisticsMethod, stats);
    }

    /// <summary>
    /// Also returns the documents whose ids the results hold at <paramref name="path"/>
    /// (<c>include Company</c>); the session keeps them, so loading them makes no request.
    /// </summary>
    public static IJackdawQueryable<T> Include<T>(this IJackdawQueryable<T> source, Expression<Func<T, object?>> path)
    {
        ArgumentNullException.ThrowIfNull(source);
        ArgumentNullException.ThrowIfNull(path);
        return QueryMarkers.Append(source, QueryMarkers.IncludeMemberMethod, path);
    }

    /// <summary>Includes by a document path written out: <c>"Company"</c>, <c>"Lines[].Product"</c>.</summary>
    public static IJackdawQueryable<T> Include<T>(this IJackdawQueryable<T> source, string path)
    {
        ArgumentNullException.ThrowIfNull(source);
        ArgumentException.ThrowIfNullOrWhiteSpace(path);
        return QueryMarkers.Append(source, QueryMarkers.IncludePathMethod, path);
    }

    /// <summary>
    /// Full-text search of <paramref name="field"/> for <paramref name="terms"/>
    /// (<c>search(Bio, $p0)</c>; <see cref="SearchOperator.And"/> needs every word). A search joins
    /// the query's conditions with <c>and</c>, except that consecutive searches join each other
    /// with <c>or</c> (either matches), as in RavenDB.
    /// </summary>
    public static IJackdawQueryable<T> Search<T>(this IJackdawQueryable<T> source, Expression<Func<T, object?>> field, string terms, SearchOperator @operator = SearchOperator.Or)
    {
        ArgumentNullException.ThrowIfNull(source);
        ArgumentNullException.ThrowIfNull(field);
        ArgumentNullException.ThrowIfNull(terms);
        return QueryMarkers.Append(source, QueryMarkers.SearchMethod, field, terms, @operator);
    }

    /// <summary>Runs the query; documents are tracked by the session, projections are not.</summary>
    public static Task<List<T>> ToListAsync<T>(this IQueryable<T> source, CancellationToken token = default) =>
        ProviderOf(source).ToListAsync<T>(source.Expression, token);

    public static async Task<T[]> ToArrayAsync<T>(this IQueryable<T> source, CancellationToken token = default) =>
        [.. await ProviderOf(source).ToListAsync<T>(source.Expression, token).ConfigureAwait(false)];

    /// <summary>How many documents match; the server sends the count, not the documents.</summary>
    public static async Task<int> CountAsync<T>(this IQueryable<T> source, CancellationToken token = default) =>
        checked((int)await ProviderOf(source).CountAsync(source.Expression, token).ConfigureAwait(false));

    public static Task<int> CountAsync<T>(this IQueryable<T> source, Expression<Func<T, bool>> predicate, CancellationToken token = default) =>
        Queryable.Where(Checked(source), predicate).CountAsync(token);

    public static Task<long> LongCountAsync<T>(this IQueryable<T> source, CancellationToken token = default) =>
        ProviderOf(source).CountAsync(source.Expression, token);

    public static Task<long> LongCountAsync<T>(this IQueryable<T> source, Expression<Func<T, bool>> predicate, CancellationToken token = default) =>
        Queryable.Where(Checked(source), predicate).LongCountAsync(token);

    public static async Task<bool> AnyAsync<T>(this IQueryable<T> source, CancellationToken token = default) =>
        await ProviderOf(source).CountAsync(source.Expression, token).ConfigureAwait(false) > 0;

    public static Task<bool> AnyAsync<T>(this IQueryable<T> source, Expression<Func<T, bool>> predicate, CancellationToken token = default) =>
        Queryable.Where(Checked(source), predicate).AnyAsync(token);

    /// <summary>The first result; <see cref="InvalidOperationException"/> when there is none.</summary>
    public static async Task<T> FirstAsync<T>(this IQueryable<T> source, CancellationToken token = default) =>
        (await ProviderOf(source).SingleResultAsync<T>(source.Expression, JackdawQueryProvider.SingleResult.First, token).ConfigureAwait(false))!;

    public static Task<T> FirstAsync<T>(this IQueryable<T> source, Expression<Func<T, bool>> predicate, CancellationToken token = default) =>
        Queryable.Where(Checked(source), predicate).FirstAsync(token);

    public static Task<T?> FirstOrDefaultAsync<T>(this IQueryable<T> source, CancellationToken token = default) =>
        ProviderOf(source).SingleResultAsync<T>(source.Expression, JackdawQueryProvider.SingleResult.FirstOrDefault, token);

    public static Task<T?> FirstOrDefaultAsync<T>(this IQueryable<T> source, Expression<Func<T, bool>> predicate, CancellationToken token = default) =>
        Queryable.Where(Checked(source), predicate).FirstOrDefaultAsync(token);

    /// <summary>The only result; <see cref="InvalidOperationException"/> when there is none or more than one.</summary>
    public static async Task<T> SingleAsync<T>(this IQueryable<T> source, CancellationToken token = default) =>
        (await ProviderOf(source).SingleResultAsync<T>(source.Expression, JackdawQueryProvider.SingleResult.Single, token).ConfigureAwait(false))!;

    public static Task<T> SingleAsync<T>(this IQueryable<T> source, Expression<Func<T, bool>> predicate, CancellationToken token = default) =>
        Queryable.Where(Checked(source), predicate).SingleAsync(token);

    public static Task<T?> SingleOrDefaultAsync<T>(this IQueryable<T> source, CancellationToken token = default) =>
        ProviderOf(source).SingleResultAsync<T>(source.Expression, JackdawQueryProvider.SingleResult.SingleOrDefault, token);

    public static Task<T?> SingleOrDefaultAsync<T>(this IQueryable<T> source, Expression<Func<T, bool>> predicate, CancellationToken token = default) =>
        Queryable.Where(Checked(source), predicate).SingleOrDefaultAsync(token);

    /// <summary>
    /// The query, run later: with the session's other lazy operations (lazy loads, other lazy
    /// queries) in one request, when the first of their values is awaited or
    /// <see cref="IEagerSessionOperations.ExecuteAllPendingLazyOperationsAsync"/> runs. Results are
    /// tracked as <see cref="ToListAsync{T}"/> tracks them.
    /// </summary>
    public static Lazy<Task<IEnumerable<T>>> LazilyAsync<T>(this IQueryable<T> source, CancellationToken token = default) =>
        ProviderOf(source).Lazily<T>(source.Expression, token);

    /// <summary>How many documents match (as <see cref="CountAsync{T}(IQueryable{T}, CancellationToken)"/>), run later as <see cref="LazilyAsync{T}"/> is.</summary>
    public static Lazy<Task<int>> CountLazilyAsync<T>(this IQueryable<T> source, CancellationToken token = default) =>
        ProviderOf(source).CountLazily(source.Expression, token);

    private static IQueryable<T> Checked<T>(IQueryable<T> source, [CallerMemberName] string method = "")
    {
        _ = ProviderOf(source, method);
        return source;
    }

    private static JackdawQueryProvider ProviderOf<T>(IQueryable<T> source, [CallerMemberName] string method = "")
    {
        ArgumentNullException.ThrowIfNull(source);
        return source.Provider as JackdawQueryProvider ?? throw new InvalidOperationException(
            $"{method} runs queries made by IAsyncDocumentSession.Query<T>(); this IQueryable comes from {source.Provider.GetType().Name}.");
    }
}
